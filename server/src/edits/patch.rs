//! Changed files and their unified diff.

use serde::{Deserialize, Serialize};

/// Lines of context around each change in a diff.
const CONTEXT_LINES: usize = 3;

/// One file's text before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Workspace-relative path, `/`-separated.
    pub path: String,
    pub before: String,
    pub after: String,
}

/// Every change of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    pub changes: Vec<FileChange>,
}

impl Patch {
    /// The unified diff of every change, file by file.
    pub fn diff(&self) -> String {
        self.changes.iter().map(|c| unified_diff(&c.path, &c.before, &c.after)).collect()
    }

    /// The changed files' paths.
    pub fn files(&self) -> Vec<String> {
        self.changes.iter().map(|c| c.path.clone()).collect()
    }

    /// Lines added and removed over all files.
    pub fn line_counts(&self) -> (usize, usize) {
        let mut added = 0;
        let mut removed = 0;
        for c in &self.changes {
            for op in similar::TextDiff::from_lines(&c.before, &c.after).iter_all_changes() {
                match op.tag() {
                    similar::ChangeTag::Insert => added += 1,
                    similar::ChangeTag::Delete => removed += 1,
                    similar::ChangeTag::Equal => {}
                }
            }
        }
        (added, removed)
    }
}

/// The unified diff of `path` from `before` to `after` (`a/` and `b/` prefixes, as git shows them).
pub fn unified_diff(path: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .missing_newline_hint(true)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_of_a_one_line_change() {
        let d = unified_diff("calc.py", "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n");
        expect_test::expect![[r#"
            --- a/calc.py
            +++ b/calc.py
            @@ -1,2 +1,2 @@
             def add(a, b):
            -    return a - b
            +    return a + b
        "#]]
        .assert_eq(&d);
        let p = Patch {
            changes: vec![FileChange { path: "calc.py".into(), before: "a\n".into(), after: "b\nc\n".into() }],
        };
        assert_eq!(p.line_counts(), (2, 1));
    }

    #[test]
    fn a_patch_lists_its_files_and_diffs_each() {
        let patch = Patch {
            changes: vec![
                FileChange { path: "a.py".into(), before: "x = 1\n".into(), after: "x = 2\n".into() },
                FileChange { path: "b/c.py".into(), before: "".into(), after: "y = 3\n".into() },
            ],
        };
        assert_eq!(patch.files(), vec!["a.py".to_string(), "b/c.py".to_string()]);
        let diff = patch.diff();
        assert_eq!(diff, unified_diff("a.py", "x = 1\n", "x = 2\n") + &unified_diff("b/c.py", "", "y = 3\n"));
        assert!(diff.contains("-x = 1") && diff.contains("+x = 2") && diff.contains("+y = 3"), "{diff}");
    }
}
