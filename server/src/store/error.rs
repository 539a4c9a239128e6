//! Errors of the store, each saying what the user can do about it.

use std::path::PathBuf;

/// A failed store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or created.
    #[error("cannot open the store at {path}: {source} — check that the file and its folder are readable and writable, or point store.dir (or TINYCODER_DATA_DIR) at a writable folder")]
    Open { path: PathBuf, source: rusqlite::Error },
    /// The file is not an SQLite database (overwritten, truncated or encrypted).
    #[error("cannot open the store at {path}: the file is not a tinycoder database (overwritten or damaged) — move it away or delete it and tinycoder creates a new, empty one (the tasks, chats, memory and permission decisions in it are lost); tinycoder never deletes it itself")]
    NotADatabase { path: PathBuf },
    /// The disk (or the database's size limit) is full; the transaction was rolled back.
    #[error("the store at {path} is full (no space left on the disk or its size limit reached); nothing was written by this operation — free some disk space and retry")]
    Full { path: PathBuf },
    /// `PRAGMA integrity_check` failed after an unclean shutdown, or SQLite found damage.
    #[error("the store at {path} is damaged ({details}) — move it away or delete it and tinycoder creates a new, empty one (the tasks, chats, memory and permission decisions in it are lost); tinycoder never deletes it itself")]
    Corrupt { path: PathBuf, details: String },
    /// The database was written by a newer tinycoder.
    #[error(
        "the store at {path} has schema version {found}, newer than this tinycoder knows ({known}) — upgrade tinycoder"
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },
    /// Another SQLite failure.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored value did not decode (e.g. JSON written by a bug or edited by hand).
    #[error("stored {what} is invalid: {details}")]
    InvalidData { what: String, details: String },
    /// The thing asked for does not exist.
    #[error("{what} not found")]
    NotFound { what: String },
    /// The operation is not allowed in the current state.
    #[error("{0}")]
    Conflict(String),
    /// The store's thread is gone (the store was closed).
    #[error("the store is closed")]
    Closed,
    /// Creating the data directory failed.
    #[error("cannot create the data directory {path} ({source}) — tinycoder keeps each workspace's tasks, chats and memory there: point TINYCODER_DATA_DIR (or store.dir) at a writable folder")]
    Dir { path: PathBuf, source: std::io::Error },
}

impl StoreError {
    /// What to do about an error of the database file itself (for reports that
    /// show the problem and the fix apart, like `tinycoder doctor`).
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            Self::NotADatabase { .. } | Self::Corrupt { .. } => {
                Some("move the file away or delete it; tinycoder creates a new, empty store")
            }
            Self::TooNew { .. } => Some("upgrade tinycoder"),
            Self::Full { .. } => Some("free some disk space"),
            Self::Open { .. } | Self::Dir { .. } => {
                Some("point store.dir or TINYCODER_DATA_DIR at a readable, writable folder")
            }
            _ => None,
        }
    }

    /// The error as it concerns the database file at `path`: "not a database" and
    /// "damaged" name the file and the fix; other errors are left as they are.
    pub(crate) fn about_file(self, path: &std::path::Path) -> Self {
        let code = match &self {
            Self::Sqlite(e) | Self::Open { source: e, .. } => e.sqlite_error_code(),
            _ => None,
        };
        match code {
            Some(rusqlite::ErrorCode::NotADatabase) => Self::NotADatabase { path: path.to_path_buf() },
            Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
                Self::Corrupt { path: path.to_path_buf(), details: self.to_string() }
            }
            Some(rusqlite::ErrorCode::DiskFull) => Self::Full { path: path.to_path_buf() },
            _ => self,
        }
    }

    /// A JSON (de)serialization failure of `what`.
    pub(crate) fn json(what: &str, e: serde_json::Error) -> Self {
        Self::InvalidData { what: what.into(), details: e.to_string() }
    }

    /// True for "disk or database full".
    pub fn is_full(&self) -> bool {
        match self {
            Self::Full { .. } => true,
            Self::Sqlite(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            _ => false,
        }
    }
}
