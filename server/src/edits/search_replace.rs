//! Search/replace blocks, matched exactly, then ignoring trailing whitespace,
//! then ignoring indentation (the replacement is re-indented to the match).

use super::EditError;

/// One `<<<<<<< SEARCH … ======= … >>>>>>> REPLACE` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchReplace {
    pub search: String,
    pub replace: String,
}

fn is_marker(line: &str, ch: char, word: &str) -> bool {
    let t = line.trim();
    let run = t.chars().take_while(|c| *c == ch).count();
    run >= 5 && t[run..].trim().eq_ignore_ascii_case(word)
}

/// The blocks of `reply`, in order (fences and text between blocks ignored).
pub fn parse_search_replace(reply: &str) -> Vec<SearchReplace> {
    enum State {
        Outside,
        Search(Vec<String>),
        Replace(Vec<String>, Vec<String>),
    }
    let mut out = Vec::new();
    let mut state = State::Outside;
    for line in reply.lines() {
        state = match state {
            State::Outside if is_marker(line, '<', "SEARCH") => State::Search(Vec::new()),
            State::Outside => State::Outside,
            State::Search(s) if is_marker(line, '=', "") => State::Replace(s, Vec::new()),
            State::Search(mut s) => {
                s.push(line.to_string());
                State::Search(s)
            }
            State::Replace(s, r) if is_marker(line, '>', "REPLACE") => {
                out.push(SearchReplace { search: join(&s), replace: join(&r) });
                State::Outside
            }
            State::Replace(s, mut r) => {
                r.push(line.to_string());
                State::Replace(s, r)
            }
        };
    }
    out
}

fn join(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        lines.join("\n") + "\n"
    }
}

/// Applies every block to `before` in order.
pub fn apply_search_replace(path: &str, before: &str, blocks: &[SearchReplace]) -> Result<String, EditError> {
    if blocks.is_empty() {
        return Err(EditError::NoBlocks);
    }
    let mut text = before.to_string();
    for (i, b) in blocks.iter().enumerate() {
        text = apply_one(path, &text, b, i + 1)?;
    }
    if text == before {
        return Err(EditError::Unchanged { path: path.to_string() });
    }
    Ok(text)
}

fn apply_one(path: &str, text: &str, b: &SearchReplace, block: usize) -> Result<String, EditError> {
    if b.search.trim().is_empty() {
        // An empty SEARCH appends (how models add a new function at the end).
        let sep = if text.ends_with('\n') || text.is_empty() { "" } else { "\n" };
        return Ok(format!("{text}{sep}{}", b.replace));
    }
    let count = text.matches(b.search.as_str()).count();
    if count == 1 {
        return Ok(text.replacen(b.search.as_str(), &b.replace, 1));
    }
    if count > 1 {
        return Err(EditError::Ambiguous { path: path.to_string(), block, count });
    }
    let lines: Vec<&str> = text.lines().collect();
    let search: Vec<&str> = b.search.lines().collect();
    for loose in [false, true] {
        let key = |l: &str| if loose { l.trim().to_string() } else { l.trim_end().to_string() };
        let wanted: Vec<String> = search.iter().map(|l| key(l)).collect();
        let hits: Vec<usize> = (0..lines.len().saturating_sub(search.len() - 1))
            .filter(|&start| (0..search.len()).all(|k| key(lines[start + k]) == wanted[k]))
            .collect();
        match hits.len() {
            0 => continue,
            1 => {
                let start = hits[0];
                let replacement =
                    if loose { shift_indent(&b.replace, &search, &lines[start..]) } else { b.replace.clone() };
                let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
                out.extend(replacement.lines().map(str::to_string));
                out.extend(lines[start + search.len()..].iter().map(|l| l.to_string()));
                let mut s = out.join("\n");
                if text.ends_with('\n') {
                    s.push('\n');
                }
                return Ok(s);
            }
            n => return Err(EditError::Ambiguous { path: path.to_string(), block, count: n }),
        }
    }
    Err(EditError::SearchNotFound { path: path.to_string(), block, hint: did_you_mean(&lines, &search) })
}

fn indent(l: &str) -> &str {
    &l[..l.len() - l.trim_start().len()]
}

/// Re-indents `replace` by the difference between the search's and the match's first non-blank line.
fn shift_indent(replace: &str, search: &[&str], matched: &[&str]) -> String {
    let first = search.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let (from, to) = (indent(search[first]), indent(matched[first]));
    replace
        .lines()
        .map(|l| match l.strip_prefix(from) {
            Some(rest) if !l.trim().is_empty() => format!("{to}{rest}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The lines of the file most like the search text, quoted, for the model's next try.
fn did_you_mean(lines: &[&str], search: &[&str]) -> String {
    let n = search.len().max(1);
    if lines.len() < n {
        return String::new();
    }
    let wanted = search.iter().map(|l| l.trim()).collect::<Vec<_>>().join("\n");
    let best = (0..=lines.len() - n)
        .map(|start| {
            let window = lines[start..start + n].iter().map(|l| l.trim()).collect::<Vec<_>>().join("\n");
            (similar::TextDiff::from_chars(wanted.as_str(), window.as_str()).ratio(), start)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, start)) if score >= 0.5 => {
            format!("; did you mean these lines ({}-{})?\n{}", start + 1, start + n, lines[start..start + n].join("\n"))
        }
        _ => "; copy the SEARCH lines exactly from the file".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";

    fn block(search: &str, replace: &str) -> String {
        format!("```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n")
    }

    #[test]
    fn exact_loose_and_ambiguous_matches() {
        let reply = block("def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n");
        let blocks = parse_search_replace(&reply);
        assert_eq!(blocks.len(), 1);
        let out = apply_search_replace("calc.py", SRC, &blocks).unwrap();
        assert!(out.starts_with("def add(a, b):\n    return a + b\n"), "{out}");
        // Only the line, not unique: ambiguous.
        let amb = parse_search_replace(&block("    return a - b\n", "    return a + b\n"));
        let err = apply_search_replace("calc.py", SRC, &amb).unwrap_err();
        assert_eq!(err, EditError::Ambiguous { path: "calc.py".into(), block: 1, count: 2 });
        // A method quoted without its class indentation: matched loosely and re-indented.
        let class = "class C:\n    def sub(a, b):\n        return a - b\n";
        let loose =
            parse_search_replace(&block("def sub(a, b):\n    return a - b\n", "def sub(a, b):\n    return b - a\n"));
        let out = apply_search_replace("c.py", class, &loose).unwrap();
        assert_eq!(out, "class C:\n    def sub(a, b):\n        return b - a\n");
    }

    #[test]
    fn a_miss_says_what_was_meant() {
        let miss =
            parse_search_replace(&block("def add(x, y):\n    return x - y\n", "def add(x, y):\n    return x + y\n"));
        let err = apply_search_replace("calc.py", SRC, &miss).unwrap_err().to_string();
        expect_test::expect![[r#"
            the SEARCH text of block 1 was not found in `calc.py`; did you mean these lines (1-2)?
            def add(a, b):
                return a - b"#]]
        .assert_eq(&err);
        assert_eq!(apply_search_replace("calc.py", SRC, &[]).unwrap_err(), EditError::NoBlocks);
    }

    #[test]
    fn a_marker_needs_both_the_run_and_the_word() {
        let stray = "search\nfoo\n=======\nbar\n>>>>>>> REPLACE\n";
        assert!(parse_search_replace(stray).is_empty(), "a bare word is no marker");
        let conflict = "<<<<<<< HEAD\nfoo\n=======\nbar\n>>>>>>> REPLACE\n";
        assert!(parse_search_replace(conflict).is_empty(), "a merge marker is no SEARCH marker");
    }
}
