//! The tantivy store: one long-lived writer, manual reader reloads after each
//! commit, BM25 search with field boosts over the code tokenizer's terms.

use super::chunk::FileAnalysis;
use super::schema::{build_schema, Fields};
use super::tokenizer::{terms, CodeTokenizer, CODE_TOKENIZER};
use super::IndexError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{doc, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// Field boosts: a match in the name counts most, the body least.
const BOOSTS: [(&str, f32); 6] =
    [("symbol", 6.0), ("signature", 3.0), ("container", 2.0), ("doc", 2.0), ("path", 1.5), ("body", 1.0)];
/// Most distinct query terms used (long diagnostics carry noise).
const MAX_QUERY_TERMS: usize = 64;

/// One search result: a chunk of a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub path: String,
    pub symbol: String,
    pub container: String,
    pub kind: String,
    pub signature: String,
    pub language: String,
    /// 1-based inclusive lines.
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    /// The chunk's text.
    #[serde(skip)]
    pub body: String,
}

/// The persisted tantivy index of one workspace.
pub struct IndexStore {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    writer: RwLock<IndexWriter>,
    fields: Fields,
}

impl std::fmt::Debug for IndexStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexStore").field("dir", &self.dir).finish()
    }
}

impl IndexStore {
    /// Opens (or creates) the index in `dir`; an index with another schema is rebuilt empty.
    pub fn open(dir: &Path, writer_memory_mb: u64) -> Result<Self, IndexError> {
        let err = |source| IndexError::Tantivy { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })?;
        let (schema, fields) = build_schema();
        let open = || -> Result<Index, tantivy::TantivyError> {
            let mmap = MmapDirectory::open(dir).map_err(|e| tantivy::TantivyError::SystemError(e.to_string()))?;
            Index::open_or_create(mmap, schema.clone())
        };
        let index = match open() {
            Ok(i) => i,
            Err(e) => {
                // The index is a cache: a schema change or corruption means rebuild, never fail.
                tracing::warn!("index at {} unusable ({e}); rebuilding", dir.display());
                let _ = std::fs::remove_dir_all(dir);
                std::fs::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })?;
                open().map_err(err)?
            }
        };
        index.tokenizers().register(CODE_TOKENIZER, CodeTokenizer);
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(err)?;
        let writer = index.writer(writer_memory_mb as usize * 1_000_000).map_err(err)?;
        Ok(Self { dir: dir.to_path_buf(), index, reader, writer: RwLock::new(writer), fields })
    }

    /// The index folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn err(&self, source: tantivy::TantivyError) -> IndexError {
        IndexError::Tantivy { dir: self.dir.clone(), source }
    }

    /// Replaces every chunk of `rel` by those of `analysis` (visible after [`commit`](Self::commit)).
    pub fn replace_file(&self, rel: &str, analysis: &FileAnalysis, hash: u64) -> Result<(), IndexError> {
        let f = self.fields;
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_term(Term::from_field_text(f.path_exact, rel));
        for c in &analysis.chunks {
            writer
                .add_document(doc!(
                    f.path => rel,
                    f.path_exact => rel,
                    f.symbol => c.symbol.as_str(),
                    f.container => c.container.as_str(),
                    f.kind => c.kind.as_str(),
                    f.signature => c.signature.as_str(),
                    f.doc => c.doc.as_str(),
                    f.body => c.body.as_str(),
                    f.language => analysis.language.as_str(),
                    f.start_line => c.start_line as u64,
                    f.end_line => c.end_line as u64,
                    f.content_hash => hash,
                ))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Removes every chunk of `rel`.
    pub fn delete_file(&self, rel: &str) -> Result<(), IndexError> {
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_term(Term::from_field_text(self.fields.path_exact, rel));
        Ok(())
    }

    /// Commits pending changes and reloads the reader so searches see them.
    pub fn commit(&self) -> Result<(), IndexError> {
        let mut writer = self.writer.write().map_err(|_| IndexError::Stopped)?;
        writer.commit().map_err(|e| self.err(e))?;
        drop(writer);
        self.reader.reload().map_err(|e| self.err(e))
    }

    /// Removes everything (used when the file table is lost, so no orphan chunk survives).
    pub fn clear(&self) -> Result<(), IndexError> {
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_all_documents().map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Number of chunk documents visible to searches.
    pub fn num_chunks(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Chunks of `rel` visible to searches (for tests and diagnostics).
    pub fn chunks_of(&self, rel: &str) -> Result<usize, IndexError> {
        let q = TermQuery::new(Term::from_field_text(self.fields.path_exact, rel), IndexRecordOption::Basic);
        self.reader.searcher().search(&q, &tantivy::collector::Count).map_err(|e| self.err(e))
    }

    /// The best chunks for `query` (free text: a diagnostic, an instruction, identifiers).
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError> {
        let mut seen = std::collections::HashSet::new();
        let words: Vec<String> =
            terms(query).into_iter().filter(|t| seen.insert(t.clone())).take(MAX_QUERY_TERMS).collect();
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let schema = self.index.schema();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (name, boost) in BOOSTS {
            let Ok(field) = schema.get_field(name) else {
                continue;
            };
            for w in &words {
                let tq = TermQuery::new(Term::from_field_text(field, w), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(tq), boost))));
            }
        }
        let searcher = self.reader.searcher();
        let top = searcher.search(&BooleanQuery::new(clauses), &TopDocs::with_limit(limit)).map_err(|e| self.err(e))?;
        let f = self.fields;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr).map_err(|e| self.err(e))?;
            let s = |field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
            let n = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or_default() as usize;
            hits.push(SearchHit {
                path: s(f.path_exact),
                symbol: s(f.symbol),
                container: s(f.container),
                kind: s(f.kind),
                signature: s(f.signature),
                language: s(f.language),
                start_line: n(f.start_line),
                end_line: n(f.end_line),
                score,
                body: s(f.body),
            });
        }
        Ok(hits)
    }
}
