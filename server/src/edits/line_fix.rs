//! The line-fix format: the model quotes the wrong line (or lines) of one
//! definition and writes it corrected. Asked to name the wrong line and say
//! why before writing code, a small model reasons its way to the bug; asked for
//! a whole definition, it often copies it back unchanged (docs/benchmarks.md).
//!
//! Matching ignores whitespace inside and around lines; the fixed lines take
//! the indentation of the line they replace.

use super::fence::code_blocks;
use super::EditError;

/// The lines the reply says are wrong, and their correction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineFix {
    pub wrong: String,
    pub fixed: String,
}

/// Where the wrong lines are looked for first: one definition of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRegion {
    pub path: String,
    /// 1-based inclusive.
    pub start_line: usize,
    pub end_line: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Label {
    Wrong,
    Fixed,
    Other,
}

fn label_of(line: &str) -> Option<Label> {
    let head: String = line.trim_start_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let word = |w: &str| head.starts_with(w);
    if word("wrong line") || word("wrong code") || word("the wrong line") {
        Some(Label::Wrong)
    } else if word("fixed line") || word("fixed code") || word("corrected line") || word("the fixed line") {
        Some(Label::Fixed)
    } else if word("why") {
        Some(Label::Other)
    } else {
        None
    }
}

/// Text in single backticks on a label line (`Wrong line: \`x = 1\``).
fn inline_code(line: &str) -> Option<String> {
    let after = line.split_once(':').map(|(_, rest)| rest).unwrap_or(line);
    let start = after.find('`')?;
    let rest = &after[start..].trim_start_matches('`');
    let end = rest.find('`')?;
    let code = rest[..end].trim();
    (!code.is_empty()).then(|| code.to_string())
}

/// The wrong and fixed lines of `reply`: the code under its "Wrong line" and
/// "Fixed line" labels (a fenced block after the label, or inline code on
/// it); without labels, the first and the last of two or more code blocks.
pub fn parse_line_fix(reply: &str) -> Option<LineFix> {
    let mut label = None;
    let (mut wrong, mut fixed) = (None, None);
    let mut fence: Option<Vec<&str>> = None;
    for line in reply.lines() {
        let trimmed = line.trim_start();
        if let Some(body) = fence.as_mut() {
            if trimmed.starts_with("```") {
                let code = body.join("\n");
                match label {
                    Some(Label::Wrong) if wrong.is_none() => wrong = Some(code),
                    Some(Label::Fixed) if fixed.is_none() => fixed = Some(code),
                    _ => {}
                }
                fence = None;
            } else {
                body.push(line);
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some(Vec::new());
            continue;
        }
        if let Some(l) = label_of(line) {
            label = Some(l);
            if let Some(code) = inline_code(line) {
                match l {
                    Label::Wrong if wrong.is_none() => wrong = Some(code),
                    Label::Fixed if fixed.is_none() => fixed = Some(code),
                    _ => {}
                }
            }
        }
    }
    if let (Some(wrong), Some(fixed)) = (&wrong, &fixed) {
        return Some(LineFix { wrong: wrong.clone(), fixed: fixed.clone() });
    }
    let blocks: Vec<String> = code_blocks(reply).into_iter().map(|b| b.body).filter(|b| !b.trim().is_empty()).collect();
    match (blocks.first(), blocks.last()) {
        (Some(first), Some(last)) if blocks.len() >= 2 => Some(LineFix { wrong: first.clone(), fixed: last.clone() }),
        _ => None,
    }
}

fn squeeze(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).collect()
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Where `wrong` (non-blank lines, whitespace ignored) starts in `lines`, within `range` (0-based, end exclusive).
fn matches_in(lines: &[&str], wrong: &[String], range: std::ops::Range<usize>) -> Vec<usize> {
    let n = wrong.len();
    if n == 0 || range.end < n {
        return Vec::new();
    }
    (range.start..=range.end.saturating_sub(n))
        .filter(|&i| i + n <= lines.len() && (0..n).all(|k| squeeze(lines[i + k]) == wrong[k]))
        .collect()
}

/// `fix` applied to one of `files` (path, text): the wrong lines are looked
/// for in `region` first, then in every file; exactly one place must match.
/// Returns the changed file and its new text.
pub fn apply_line_fix(
    files: &[(String, String)],
    region: Option<&LineRegion>,
    fix: &LineFix,
) -> Result<(String, String), EditError> {
    let wrong: Vec<String> = fix.wrong.lines().map(squeeze).filter(|l| !l.is_empty()).collect();
    if wrong.is_empty() {
        return Err(EditError::NoLineFix);
    }
    let fixed: Vec<&str> = fix.fixed.lines().collect();
    let fixed_squeezed: Vec<String> = fixed.iter().map(|l| squeeze(l)).filter(|l| !l.is_empty()).collect();
    if fixed_squeezed == wrong {
        let path =
            region.map(|r| r.path.clone()).unwrap_or_else(|| files.first().map(|f| f.0.clone()).unwrap_or_default());
        return Err(EditError::Unchanged { path });
    }
    let mut found: Option<(usize, usize)> = None;
    if let Some(r) = region {
        if let Some((fi, (_, text))) = files.iter().enumerate().find(|(_, (p, _))| *p == r.path) {
            let lines: Vec<&str> = text.lines().collect();
            let range = r.start_line.saturating_sub(1)..r.end_line.min(lines.len());
            if let [one] = matches_in(&lines, &wrong, range)[..] {
                found = Some((fi, one));
            }
        }
    }
    if found.is_none() {
        let all: Vec<(usize, usize)> = files
            .iter()
            .enumerate()
            .flat_map(|(fi, (_, text))| {
                let lines: Vec<&str> = text.lines().collect();
                matches_in(&lines, &wrong, 0..lines.len()).into_iter().map(move |at| (fi, at))
            })
            .collect();
        match all[..] {
            [one] => found = Some(one),
            [] => return Err(not_found(files, region, &fix.wrong)),
            _ => {
                let path = files[all[0].0].0.clone();
                let line = fix.wrong.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
                return Err(EditError::LineAmbiguous { path, line, count: all.len() });
            }
        }
    }
    let (fi, at) = found.expect("set above");
    let (path, text) = &files[fi];
    Ok((path.clone(), replace_lines(text, at, wrong.len(), &fixed)))
}

/// `text` with `count` lines from 0-based `at` replaced by `fixed`, re-indented
/// to the first replaced line; blank lines inside the wrong ones count too.
fn replace_lines(text: &str, at: usize, count: usize, fixed: &[&str]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The match skipped no lines (blank wrong lines were dropped, so a blank
    // line in the file ends the match); `count` lines are replaced.
    let first = lines[at];
    let ending = if first.ends_with("\r\n") { "\r\n" } else { "\n" };
    let indent = indent_of(first.trim_end_matches(['\r', '\n']));
    let body: Vec<&str> = {
        let mut v: Vec<&str> = fixed.to_vec();
        while v.first().is_some_and(|l| l.trim().is_empty()) {
            v.remove(0);
        }
        while v.last().is_some_and(|l| l.trim().is_empty()) {
            v.pop();
        }
        v
    };
    let base = body.iter().filter(|l| !l.trim().is_empty()).map(|l| indent_of(l).len()).min().unwrap_or(0);
    let mut out = String::with_capacity(text.len() + 64);
    for l in &lines[..at] {
        out.push_str(l);
    }
    for l in &body {
        if l.trim().is_empty() {
            out.push_str(ending);
        } else {
            out.push_str(indent);
            out.push_str(l.get(base..).unwrap_or(l.trim_start()).trim_end());
            out.push_str(ending);
        }
    }
    let rest = &lines[(at + count).min(lines.len())..];
    for l in rest {
        out.push_str(l);
    }
    if !text.ends_with('\n') && rest.is_empty() {
        out.truncate(out.trim_end_matches(['\r', '\n']).len());
    }
    out
}

fn not_found(files: &[(String, String)], region: Option<&LineRegion>, wrong: &str) -> EditError {
    let first = wrong.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    let (path, text, range) = match region.and_then(|r| files.iter().find(|(p, _)| *p == r.path).map(|f| (r, f))) {
        Some((r, (p, t))) => (p.clone(), t.as_str(), Some((r.start_line, r.end_line))),
        None => files.first().map(|(p, t)| (p.clone(), t.as_str(), None)).unwrap_or_default(),
    };
    let target = squeeze(&first);
    let closest = text
        .lines()
        .enumerate()
        .filter(|(i, _)| range.is_none_or(|(a, z)| (a.saturating_sub(1)..z).contains(i)))
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (similar::TextDiff::from_chars(target.as_str(), squeeze(l).as_str()).ratio(), i, l))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let hint = match closest {
        Some((ratio, i, l)) if ratio > 0.5 => format!("; did you mean line {}: `{}`?", i + 1, l.trim()),
        _ => String::new(),
    };
    EditError::LineNotFound { path, line: first, hint }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICING: &str = "def line_total(u, q):\n    return u * q\n\n\ndef apply_discount(cents, percent):\n    if not 0 <= percent <= 100:\n        raise ValueError(\"bad\")\n    return cents - cents * percent // 10\n";

    fn files() -> Vec<(String, String)> {
        vec![("cart/__init__.py".into(), "x = 1\n".into()), ("cart/pricing.py".into(), PRICING.into())]
    }

    #[test]
    fn labelled_blocks_are_the_wrong_and_fixed_lines() {
        let reply = "Wrong line:\n```python\nreturn cents - cents * percent // 10\n```\nWhy: percent is out of 100, not 10.\nFixed line:\n```python\nreturn cents - cents * percent // 100\n```\n";
        let fix = parse_line_fix(reply).expect("parsed");
        assert_eq!(fix.wrong.trim(), "return cents - cents * percent // 10");
        assert_eq!(fix.fixed.trim(), "return cents - cents * percent // 100");
        let region = LineRegion { path: "cart/pricing.py".into(), start_line: 5, end_line: 8 };
        let (path, after) = apply_line_fix(&files(), Some(&region), &fix).expect("applied");
        assert_eq!(path, "cart/pricing.py");
        assert_eq!(after, PRICING.replace("// 10\n", "// 100\n"));
    }

    #[test]
    fn inline_labels_and_unlabelled_blocks_parse_too() {
        let inline = "Wrong line: `return u * q`\nWhy: it is fine\nFixed line: `return u * q + 0`";
        assert_eq!(parse_line_fix(inline).map(|f| f.fixed), Some("return u * q + 0".to_string()));
        let bare = "The line\n```python\nreturn u * q\n```\nshould be\n```python\nreturn q * u\n```";
        assert_eq!(parse_line_fix(bare).map(|f| f.wrong.trim().to_string()), Some("return u * q".to_string()));
        assert_eq!(parse_line_fix("```python\ndef f():\n    pass\n```"), None, "one block is no line fix");
    }

    #[test]
    fn whitespace_is_ignored_and_the_fix_takes_the_lines_indentation() {
        let fix = LineFix {
            wrong: "return cents-cents*percent//10".into(),
            fixed: "        d = cents * percent // 100\n        return cents - d".into(),
        };
        let (_, after) = apply_line_fix(&files(), None, &fix).expect("found in the other file");
        assert!(after.contains("\n    d = cents * percent // 100\n    return cents - d\n"), "{after}");
    }

    #[test]
    fn a_miss_says_which_line_was_meant_and_a_copy_changes_nothing() {
        let fix = LineFix { wrong: "return cents - cents * percent / 10".into(), fixed: "return 0".into() };
        let region = LineRegion { path: "cart/pricing.py".into(), start_line: 5, end_line: 8 };
        let err = apply_line_fix(&files(), Some(&region), &fix).unwrap_err().to_string();
        assert!(err.contains("did you mean line 8: `return cents - cents * percent // 10`"), "{err}");
        let same = LineFix { wrong: "return u * q".into(), fixed: "return u  *  q".into() };
        assert!(apply_line_fix(&files(), None, &same).unwrap_err().is_unchanged());
    }

    #[test]
    fn a_line_found_in_two_places_outside_the_region_is_ambiguous() {
        let files = vec![("a.py".to_string(), "x = 1\ny = 2\nx = 1\n".to_string())];
        let fix = LineFix { wrong: "x = 1".into(), fixed: "x = 3".into() };
        assert!(matches!(apply_line_fix(&files, None, &fix), Err(EditError::LineAmbiguous { count: 2, .. })));
        let region = LineRegion { path: "a.py".into(), start_line: 3, end_line: 3 };
        assert_eq!(apply_line_fix(&files, Some(&region), &fix).unwrap().1, "x = 1\ny = 2\nx = 3\n");
    }
}
