//! `[completion]`: inline completion (fill-in-the-middle ghost text) in the editor.

use super::{Invalid, ModelRole};
use serde::{Deserialize, Serialize};

/// How much a suggestion may span.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CompletionStop {
    /// Always the rest of one line.
    Line,
    /// Several lines, up to the first blank line.
    Block,
    /// One line when the cursor's line already has text before the cursor, else a block.
    Auto,
}

/// `[completion]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CompletionConfig {
    /// Answer `textDocument/inlineCompletion` at all.
    pub enabled: bool,
    /// Milliseconds to wait before asking the model; a newer request for the same document in that time wins.
    pub debounce_ms: u64,
    /// Characters of text before the cursor sent to the model (cut at a line start where one is near).
    pub max_prefix_chars: u32,
    /// Characters of text after the cursor sent to the model.
    pub max_suffix_chars: u32,
    /// Cap on the tokens of one suggestion.
    pub max_tokens: u32,
    /// Milliseconds one suggestion may take in all (waiting for the model included).
    pub timeout_ms: u64,
    /// How much a suggestion may span: "line", "block" or "auto".
    pub stop: CompletionStop,
    /// Recent suggestions kept in memory, so typing through one needs no model call (0: none).
    pub cache_entries: u32,
    /// Whether `textDocument/completion` also offers the suggestion, to clients without inline completion.
    pub items: bool,
    /// The role whose model completes (the coder's by default, so one model stays loaded).
    pub role: ModelRole,
}

impl CompletionConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.max_prefix_chars == 0 {
            return Err(Invalid::new("completion.max_prefix_chars", 0, "a positive number of characters"));
        }
        if self.max_tokens == 0 {
            return Err(Invalid::new("completion.max_tokens", 0, "a positive number of tokens"));
        }
        if self.timeout_ms == 0 {
            return Err(Invalid::new("completion.timeout_ms", 0, "a positive number of milliseconds"));
        }
        if self.debounce_ms >= self.timeout_ms {
            return Err(Invalid::new(
                "completion.debounce_ms",
                self.debounce_ms,
                "fewer milliseconds than completion.timeout_ms",
            ));
        }
        Ok(())
    }
}
