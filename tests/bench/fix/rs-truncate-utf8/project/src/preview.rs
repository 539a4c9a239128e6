//! Shortening text to a number of characters for previews.

const ELLIPSIS: char = '…';

/// At most `max_chars` characters of `text`; when it has to cut, the last
/// character kept is an ellipsis.
pub fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    if max_chars == 0 {
        return String::new();
    }
    let mut out = text[..max_chars - 1].trim_end().to_string();
    out.push(ELLIPSIS);
    out
}

/// Runs of whitespace (newlines included) become single spaces.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
