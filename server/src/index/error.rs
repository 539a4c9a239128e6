//! Errors of the index layer.

use std::path::PathBuf;

/// Something the index could not do, with what the user can act on.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the index at {dir} cannot be used: {source} (it is a cache: delete the folder to rebuild it)")]
    Tantivy { dir: PathBuf, source: tantivy::TantivyError },
    #[error("cannot access {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "every copy of this workspace's index is in use by another tinycoder ({copies} copies, the first at {dir}): \
         close another editor window or command on this folder, or raise index.max_copies"
    )]
    InUse { dir: PathBuf, copies: usize },
    #[error("the indexer has stopped (it failed earlier; see the log)")]
    Stopped,
    #[error("indexing was cancelled")]
    Cancelled,
    #[error("the built-in configuration does not load: {0}")]
    Config(String),
}
