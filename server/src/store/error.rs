//! Errors of the store, each saying what the user can do about it.

use std::path::PathBuf;

/// A failed store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or created.
    #[error("cannot open the tinycoder database {path}: {source} (check the directory exists and is writable, or set store.dir)")]
    Open { path: PathBuf, source: rusqlite::Error },
    /// The disk (or the database's size limit) is full; the transaction was rolled back.
    #[error("the tinycoder database {path} is full (no space left on the disk or its size limit reached); nothing was written by this operation — free some disk space and retry")]
    Full { path: PathBuf },
    /// `PRAGMA integrity_check` failed after an unclean shutdown.
    #[error("the tinycoder database {path} is damaged ({details}); move it aside to start afresh (memory and history in it would be lost)")]
    Corrupt { path: PathBuf, details: String },
    /// The database was written by a newer tinycoder.
    #[error("the tinycoder database {path} has schema version {found}, newer than this tinycoder knows ({known}); upgrade tinycoder")]
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
    #[error("cannot create the data directory {path}: {source}")]
    Dir { path: PathBuf, source: std::io::Error },
}

impl StoreError {
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
