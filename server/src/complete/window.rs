//! The prefix and suffix around the cursor, cut within character budgets.

use ropey::Rope;

/// The text the model sees: `prefix` ends at the cursor, `suffix` starts there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FimWindow {
    pub prefix: String,
    pub suffix: String,
}

impl FimWindow {
    /// The window around char index `cursor` of `rope` (clamped to its end): at most
    /// `max_prefix` chars before it and `max_suffix` after. A prefix that had to be cut
    /// starts after the first line break it holds, and a cut suffix ends after the last
    /// one, so the model never sees half a line at the edges (unless a line is longer
    /// than the budget). Cuts fall on char boundaries, never inside a UTF-8 sequence.
    pub fn around(rope: &Rope, cursor: usize, max_prefix: usize, max_suffix: usize) -> Self {
        let len = rope.len_chars();
        let cursor = cursor.min(len);
        let start = cursor.saturating_sub(max_prefix);
        let mut prefix = rope.slice(start..cursor).to_string();
        if start > 0 {
            // Not when the break ends the prefix: the model would see nothing at all.
            if let Some(i) = prefix.find('\n').filter(|i| i + 1 < prefix.len()) {
                prefix.drain(..=i);
            }
        }
        let end = (cursor + max_suffix).min(len);
        let mut suffix = rope.slice(cursor..end).to_string();
        if end < len {
            if let Some(i) = suffix.rfind('\n') {
                suffix.truncate(i + 1);
            }
        }
        Self { prefix, suffix }
    }

    /// The text of the cursor's line before the cursor.
    pub fn line_before_cursor(&self) -> &str {
        line_tail(&self.prefix)
    }
}

/// The part of `text` after its last line break.
pub fn line_tail(text: &str) -> &str {
    text.rfind('\n').map(|i| &text[i + 1..]).unwrap_or(text)
}
