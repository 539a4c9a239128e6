//! The syntax check every candidate passes before any test runs.

use super::EditError;
use crate::syntax::{code_tokens, extract_symbols, language_for_path, parse, syntax_errors};
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

/// `Err(EditError::CodeChanged)` when `after` differs from `before` in more
/// than comments, docstrings and layout (a documentation request). Files without
/// a grammar cannot be compared and pass.
pub fn check_comments_only(path: &str, before: &str, after: &str) -> Result<(), EditError> {
    let Some(lang) = language_for_path(Path::new(path)) else {
        return Ok(());
    };
    if code_tokens(lang, before) == code_tokens(lang, after) {
        return Ok(());
    }
    let names: Vec<String> = super::changed_symbols(path, before, after)
        .into_iter()
        .filter(|name| {
            let code_of = |text: &str| definition_code(lang, text, name);
            code_of(before) != code_of(after)
        })
        .map(|n| format!("`{n}`"))
        .collect();
    let names = if names.is_empty() { "the file".to_string() } else { names.join(", ") };
    Err(EditError::CodeChanged { path: path.to_string(), names })
}

/// The code tokens of the first definition named `name` in `text`.
fn definition_code(lang: &'static crate::syntax::LanguageSpec, text: &str, name: &str) -> Option<Vec<String>> {
    let tree = parse(lang, text)?;
    let symbol = extract_symbols(lang, &tree, text.as_bytes()).into_iter().find(|s| s.name == name)?;
    code_tokens(lang, &text[symbol.byte_range])
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

    #[test]
    fn only_comments_and_docstrings_may_change() {
        let before = "def f(x):\n    return x + 1\n\n\ndef g():\n    return 2\n";
        let documented =
            "def f(x):\n    \"\"\"Adds one to x.\"\"\"\n    return x + 1\n\n\ndef g():\n    # two\n    return 2\n";
        assert!(check_comments_only("a.py", before, documented).is_ok());
        let changed = documented.replace("return 2", "return 3");
        let err = check_comments_only("a.py", before, &changed).unwrap_err();
        assert!(err.to_string().contains("`g`") && !err.to_string().contains("`f`"), "{err}");
        let added = format!("{documented}\n\ndef h():\n    pass\n");
        assert!(check_comments_only("a.py", before, &added).is_err(), "a new function is code");
        assert!(check_comments_only("notes.txt", "a", "b").is_ok());
    }
}
