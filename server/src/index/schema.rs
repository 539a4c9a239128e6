//! The tantivy schema of the code index: one document per chunk.

use super::tokenizer::{CODE_STEM_TOKENIZER, CODE_TOKENIZER, PROSE_TOKENIZER};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};

/// Bumped when the schema or what goes into it changes; an index with another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 3;

/// The fields of a chunk document.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Path tokenized into parts (searchable).
    pub path: Field,
    /// Exact path (for deletes and grouping).
    pub path_exact: Field,
    pub symbol: Field,
    /// Exact symbol name (for the definition a traceback frame names).
    pub name_exact: Field,
    pub container: Field,
    pub kind: Field,
    pub signature: Field,
    /// Docstring and comments (English analyzer).
    pub doc: Field,
    /// The chunk's own code (code tokenizer), not stored.
    pub code: Field,
    /// The chunk's whole text, stored only.
    pub body: Field,
    pub language: Field,
    pub start_line: Field,
    pub end_line: Field,
    /// xxh3 of the whole file's content when the chunk was indexed.
    pub content_hash: Field,
    /// 1 for test code, else 0 (a fast field: read while scoring).
    pub is_test: Field,
}

/// Builds the schema and its fields.
pub fn build_schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |tokenizer: &str, stored: bool| {
        let idx = TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(IndexRecordOption::WithFreqs);
        let o = TextOptions::default().set_indexing_options(idx);
        if stored {
            o.set_stored()
        } else {
            o
        }
    };
    let fields = Fields {
        path: b.add_text_field("path", text(CODE_TOKENIZER, false)),
        path_exact: b.add_text_field("path_exact", STRING | STORED),
        symbol: b.add_text_field("symbol", text(CODE_STEM_TOKENIZER, true)),
        name_exact: b.add_text_field("name_exact", STRING),
        container: b.add_text_field("container", text(CODE_STEM_TOKENIZER, true)),
        kind: b.add_text_field("kind", STRING | STORED),
        signature: b.add_text_field("signature", text(CODE_TOKENIZER, true)),
        doc: b.add_text_field("doc", text(PROSE_TOKENIZER, false)),
        code: b.add_text_field("code", text(CODE_TOKENIZER, false)),
        body: b.add_text_field("body", STORED),
        language: b.add_text_field("language", STRING | STORED),
        start_line: b.add_u64_field("start_line", STORED | INDEXED),
        end_line: b.add_u64_field("end_line", STORED),
        content_hash: b.add_u64_field("content_hash", STORED | FAST),
        is_test: b.add_u64_field("is_test", STORED | FAST),
    };
    (b.build(), fields)
}
