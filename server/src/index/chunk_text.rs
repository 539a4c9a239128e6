//! What of a chunk the index matches as code and what as prose, and whether
//! a chunk is test code.
//!
//! A chunk's code is its own lines: an inner definition, which is a chunk of
//! its own, shows only its first line (so a class is matched by its header,
//! docstring, class-level statements and method signatures, not by every
//! method body again). Comment lines and the docstring go to the prose.

use crate::config::IndexConfig;

/// A chunk's text as the index matches it.
#[derive(Debug, Default)]
pub(super) struct ChunkText {
    pub code: String,
    pub prose: String,
}

/// How one language writes comments and docstrings.
#[derive(Debug, Clone, Copy)]
pub(super) struct Syntax {
    /// What starts a line comment; `None` for plain text (everything is both code and prose).
    pub line_comment: Option<&'static str>,
    pub docstring_in_body: bool,
}

/// Splits 0-based lines `[from, to)` of `lines` into code and prose. Lines inside
/// `children` (first line, last line) are left out except each child's first line;
/// lines in `skip` (a docstring, already the chunk's doc) are left out.
pub(super) fn split_text(
    lines: &[&str],
    from: usize,
    to: usize,
    children: &[(usize, usize)],
    skip: Option<(usize, usize)>,
    syntax: Syntax,
) -> ChunkText {
    let mut out = ChunkText::default();
    let Some(comment) = syntax.line_comment else {
        let text: String = lines[from.min(lines.len())..to.min(lines.len())].join("\n");
        out.prose.clone_from(&text);
        out.code = text;
        return out;
    };
    for (i, line) in lines.iter().enumerate().take(to).skip(from) {
        if children.iter().any(|&(cs, ce)| i > cs && i <= ce) || skip.is_some_and(|(s, e)| i >= s && i <= e) {
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(comment) {
            out.prose.push_str(rest.trim_start_matches(['/', '!', '#']).trim());
            out.prose.push('\n');
        } else {
            out.code.push_str(line);
            out.code.push('\n');
        }
    }
    out
}

/// 0-based first and last line of the docstring of the definition starting at
/// line `first` (Python: the string right after the header line ending in `:`).
pub(super) fn docstring_lines(lines: &[&str], first: usize, last: usize) -> Option<(usize, usize)> {
    let header_end = (first..=last.min(first + 20)).find(|&i| {
        let code = lines.get(i).map(|l| l.split(" #").next().unwrap_or(l)).unwrap_or("");
        code.trim_end().ends_with(':')
    })?;
    let start = (header_end + 1..=last).find(|&i| lines.get(i).is_some_and(|l| !l.trim().is_empty()))?;
    string_lines(lines, start, last)
}

/// The module docstring: a string as the first statement of the file.
pub(super) fn module_docstring_lines(lines: &[&str], comment: &str) -> Option<(usize, usize)> {
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with(comment) && !l.starts_with("#!"))?;
    string_lines(lines, start, lines.len().saturating_sub(1))
}

/// Lines `start..=end` of a string literal opening at line `start`, if one does.
fn string_lines(lines: &[&str], start: usize, last: usize) -> Option<(usize, usize)> {
    let line = lines.get(start)?.trim_start();
    let body = line.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
    if body.len() + 2 < line.len() {
        return None;
    }
    for delim in ["\"\"\"", "'''"] {
        if let Some(rest) = body.strip_prefix(delim) {
            if rest.contains(delim) {
                return Some((start, start));
            }
            let end = (start + 1..=last).find(|&i| lines.get(i).is_some_and(|l| l.contains(delim)))?;
            return Some((start, end));
        }
    }
    (body.starts_with('"') || body.starts_with('\'')).then_some((start, start))
}

/// Whether the file at `rel` is test code by its path (`index.test_dirs`, `test_file_*`).
pub(super) fn is_test_path(rel: &str, cfg: &IndexConfig) -> bool {
    let mut parts = rel.split('/').collect::<Vec<_>>();
    let file = parts.pop().unwrap_or("");
    parts.iter().any(|d| cfg.test_dirs.iter().any(|t| t == d))
        || cfg.test_file_prefixes.iter().any(|p| file.starts_with(p.as_str()))
        || cfg.test_file_suffixes.iter().any(|s| file.ends_with(s.as_str()))
}

/// Whether a definition is test code by itself: a function named like a test
/// (`index.test_function_prefixes`) or an attribute or decorator right above it
/// that marks tests (`index.test_attributes`).
pub(super) fn is_test_definition(lines: &[&str], first: usize, name: &str, function: bool, cfg: &IndexConfig) -> bool {
    if function && cfg.test_function_prefixes.iter().any(|p| name.starts_with(p.as_str())) {
        return true;
    }
    lines[..first.min(lines.len())]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with('@') || l.starts_with("///") || l.starts_with("//!"))
        .filter(|l| l.starts_with("#[") || l.starts_with('@'))
        .any(|l| cfg.test_attributes.iter().any(|a| l.contains(a.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: Syntax = Syntax { line_comment: Some("#"), docstring_in_body: true };

    #[test]
    fn inner_definitions_show_only_their_first_line_and_comments_are_prose() {
        let src = "class A:\n    \"\"\"Doc.\"\"\"\n    # a note\n    x = 1\n    def m(self):\n        return 2\n";
        let lines: Vec<&str> = src.lines().collect();
        let doc = docstring_lines(&lines, 0, 5);
        assert_eq!(doc, Some((1, 1)));
        let t = split_text(&lines, 0, 6, &[(4, 5)], doc, PY);
        assert_eq!(t.code, "class A:\n    x = 1\n    def m(self):\n");
        assert_eq!(t.prose, "a note\n");
    }

    #[test]
    fn multi_line_docstrings_and_module_docstrings() {
        let src = "def f(a,\n      b):  # why\n    '''First.\n\n    More.\n    '''\n    return a\n";
        let lines: Vec<&str> = src.lines().collect();
        assert_eq!(docstring_lines(&lines, 0, 6), Some((2, 5)));
        let m: Vec<&str> = "#!/usr/bin/env python\n# c\n\"\"\"Mod.\"\"\"\nimport os\n".lines().collect();
        assert_eq!(module_docstring_lines(&m, "#"), Some((2, 2)));
        let none: Vec<&str> = "def g():\n    return 1\n".lines().collect();
        assert_eq!(docstring_lines(&none, 0, 1), None);
    }
}
