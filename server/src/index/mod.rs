//! The workspace index: walk, chunking, a tantivy index with a code
//! tokenizer, incremental updates in a background indexer, and the repo map.
//!
//! Architecture invariant: callers on the keystroke path only ever send on a
//! channel ([`WorkspaceIndex::update_buffer`]); parsing, tantivy writes and
//! commits happen on the indexer thread. Nothing here knows LSP types.

pub mod chunk;
mod error;
mod files;
pub mod incremental;
mod indexer;
pub mod repo_map;
mod schema;
mod store;
pub mod tokenizer;
pub mod walk;
mod watch;

pub use chunk::{analyse, Chunk, FileAnalysis, SymbolEntry};
pub use error::IndexError;
pub use files::{FileRecord, FileTable};
pub use incremental::{IndexProgress, IndexSummary, WorkspaceIndex};
pub use repo_map::{RepoGraph, RepoMap, RepoMapFocus};
pub use store::{IndexStore, SearchHit};
