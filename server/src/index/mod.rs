//! The workspace index: walk, chunking, a tantivy index with a code
//! tokenizer, incremental updates in a background indexer, and the repo map.
//!
//! Architecture invariant: callers on the keystroke path only ever send on a
//! channel ([`WorkspaceIndex::update_buffer`]); parsing, tantivy writes and
//! commits happen on the indexer thread. Nothing here knows LSP types.

pub mod chunk;
mod chunk_text;
mod error;
mod files;
pub mod incremental;
mod indexer;
pub mod query;
pub mod ranking;
pub mod repo_map;
mod schema;
mod search;
mod store;
pub mod tokenizer;
pub mod walk;
mod watch;

pub use chunk::{analyse, Chunk, FileAnalysis, SymbolEntry};
pub use error::IndexError;
pub use files::{FileRecord, FileTable};
pub use incremental::{IndexProgress, IndexSummary, WorkspaceIndex};
pub use query::{parse_query, Location, ParsedQuery, Role};
pub use ranking::{Ranking, SearchField};
pub use repo_map::{RepoGraph, RepoMap, RepoMapFocus, RepoMapSettings};
pub use search::resolve_path;
pub use store::{Anchor, IndexStore, SearchHit, SearchPlan};
