//! The per-workspace SQLite store (WAL, versioned migrations): tasks and
//! checkpoints, the event log and its bus, chat sessions, permission
//! decisions, and the tables long-term memory (`crate::memory`) persists in.
//!
//! Architecture Invariant: every SQLite call runs on the store's own thread
//! (see [`Store`]); async code only awaits a oneshot, so nothing here ever
//! blocks the LSP loop. The event log is the source of truth: an event is
//! committed before any subscriber sees it.

mod bus;
mod db;
mod error;
mod events;
mod permissions;
mod replay;
mod resume;
pub mod runner;
mod sessions;
mod summarizer;
mod tasks;

pub use bus::{EventBus, IdempotentSubscriber, NewEvent};
pub use db::{schema_version, Store, StoreSettings, Synchronous, DB_FILE_NAME};
pub use error::StoreError;
pub use permissions::PermissionStore;
pub use replay::{next_status, replay, replay_state, TaskState};
pub use resume::{ResumeOutcome, ResumePolicy, UnfinishedTask};
pub use sessions::{Session, SessionStore, Turn};
pub use summarizer::{SessionSummarizer, SummarizeError, SummaryBudget, SummaryOutcome};
pub use tasks::{CheckpointDraft, NewTask, RetentionPolicy, TaskRecord};

/// Opens the store of a workspace with the settings of `config` (the database
/// file lives in `WorkspacePaths::data_dir`).
pub fn open_workspace(root: &std::path::Path, config: &crate::config::Config) -> Result<Store, StoreError> {
    let paths = crate::paths::WorkspacePaths::new(root, &config.store.dir);
    Store::open(&paths.data_dir.join(db::DB_FILE_NAME), StoreSettings::from_config(&config.store))
}
