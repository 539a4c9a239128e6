//! The file-state table: path → content hash, mtime, symbols and references.
//! Persisted next to the tantivy index (a JSON sidecar, written atomically after
//! each commit) so a warm start reindexes only changed files and the repo map
//! needs no index scan.

use super::chunk::{FileAnalysis, SymbolEntry};
use super::IndexError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What the index knows about one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    /// xxh3 of the content that was indexed.
    pub hash: u64,
    /// mtime (ns) and size on disk when indexed from disk (0 for an open buffer).
    pub mtime_ns: u64,
    pub size: u64,
    pub language: String,
    pub lines: usize,
    pub symbols: Vec<SymbolEntry>,
    /// Distinct referenced names (calls, types, imports), for the reference graph.
    pub references: Vec<String>,
    /// Number of chunks indexed.
    pub chunks: usize,
}

impl FileRecord {
    /// The record of an analysed file.
    pub fn new(a: &FileAnalysis, hash: u64, mtime_ns: u64, size: u64) -> Self {
        let mut references: Vec<String> = a.references.iter().map(|r| r.name.clone()).collect();
        references.sort();
        references.dedup();
        Self {
            hash,
            mtime_ns,
            size,
            language: a.language.clone(),
            lines: a.lines,
            symbols: a.symbols.clone(),
            references,
            chunks: a.chunks.len(),
        }
    }
}

/// All indexed files, by `/`-separated relative path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileTable {
    pub schema_version: u32,
    pub files: BTreeMap<String, FileRecord>,
}

const FILE_NAME: &str = "files.json";
/// Present while the index holds commits the saved table does not describe.
const UNSAVED_MARKER: &str = "files.unsaved";

impl FileTable {
    /// Loads the table in `dir`; a missing or unreadable table is empty (everything reindexes).
    pub fn load(dir: &Path) -> Self {
        let path = dir.join(FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!("index file table {} unreadable ({e}); reindexing everything", path.display());
                Self::default()
            }),
            Err(_) => Self::default(),
        }
    }

    /// Whether the last run ended with index commits the table does not describe (then the table is not trusted).
    pub fn has_unsaved_marker(dir: &Path) -> bool {
        dir.join(UNSAVED_MARKER).exists()
    }

    /// Marks the table as behind the index (before committing without saving).
    pub fn set_unsaved_marker(dir: &Path) -> Result<(), IndexError> {
        let path = dir.join(UNSAVED_MARKER);
        if path.exists() {
            return Ok(());
        }
        std::fs::write(&path, b"").map_err(|source| IndexError::Io { path, source })
    }

    /// The table on disk describes the index again.
    pub fn clear_unsaved_marker(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(UNSAVED_MARKER));
    }

    /// Writes the table atomically (temp file + rename).
    pub fn save(&self, dir: &Path) -> Result<(), IndexError> {
        let path = dir.join(FILE_NAME);
        let tmp = dir.join(format!("{FILE_NAME}.tmp"));
        let bytes = serde_json::to_vec(self).map_err(|e| IndexError::Io { path: path.clone(), source: e.into() })?;
        std::fs::write(&tmp, bytes).map_err(|source| IndexError::Io { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, &path).map_err(|source| IndexError::Io { path, source })
    }
}
