//! The syntax check every candidate passes before any test runs.

use super::EditError;
use crate::syntax::{language_for_path, parse, syntax_errors};
use std::path::Path;

/// Syntax errors in `after` that `before` did not have, as "line N: what" (1-based).
/// Files without a grammar have none.
pub fn new_syntax_errors(path: &str, before: &str, after: &str) -> Vec<String> {
    let Some(lang) = language_for_path(Path::new(path)) else {
        return Vec::new();
    };
    let errors = |text: &str| parse(lang, text).map(|t| syntax_errors(&t, text.as_bytes(), 50)).unwrap_or_default();
    let old = errors(before);
    let new = errors(after);
    if new.len() <= old.len() {
        return Vec::new();
    }
    // Errors keep their message when code moves, so compare messages, not places.
    let mut old_messages: Vec<&str> = old.iter().map(|e| e.message.as_str()).collect();
    new.iter()
        .filter(|e| match old_messages.iter().position(|m| *m == e.message) {
            Some(i) => {
                old_messages.remove(i);
                false
            }
            None => true,
        })
        .map(|e| format!("line {}: {}", e.start.row + 1, e.message))
        .collect()
}

/// `Err(EditError::Syntax)` when `after` parses with new errors.
pub fn check_syntax(path: &str, before: &str, after: &str, shown: usize) -> Result<(), EditError> {
    let errors = new_syntax_errors(path, before, after);
    if errors.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = errors.iter().take(shown).map(String::as_str).collect();
    Err(EditError::Syntax { path: path.to_string(), errors: shown.join("; ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_errors_count() {
        assert!(check_syntax("a.py", "def f():\n    return 1\n", "def f():\n    return 2\n", 3).is_ok());
        let err = check_syntax("a.py", "def f():\n    return 1\n", "def f(:\n    return 2\n", 3).unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        // A file that was already broken may stay as broken.
        let broken = "fn f( {\n}\n";
        assert!(check_syntax("a.rs", broken, broken, 3).is_ok());
        assert!(check_syntax("notes.txt", "a", "((", 3).is_ok());
    }

    #[test]
    fn an_error_already_there_is_not_listed_again() {
        let before = "def f(:\n    return 1\n";
        let after = "def f(:\n    return 1\n\n\nclass\n";
        let new = new_syntax_errors("a.py", before, after);
        assert_eq!(new.len(), 1, "{new:?}");
        assert!(new[0].starts_with("line 5"), "{new:?}");
    }
}
