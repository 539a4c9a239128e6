//! Stop rules: how much of the model's reply becomes the suggestion.

use super::window::line_tail;
use crate::config::CompletionStop;

/// How much one suggestion may span, once `auto` is decided for a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// The rest of the cursor's line.
    Line,
    /// Several lines, up to the first blank line.
    Block,
}

impl StopMode {
    /// The mode for a cursor after `prefix`: `auto` is a line when the cursor's line has
    /// text before the cursor (a half-typed line), else a block.
    pub fn at(setting: CompletionStop, prefix: &str) -> Self {
        match setting {
            CompletionStop::Line => Self::Line,
            CompletionStop::Block => Self::Block,
            CompletionStop::Auto if line_tail(prefix).trim().is_empty() => Self::Block,
            CompletionStop::Auto => Self::Line,
        }
    }
}

/// The stop strings the server is asked to end generation at.
pub fn stop_strings(mode: StopMode) -> Vec<String> {
    match mode {
        StopMode::Line => vec!["\n".into()],
        StopMode::Block => vec!["\n\n".into()],
    }
}

/// The suggestion made of `raw`: cut by `mode` (again: not every server honours stop
/// strings), trailing whitespace dropped, the end that repeats the start of `suffix`
/// dropped; `None` when nothing but whitespace is left. On a line that holds only
/// indentation before the cursor (`line_before`), a reply that starts with that same
/// indentation loses it: small models often write the line's indentation again.
pub fn finish_suggestion(raw: &str, mode: StopMode, line_before: &str, suffix: &str) -> Option<String> {
    let raw = match line_before.trim().is_empty() && !line_before.is_empty() {
        true => raw.strip_prefix(line_before).unwrap_or(raw),
        false => raw,
    };
    let cut = match mode {
        StopMode::Line => raw.split('\n').next().unwrap_or(""),
        StopMode::Block => raw.split("\n\n").next().unwrap_or(""),
    };
    let mut text = cut.trim_end().to_string();
    // A line suggestion can only repeat the rest of its own line.
    let suffix = match mode {
        StopMode::Line => suffix.split('\n').next().unwrap_or(""),
        StopMode::Block => suffix,
    };
    let overlap = suffix_overlap(&text, suffix);
    text.truncate(text.len() - overlap);
    let text = text.trim_end();
    if text.trim().is_empty() {
        None
    } else {
        Some(text.to_string())
    }
}

/// Bytes at the end of `text` that repeat the start of `suffix` (ignoring the suffix's
/// leading spaces and tabs): the longest such overlap, on char boundaries.
fn suffix_overlap(text: &str, suffix: &str) -> usize {
    let suffix = suffix.trim_start_matches([' ', '\t']);
    let mut best = 0;
    for (i, _) in text.char_indices() {
        let tail = &text[i..];
        if tail.trim().is_empty() {
            continue;
        }
        if suffix.starts_with(tail) {
            best = tail.len();
            break;
        }
    }
    best
}
