//! `[acp]`: the Agent Client Protocol adapter (`tinycoder acp`).

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[acp]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcpConfig {
    /// A prompt that starts with one of these (or ends with "?") is a question.
    pub question_words: Vec<String>,
    /// A prompt with one of these words runs a fix.
    pub fix_words: Vec<String>,
    /// A prompt with one of these words that names a file runs an edit.
    pub edit_words: Vec<String>,
    /// Milliseconds to wait for `fs/read_text_file` before reading the disk.
    pub read_timeout_ms: u64,
    /// Hand back the best failing attempt when none passes.
    pub best_attempt: bool,
    /// Run the tests again after the patch is written.
    pub rerun_tests_after_write: bool,
}

impl AcpConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        for (key, words) in [
            ("acp.question_words", &self.question_words),
            ("acp.fix_words", &self.fix_words),
            ("acp.edit_words", &self.edit_words),
        ] {
            if let Some(w) = words.iter().find(|w| w.trim().is_empty() || w.contains(char::is_whitespace)) {
                return Err(Invalid::new(key, format!("{w:?}"), "single words without spaces"));
            }
        }
        if self.read_timeout_ms == 0 {
            return Err(Invalid::new("acp.read_timeout_ms", 0, "a positive number of milliseconds"));
        }
        Ok(())
    }
}
