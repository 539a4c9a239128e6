//! The collateral-damage check of `tinycoder bench fix`: a passing patch can still
//! change what the tests do not see. Each passing patch is compared with the
//! task's reference fix (`fix.patch`): how many of its changed lines fall
//! outside the reference's hunks, and which comment or docstring lines it
//! deleted.

use crate::edits::Patch;
use serde::Serialize;
use similar::{ChangeTag, TextDiff};
use std::collections::HashMap;
use std::path::Path;

/// What a passing patch changed beyond the reference fix.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Collateral {
    /// Lines the patch removed or added.
    pub changed_lines: usize,
    /// Of those, lines outside the reference fix's hunks (in the original file's lines).
    pub outside_reference: usize,
    /// Comment and docstring lines the patch deleted (and did not write again elsewhere).
    pub deleted_documentation: Vec<String>,
}

/// The line ranges (0-based, end exclusive, in the original file) each file's hunks cover in `fix.patch`.
pub fn reference_hunks(fix_patch: &str) -> HashMap<String, Vec<(usize, usize)>> {
    let mut out: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    let mut file = None;
    for line in fix_patch.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            file = Some(p.trim().trim_start_matches("a/").to_string());
        } else if let (Some(h), Some(f)) = (line.strip_prefix("@@ -"), &file) {
            let old = h.split_whitespace().next().unwrap_or("");
            let (start, len) = old.split_once(',').unwrap_or((old, "1"));
            if let (Ok(start), Ok(len)) = (start.parse::<usize>(), len.parse::<usize>()) {
                let start = start.saturating_sub(1);
                out.entry(f.clone()).or_default().push((start, start + len.max(1)));
            }
        }
    }
    out
}

/// `patch` measured against the reference hunks of `fix_patch`.
pub fn collateral(patch: &Patch, fix_patch: &str) -> Collateral {
    let hunks = reference_hunks(fix_patch);
    let mut c = Collateral::default();
    for change in &patch.changes {
        let ranges = hunks.get(&change.path).map(Vec::as_slice).unwrap_or(&[]);
        let inside = |old_line: usize| ranges.iter().any(|&(a, b)| (a..b).contains(&old_line));
        let documentation = documentation_lines(&change.before);
        let written: std::collections::HashSet<&str> = change.after.lines().map(str::trim).collect();
        let diff = TextDiff::from_lines(&change.before, &change.after);
        // Where in the original an inserted line lands: the old line it comes before.
        let mut old_at = 0;
        for d in diff.iter_all_changes() {
            match d.tag() {
                ChangeTag::Equal => old_at = d.old_index().map_or(old_at, |i| i + 1),
                ChangeTag::Delete => {
                    let i = d.old_index().unwrap_or(old_at);
                    old_at = i + 1;
                    c.changed_lines += 1;
                    if !inside(i) {
                        c.outside_reference += 1;
                    }
                    let text = d.value().trim();
                    if documentation.contains(&i) && !text.is_empty() && !written.contains(text) {
                        c.deleted_documentation.push(format!("{}:{}: {text}", change.path, i + 1));
                    }
                }
                ChangeTag::Insert => {
                    c.changed_lines += 1;
                    // An insertion right after a reference line (or before one) belongs to that hunk.
                    let near = inside(old_at) || (old_at > 0 && inside(old_at - 1));
                    if !near {
                        c.outside_reference += 1;
                    }
                }
            }
        }
    }
    c
}

/// 0-based lines of `text` that are comments or inside docstrings (Python `"""`/`'''`,
/// Rust `//` and `///`, `#` comments).
fn documentation_lines(text: &str) -> std::collections::HashSet<usize> {
    let mut out = std::collections::HashSet::new();
    let mut in_docstring: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(q) = in_docstring {
            out.insert(i);
            if t.contains(q) {
                in_docstring = None;
            }
            continue;
        }
        if t.starts_with('#') || t.starts_with("//") {
            out.insert(i);
            continue;
        }
        for q in ["\"\"\"", "'''"] {
            if let Some(rest) = t.strip_prefix(q) {
                out.insert(i);
                if !rest.contains(q) {
                    in_docstring = Some(q);
                }
                break;
            }
        }
    }
    out
}

/// The task's `fix.patch`, if it has one.
pub fn read_reference(task_dir: &Path) -> Option<String> {
    std::fs::read_to_string(task_dir.join("fix.patch")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::FileChange;

    const FIX: &str =
        "--- a/calc.py\n+++ b/calc.py\n@@ -5,2 +5,2 @@\n def half(x):\n-    return x / 2\n+    return x // 2\n";
    const BEFORE: &str = "\"\"\"Calculator.\n\nWhole numbers only.\n\"\"\"\ndef half(x):\n    return x / 2\n\n\ndef double(x):\n    # twice\n    return x * 2\n";

    fn patch(after: &str) -> Patch {
        Patch { changes: vec![FileChange { path: "calc.py".into(), before: BEFORE.into(), after: after.into() }] }
    }

    #[test]
    fn the_reference_fix_itself_has_no_collateral() {
        let c = collateral(&patch(&BEFORE.replace("x / 2", "x // 2")), FIX);
        assert_eq!(c, Collateral { changed_lines: 2, outside_reference: 0, deleted_documentation: vec![] });
    }

    #[test]
    fn a_deleted_docstring_and_comment_are_named_and_counted_outside() {
        let after = BEFORE
            .replace("x / 2", "x // 2")
            .replace("\"\"\"Calculator.\n\nWhole numbers only.\n\"\"\"\n", "")
            .replace("    # twice\n", "");
        let c = collateral(&patch(&after), FIX);
        assert_eq!(c.changed_lines, 7);
        assert_eq!(c.outside_reference, 5);
        assert_eq!(
            c.deleted_documentation,
            vec![
                "calc.py:1: \"\"\"Calculator.",
                "calc.py:3: Whole numbers only.",
                "calc.py:4: \"\"\"",
                "calc.py:10: # twice"
            ]
        );
    }

    #[test]
    fn a_comment_moved_elsewhere_is_not_deleted() {
        let after = BEFORE
            .replace("x / 2", "x // 2")
            .replace("    # twice\n    return x * 2\n", "    return x * 2  # ok\n    # twice\n");
        let c = collateral(&patch(&after), FIX);
        assert!(c.deleted_documentation.is_empty(), "{c:?}");
    }

    #[test]
    fn hunks_are_read_per_file_in_original_lines() {
        let h = reference_hunks(
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -10,4 +10,5 @@ fn x\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n",
        );
        assert_eq!(h["src/a.rs"], vec![(9, 13)]);
        assert_eq!(h["b.py"], vec![(0, 1)]);
    }
}
