//! `[undo]`: the history of applied patches and the opt-in commit of a patch.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[undo]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UndoConfig {
    /// Undo points kept per workspace, newest first; older ones are dropped.
    pub max_points: u32,
    /// Longest first line of a commit message tinycoder writes, in characters.
    pub commit_subject_chars: u32,
}

impl UndoConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.max_points == 0 {
            return Err(Invalid::new("undo.max_points", 0, "at least 1 (the last patch must stay undoable)"));
        }
        if self.commit_subject_chars == 0 {
            return Err(Invalid::new("undo.commit_subject_chars", 0, "a positive number of characters"));
        }
        Ok(())
    }
}
