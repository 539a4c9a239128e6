//! Whole-file replies, for short files: the simplest format for a small model,
//! guarded against the model leaving parts out.

use super::fence::reply_code;
use super::EditError;

/// Below this share of the old file's lines, a whole-file reply counts as cut short.
const MIN_LINE_SHARE: f32 = 0.5;

/// Comments models write instead of code they leave out.
const ELISION_MARKERS: [&str; 6] = ["# ...", "// ...", "# rest of", "// rest of", "# … ", "(unchanged)"];

/// The new file from a whole-file reply.
pub fn apply_whole_file(path: &str, before: &str, reply: &str) -> Result<String, EditError> {
    let mut code = reply_code(reply).ok_or(EditError::NoCode)?;
    if before.ends_with('\n') && !code.ends_with('\n') {
        code.push('\n');
    }
    let lower = code.to_lowercase();
    if let Some(marker) = ELISION_MARKERS.iter().find(|m| lower.contains(*m) && !before.to_lowercase().contains(*m)) {
        return Err(EditError::Elided { path: path.to_string(), why: format!("it says `{}`", marker.trim()) });
    }
    let (old_lines, new_lines) = (before.lines().count(), code.lines().count());
    if old_lines >= 10 && (new_lines as f32) < old_lines as f32 * MIN_LINE_SHARE {
        return Err(EditError::Elided {
            path: path.to_string(),
            why: format!("{new_lines} lines where the file has {old_lines}"),
        });
    }
    if code == before {
        return Err(EditError::Unchanged { path: path.to_string() });
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_file_replies() {
        let before = "def add(a, b):\n    return a - b\n";
        assert_eq!(
            apply_whole_file("c.py", before, "Fixed:\n```python\ndef add(a, b):\n    return a + b\n```").unwrap(),
            "def add(a, b):\n    return a + b\n"
        );
        let long: String = (0..20).map(|i| format!("x{i} = {i}\n")).collect();
        let err = apply_whole_file("c.py", &long, "```python\nx0 = 1\n# ... rest unchanged\n```").unwrap_err();
        assert!(matches!(err, EditError::Elided { .. }), "{err}");
        let err = apply_whole_file("c.py", &long, "```python\nx0 = 1\nx1 = 2\n```").unwrap_err();
        assert!(err.to_string().contains("2 lines where the file has 20"), "{err}");
    }
}
