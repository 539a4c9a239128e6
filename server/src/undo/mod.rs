//! Patches applied to the user's files: writing them atomically, the undo
//! history, and the opt-in git commit of a patch's files.
//!
//! Every applied patch becomes an [`UndoPoint`]: each file's exact bytes before
//! and after (a file the patch created is recorded as absent before). Points
//! live as plain files in the workspace's data directory (`undo/<sequence>/`),
//! so undo works without git and without the SQLite store. Start at
//! [`apply_patch`] (the CLI's write), then [`plan_undo`] and [`restore`].
//!
//! Nothing here knows LSP or the CLI: the language server records a point once
//! the editor applied an edit ([`UndoHistory::record`]) and sends the restore
//! as a workspace edit; the CLI writes through [`apply_patch`] and [`restore`].

mod files;
mod git;
mod history;
mod plan;

pub use files::{apply_patch, read_current, restore, write_patch};
pub use git::{commit, commit_message, diff_against_head, Commit, GitError};
pub use history::UndoHistory;
pub use plan::{plan_undo, FileUndo, UndoAction};

use std::path::PathBuf;

/// One file of an applied patch: its exact bytes before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSnapshot {
    /// Workspace-relative path, `/`-separated.
    pub path: String,
    /// The bytes before the patch; `None` when the patch created the file.
    pub before: Option<Vec<u8>>,
    /// The bytes the patch wrote.
    pub after: Vec<u8>,
}

/// An applied patch that can be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPoint {
    /// The point's name in the history (its sequence number); empty until recorded.
    pub id: String,
    /// When the patch was applied, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The task's one-line summary (also the commit message's first line).
    pub summary: String,
    /// The task that made the patch, when there was one.
    pub task_id: Option<String>,
    /// Every file of the patch.
    pub files: Vec<FileSnapshot>,
}

impl UndoPoint {
    /// A point for `files`, stamped now.
    pub fn new(summary: &str, task_id: Option<&str>, files: Vec<FileSnapshot>) -> Self {
        let created_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Self {
            id: String::new(),
            created_unix_ms,
            summary: summary.to_string(),
            task_id: task_id.map(str::to_string),
            files,
        }
    }

    /// The patch's paths, in order.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }
}

/// What the task that made a patch says about it.
#[derive(Debug, Clone, Default)]
pub struct PatchInfo {
    /// The task's one-line summary.
    pub summary: String,
    /// The task's id.
    pub task_id: Option<String>,
}

/// Why a patch could not be written or undone. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// A file no longer holds the text the patch was made from.
    #[error("{path} changed since tinycoder read it, so nothing was written; run the task again on the new text")]
    ChangedBeforeWrite { path: String },
    /// A file holds neither the patch's bytes nor its old bytes.
    #[error(
        "{path} {how} since tinycoder applied the patch ({summary}), so nothing was restored; \
         undo your own changes to {path} first, or restore the file by hand (e.g. with git)"
    )]
    ChangedSinceApplied { path: String, how: &'static str, summary: String },
    /// A path leaves the workspace (`..`, absolute).
    #[error("`{path}` is not a path inside the workspace; tinycoder writes and restores only files inside it")]
    OutsideWorkspace { path: String },
    /// A path that would be written through a symbolic link out of the workspace.
    #[error(transparent)]
    ThroughLink(#[from] crate::paths::OutsideWorkspace),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// A file could not be written or deleted.
    #[error("cannot write {path}: {source}; check the folder's permissions and free space")]
    Write { path: PathBuf, source: std::io::Error },
    /// The history folder could not be written.
    #[error(
        "cannot keep the undo history in {dir}: {source}; make the data directory writable \
         (TINYCODER_DATA_DIR or store.dir)"
    )]
    History { dir: PathBuf, source: std::io::Error },
    /// A stored point is incomplete or unreadable.
    #[error("the undo point {dir} is damaged ({why}); move it away or delete it, then undo again")]
    Damaged { dir: PathBuf, why: String },
}

/// A workspace-relative path that stays inside the workspace (no `..`, not absolute).
fn inside(rel: &str) -> bool {
    let p = std::path::Path::new(rel);
    !rel.is_empty()
        && p.components().all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir))
}

#[cfg(test)]
mod tests;
