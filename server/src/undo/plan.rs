//! What undoing a point does to each file, decided before anything is written:
//! a file still holding the patch's bytes is restored (or deleted, when the
//! patch created it); a file already back at its old bytes is left alone (an
//! undo that was interrupted, or a file the user reverted); any other content
//! means the user changed it since, and the whole undo is refused.

use super::{UndoError, UndoPoint};
use serde::Serialize;

/// What undo does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UndoAction {
    /// Write the bytes the file had before the patch.
    Restore,
    /// Delete the file: the patch created it.
    Delete,
    /// Nothing: the file already holds its bytes from before the patch.
    AlreadyRestored,
}

impl UndoAction {
    /// The word shown to the user.
    pub fn verb(self) -> &'static str {
        match self {
            Self::Restore => "restore",
            Self::Delete => "delete",
            Self::AlreadyRestored => "already restored",
        }
    }
}

/// One file of an undo and what happens to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileUndo {
    /// Workspace-relative path.
    pub path: String,
    /// What happens to it.
    pub action: UndoAction,
}

/// The undo of `point`, given each file's content as the user sees it now
/// (`current(path)`: its bytes, or `None` when it does not exist). Refuses, naming
/// the first file, when a file holds neither the patch's bytes nor the old ones.
pub fn plan_undo(
    point: &UndoPoint,
    mut current: impl FnMut(&str) -> Result<Option<Vec<u8>>, UndoError>,
) -> Result<Vec<FileUndo>, UndoError> {
    let mut plan = Vec::new();
    for f in &point.files {
        let now = current(&f.path)?;
        let action = match (&now, &f.before) {
            (Some(bytes), Some(_)) if *bytes == f.after => UndoAction::Restore,
            (Some(bytes), None) if *bytes == f.after => UndoAction::Delete,
            (now, before) if now == before => UndoAction::AlreadyRestored,
            (now, _) => {
                return Err(UndoError::ChangedSinceApplied {
                    path: f.path.clone(),
                    how: if now.is_none() { "was deleted" } else { "changed" },
                    summary: point.summary.clone(),
                })
            }
        };
        plan.push(FileUndo { path: f.path.clone(), action });
    }
    Ok(plan)
}
