//! Whole-file replies, for short files: the simplest format for a small model,
//! guarded against the model leaving parts out.

use super::fence::reply_code;
use super::{EditError, ReplyChecks};

/// The new file from a whole-file reply.
pub fn apply_whole_file(path: &str, before: &str, reply: &str, checks: &ReplyChecks) -> Result<String, EditError> {
    let mut code = reply_code(reply).ok_or(EditError::NoCode)?;
    if before.ends_with('\n') && !code.ends_with('\n') {
        code.push('\n');
    }
    let lower = code.to_lowercase();
    let before_lower = before.to_lowercase();
    if let Some(marker) =
        checks.elision_markers.iter().find(|m| lower.contains(m.as_str()) && !before_lower.contains(m.as_str()))
    {
        return Err(EditError::Elided { path: path.to_string(), why: format!("it says `{}`", marker.trim()) });
    }
    let (old_lines, new_lines) = (before.lines().count(), code.lines().count());
    if old_lines >= 10 && (new_lines as f32) < old_lines as f32 * checks.min_line_share {
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
        let checks = crate::edits::default_checks();
        let before = "def add(a, b):\n    return a - b\n";
        assert_eq!(
            apply_whole_file("c.py", before, "Fixed:\n```python\ndef add(a, b):\n    return a + b\n```", &checks)
                .unwrap(),
            "def add(a, b):\n    return a + b\n"
        );
        let long: String = (0..20).map(|i| format!("x{i} = {i}\n")).collect();
        let err = apply_whole_file("c.py", &long, "```python\nx0 = 1\n# ... rest unchanged\n```", &checks).unwrap_err();
        assert!(matches!(err, EditError::Elided { .. }), "{err}");
        let err = apply_whole_file("c.py", &long, "```python\nx0 = 1\nx1 = 2\n```", &checks).unwrap_err();
        assert!(err.to_string().contains("2 lines where the file has 20"), "{err}");
        // The thresholds come from the configuration.
        let lenient = ReplyChecks { min_line_share: 0.05, elision_markers: vec![], ..checks };
        let short = apply_whole_file("c.py", &long, "```python\nx0 = 1\nx1 = 2\n```", &lenient).unwrap();
        assert_eq!(short, "x0 = 1\nx1 = 2\n");
    }
}
