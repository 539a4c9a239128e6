//! The tantivy schema of the code index: one document per chunk.

use super::tokenizer::CODE_TOKENIZER;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};

/// Bumped when the schema changes; an index with another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 1;

/// The fields of a chunk document.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Path tokenized into parts (searchable).
    pub path: Field,
    /// Exact path (for deletes and grouping).
    pub path_exact: Field,
    pub symbol: Field,
    pub container: Field,
    pub kind: Field,
    pub signature: Field,
    pub doc: Field,
    pub body: Field,
    pub language: Field,
    pub start_line: Field,
    pub end_line: Field,
    /// xxh3 of the whole file's content when the chunk was indexed.
    pub content_hash: Field,
}

/// Builds the schema and its fields.
pub fn build_schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let code = |stored: bool| {
        let idx =
            TextFieldIndexing::default().set_tokenizer(CODE_TOKENIZER).set_index_option(IndexRecordOption::WithFreqs);
        let o = TextOptions::default().set_indexing_options(idx);
        if stored {
            o.set_stored()
        } else {
            o
        }
    };
    let fields = Fields {
        path: b.add_text_field("path", code(false)),
        path_exact: b.add_text_field("path_exact", STRING | STORED),
        symbol: b.add_text_field("symbol", code(true)),
        container: b.add_text_field("container", code(true)),
        kind: b.add_text_field("kind", STRING | STORED),
        signature: b.add_text_field("signature", code(true)),
        doc: b.add_text_field("doc", code(true)),
        body: b.add_text_field("body", code(true)),
        language: b.add_text_field("language", STRING | STORED),
        start_line: b.add_u64_field("start_line", STORED | INDEXED),
        end_line: b.add_u64_field("end_line", STORED),
        content_hash: b.add_u64_field("content_hash", STORED | FAST),
    };
    (b.build(), fields)
}
