//! Comments and docstrings a fix deleted, put back: a small model rewriting a
//! definition often drops its docstring or the comment above a line, and the
//! tests never notice. A fix is about code, so documentation it removed whole
//! (not rewrote) returns where it was, as long as that changes no code and
//! adds no syntax error.

use super::check::new_syntax_errors;
use crate::syntax::{code_tokens, commentary_lines, language_for_path};
use similar::{DiffOp, TextDiff};
use std::ops::Range;
use std::path::Path;

/// `after` with the documentation of `before` that it deleted put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptDocumentation {
    pub text: String,
    /// Lines put back (blank lines that went with them included).
    pub lines: usize,
}

/// A deleted block of documentation: the op that deleted it and its old lines.
#[derive(Debug, Clone)]
struct Deleted {
    op: usize,
    lines: Range<usize>,
}

/// `after` with every comment and docstring of `before` that `after` deleted
/// whole put back in place; `None` when nothing was deleted (or nothing can be
/// put back without changing code or the parse), or `path` has no grammar.
pub fn keep_deleted_documentation(path: &str, before: &str, after: &str) -> Option<KeptDocumentation> {
    let lang = language_for_path(Path::new(path))?;
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let new_docs: Vec<(usize, usize)> = commentary_lines(lang, after)?;
    let is_new_doc = |line: usize| new_docs.iter().any(|&(s, e)| (s..=e).contains(&line));
    let ops = TextDiff::from_lines(before, after).ops().to_vec();
    let old_docs = commentary_lines(lang, before)?;
    let is_old_doc = |line: usize| old_docs.iter().any(|&(s, e)| (s..=e).contains(&line));
    let deleted: Vec<Deleted> = old_docs
        .iter()
        .filter_map(|&(first, last)| {
            let op = ops.iter().position(|op| op.old_range().contains(&first))?;
            let (old_range, new_range) = (ops[op].old_range(), ops[op].new_range());
            match ops[op] {
                DiffOp::Equal { .. } | DiffOp::Insert { .. } => return None,
                // Code deleted with it: the documentation went with its code.
                DiffOp::Delete { .. } => {
                    let code = old_range.clone().any(|l| !old[l].trim().is_empty() && !is_old_doc(l));
                    if code {
                        return None;
                    }
                }
                // The model wrote documentation of its own here: a rewrite, not a deletion.
                DiffOp::Replace { .. } if new_range.clone().any(is_new_doc) => return None,
                DiffOp::Replace { .. } => {}
            }
            if !old_range.contains(&last) {
                return None;
            }
            let mut end = last + 1;
            while old_range.contains(&end) && old[end].trim().is_empty() {
                end += 1;
            }
            Some(Deleted { op, lines: first..end })
        })
        .collect();
    if deleted.is_empty() {
        return None;
    }
    let code = code_tokens(lang, after);
    let acceptable = |text: &str| code_tokens(lang, text) == code && new_syntax_errors(path, after, text).is_empty();
    let all: Vec<bool> = vec![true; deleted.len()];
    let chosen = if acceptable(&rebuild(&ops, &old, &new, &deleted, &all)) {
        all
    } else {
        // One at a time, keeping each block that still leaves the code as the fix wrote it.
        let mut chosen = vec![false; deleted.len()];
        for i in 0..deleted.len() {
            chosen[i] = true;
            if !acceptable(&rebuild(&ops, &old, &new, &deleted, &chosen)) {
                chosen[i] = false;
            }
        }
        chosen
    };
    let lines = deleted.iter().zip(&chosen).filter(|(_, on)| **on).map(|(d, _)| d.lines.len()).sum();
    (lines > 0).then(|| KeptDocumentation { text: rebuild(&ops, &old, &new, &deleted, &chosen), lines })
}

/// The new text with the chosen deleted blocks put back. In a replaced region a
/// block goes after as many new lines as there were old lines of code before it.
fn rebuild(ops: &[DiffOp], old: &[&str], new: &[&str], deleted: &[Deleted], chosen: &[bool]) -> String {
    let mut out = String::new();
    for (i, op) in ops.iter().enumerate() {
        let blocks: Vec<&Range<usize>> =
            deleted.iter().zip(chosen).filter(|(d, on)| **on && d.op == i).map(|(d, _)| &d.lines).collect();
        let new_lines = &new[op.new_range()];
        if blocks.is_empty() {
            new_lines.iter().for_each(|l| out.push_str(l));
            continue;
        }
        let start = op.old_range().start;
        let mut shown = 0;
        for block in blocks {
            let code_before = (start..block.start).filter(|l| !deleted.iter().any(|d| d.lines.contains(l))).count();
            let upto = code_before.clamp(shown, new_lines.len());
            new_lines[shown..upto].iter().for_each(|l| out.push_str(l));
            shown = upto;
            old[block.clone()].iter().for_each(|l| out.push_str(l));
            // The file's last line may have lost its newline; put back lines whole.
            if !out.ends_with('\n') && shown < new_lines.len() {
                out.push('\n');
            }
        }
        new_lines[shown..].iter().for_each(|l| out.push_str(l));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CART: &str = "\"\"\"Prices in integer cents.\"\"\"\n\n\ndef apply_discount(cents, percent):\n    \"\"\"`cents` reduced by `percent` percent, rounded down.\"\"\"\n    # Reject nonsense first.\n    if not 0 <= percent <= 100:\n        raise ValueError(\"percent\")\n    return cents - cents * percent // 10\n";

    #[test]
    fn a_fix_that_dropped_the_docstrings_and_a_comment_gets_them_back() {
        let fixed = "def apply_discount(cents, percent):\n    if not 0 <= percent <= 100:\n        raise ValueError(\"percent\")\n    return cents - cents * percent // 100\n";
        let kept = keep_deleted_documentation("cart.py", CART, fixed).expect("documentation put back");
        assert_eq!(kept.text, CART.replace("// 10\n", "// 100\n"));
        assert_eq!(kept.lines, 5);
    }

    #[test]
    fn a_docstring_after_a_changed_line_goes_back_after_it() {
        let before = "def f(a):\n    \"\"\"Doc.\"\"\"\n    return a\n";
        let after = "def f(a, b=0):\n    return a\n";
        let kept = keep_deleted_documentation("m.py", before, after).unwrap();
        assert_eq!(kept.text, "def f(a, b=0):\n    \"\"\"Doc.\"\"\"\n    return a\n");
    }

    #[test]
    fn rewritten_documentation_and_documentation_deleted_with_its_code_stay_as_the_fix_has_them() {
        let before = "def f(a):\n    \"\"\"Old doc.\"\"\"\n    return a\n\n\n# helper\ndef g():\n    return 1\n";
        let rewritten = "def f(a):\n    \"\"\"New doc.\"\"\"\n    return a\n\n\n# helper\ndef g():\n    return 1\n";
        assert_eq!(keep_deleted_documentation("m.py", before, rewritten), None);
        let without_g = "def f(a):\n    \"\"\"Old doc.\"\"\"\n    return a\n";
        assert_eq!(keep_deleted_documentation("m.py", before, without_g), None);
        assert_eq!(keep_deleted_documentation("notes.txt", "# a\nb\n", "b\n"), None);
    }

    #[test]
    fn rust_comments_come_back_and_code_is_never_touched() {
        let before = "/// Adds.\nfn add(a: i32, b: i32) -> i32 {\n    // plain sum\n    a - b\n}\n";
        let after = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
        let kept = keep_deleted_documentation("src/lib.rs", before, after).unwrap();
        assert_eq!(kept.text, "/// Adds.\nfn add(a: i32, b: i32) -> i32 {\n    // plain sum\n    a + b\n}\n");
        let code = crate::syntax::code_tokens(crate::syntax::language_for_path(Path::new("a.rs")).unwrap(), after);
        assert_eq!(
            crate::syntax::code_tokens(crate::syntax::language_for_path(Path::new("a.rs")).unwrap(), &kept.text),
            code
        );
    }
}
