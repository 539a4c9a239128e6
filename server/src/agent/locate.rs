//! Finding the code behind a failure: the failing test's frames and calls
//! ranked to one definition (see `target.rs`), and the definitions it calls
//! in other files, which the coder may change too.

use super::env::AgentEnv;
use super::observed::{is_call_of, value_origin};
use super::state::{lines_of, RelatedDefinition, Target, TestSummary};
use super::target::{
    called_names, frames_in, message_body, names_word, rank_candidates, rank_suspects, writes_message, Candidate, Frame,
};
use super::test_output::failure_excerpt;
use crate::sandbox::TracedCall;
use std::path::Path;

/// A definition around a line: its 1-based first and last lines, name and source.
pub struct Enclosing {
    pub start_line: usize,
    pub end_line: usize,
    pub name: String,
    pub code: String,
}

impl Enclosing {
    /// Its first and last lines.
    pub fn lines(&self) -> (usize, usize) {
        (self.start_line, self.end_line)
    }
}

/// The enclosing definition (function or method) of 1-based `line` in `path`.
pub fn enclosing_definition(path: &str, text: &str, line: usize) -> Option<Enclosing> {
    use crate::syntax::SymbolKind;
    smallest_enclosing(path, text, line, &[SymbolKind::Function, SymbolKind::Method])
}

/// The smallest symbol of one of `kinds` around 1-based `line` in `path`.
fn smallest_enclosing(path: &str, text: &str, line: usize, kinds: &[crate::syntax::SymbolKind]) -> Option<Enclosing> {
    let lang = crate::syntax::language_for_path(Path::new(path))?;
    let tree = crate::syntax::parse(lang, text)?;
    let symbols = crate::syntax::extract_symbols(lang, &tree, text.as_bytes());
    let row = line.saturating_sub(1);
    let s = symbols
        .into_iter()
        .filter(|s| kinds.contains(&s.kind))
        .filter(|s| s.start.row <= row && row <= s.end.row)
        .min_by_key(|s| s.end.row - s.start.row)?;
    Some(Enclosing {
        start_line: s.start.row + 1,
        end_line: s.end.row + 1,
        code: text[s.byte_range.clone()].to_string(),
        name: s.name,
    })
}

pub fn read_target(env: &AgentEnv, path: &str) -> Result<String, String> {
    env.sources
        .read(path)
        .ok_or_else(|| format!("`{path}` is not a readable text file in the workspace {}", env.paths.root.display()))
}

/// From a test failure to the code it exercises (see `target.rs`); `reported`
/// is the user's own description of the problem, if any; `calls` what the
/// failing test was seen calling (empty when it was not traced).
pub fn locate_failure(
    env: &AgentEnv,
    baseline: &TestSummary,
    failure: Option<&crate::sandbox::TestFailure>,
    reported: Option<&str>,
    calls: &[TracedCall],
) -> Option<Target> {
    let failure = failure?;
    let excerpt = failure_excerpt(&baseline.output_tail, Some(&failure.test), 400);
    let frames = frames_in(&excerpt);
    let failure_frame = test_frame(failure, &frames);
    let test_text = failure_frame.as_ref().and_then(|f| env.sources.read(&f.path));
    let test_def = match (&failure_frame, &test_text) {
        (Some(f), Some(text)) => enclosing_definition(&f.path, text, f.line),
        _ => None,
    };
    // What the failing line calls comes first: that is what the assertion checks.
    let mut names = match (&failure_frame, &test_text) {
        (Some(f), Some(text)) => called_names(text.lines().nth(f.line.saturating_sub(1)).unwrap_or("")),
        _ => Vec::new(),
    };
    for n in test_def.as_ref().map(|d| called_names(&d.code)).unwrap_or_default() {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let definitions: Vec<(String, String, usize)> = env.index.with_files(|table| {
        let mut out = Vec::new();
        // Functions and methods before classes: the code that runs.
        for holders in [false, true] {
            for name in &names {
                for (path, record) in &table.files {
                    for s in record.symbols.iter().filter(|s| &s.name == name && is_holder_kind(&s.kind) == holders) {
                        out.push((name.clone(), path.clone(), s.start_line));
                    }
                }
            }
        }
        out
    });
    let exists = |p: &str| env.sources.read(p).is_some();
    let raisers = raising_definitions(env, &failure.message);
    let mut candidates = rank_candidates(&frames, &definitions, failure_frame.as_ref(), &exists);
    // The code that wrote the message raised the error: stronger than any frame,
    // which may stop above it (`raise ... from None`, an error passed up as a value).
    if let Some(r) = raisers.first() {
        let why = format!("the failure's message is written in `{}` at {}:{}", r.name, r.path, r.start_line);
        candidates.insert(0, Candidate { path: r.path.clone(), line: r.start_line, why });
    }
    let best = candidates.first()?;
    let before = env.sources.read(&best.path)?;
    let enclosing = enclosing_definition(&best.path, &before, best.line);
    let (a, z) = enclosing.as_ref().map(Enclosing::lines).unwrap_or((best.line, best.line));
    // Outside any function (a class the test constructs, a struct), what the
    // whole enclosing type calls, or the whole file's calls, lead to related code.
    let focus = enclosing
        .as_ref()
        .map(Enclosing::lines)
        .or_else(|| {
            use crate::syntax::SymbolKind::{Class, Impl, Trait};
            smallest_enclosing(&best.path, &before, best.line, &[Class, Impl, Trait]).as_ref().map(Enclosing::lines)
        })
        .unwrap_or((1, before.lines().count().max(1)));
    let (mut related, reached) = related_definitions(env, &best.path, &before, focus, &names);
    lead_with(&mut related, raisers.iter().filter(|r| r.path != best.path));
    // Without other evidence, the deepest calls first: the entry point a test
    // names mostly passes values on, and what it calls computes them. Only
    // code the coder is shown (its file, the related definitions) can be a suspect.
    let mut reached: Vec<(RelatedDefinition, usize)> =
        reached.into_iter().filter(|(d, _)| d.path == best.path || related.contains(d)).collect();
    reached.sort_by_key(|(_, hop)| std::cmp::Reverse(*hop));
    let entry = enclosing.map(|d| RelatedDefinition {
        path: best.path.clone(),
        name: d.name,
        start_line: d.start_line,
        end_line: d.end_line,
        raises: false,
    });
    let suspects = reached.into_iter().map(|(d, _)| d).chain(entry).collect();
    let mut suspects = rank_suspects(suspects, &excerpt, &frames);
    lead_with(&mut suspects, raisers.iter());
    // The call that computed the wrong value is stronger evidence than any
    // name in the message: the entry point the assertion names only passed it on.
    let computed_by = value_origin(calls, &excerpt).and_then(|o| suspects.iter().find(|d| is_call_of(o, d)).cloned());
    lead_with(&mut suspects, computed_by.iter());
    let observed: Vec<TracedCall> =
        calls.iter().filter(|c| suspects.iter().any(|d| is_call_of(c, d))).cloned().collect();
    let related_files = related.iter().filter_map(|d| Some((d.path.clone(), env.sources.read(&d.path)?))).collect();
    let test_source = match (&failure_frame, test_def) {
        (Some(f), Some(d)) if f.path != best.path || !(d.start_line..=d.end_line).contains(&best.line) => {
            let max_lines = env.config.budget.test_value_lines as usize;
            let text = test_text.as_deref().unwrap_or("");
            Some(with_module_values(&f.path, text, d.lines(), d.code, max_lines))
        }
        _ => None,
    };
    Some(Target {
        path: best.path.clone(),
        start_line: a,
        end_line: z,
        test: Some(failure.test.clone()),
        message: failure.message.clone(),
        test_source,
        why: best.why.clone(),
        before,
        protect_tests: true,
        related,
        related_files,
        suspects,
        subject: None,
        reported: reported.map(str::trim).filter(|r| !r.is_empty()).map(String::from),
        observed,
        computed_by,
    })
}

/// `list` with `first` in front, in their order, each only once.
fn lead_with<'a>(list: &mut Vec<RelatedDefinition>, first: impl Iterator<Item = &'a RelatedDefinition>) {
    let first: Vec<RelatedDefinition> = first.cloned().collect();
    list.retain(|d| !first.iter().any(|f| f.same_place(d)));
    list.splice(0..0, first);
}

/// Where the failing test itself stands: the innermost frame in the test's own
/// file (pytest names it first in the test id), else the failure's location.
/// The failure's location alone can be the code the error was raised in.
fn test_frame(failure: &crate::sandbox::TestFailure, frames: &[Frame]) -> Option<Frame> {
    let own_file = failure.test.split("::").next().filter(|f| f.ends_with(".py") || f.ends_with(".rs"));
    own_file.filter(|f| *f != failure.file).and_then(|f| frames.iter().rev().find(|fr| fr.path == f).cloned()).or_else(
        || (!failure.file.is_empty()).then(|| Frame { path: failure.file.clone(), line: failure.line as usize }),
    )
}

/// Definitions outside the tests that write (part of) `message` in a string
/// literal, found among the index's hits for it: where the error was raised,
/// also when the traceback does not show it.
fn raising_definitions(env: &AgentEnv, message: &str) -> Vec<RelatedDefinition> {
    let budget = &env.config.budget;
    let body = message_body(message);
    if body.is_empty() {
        return Vec::new();
    }
    let hits = match env.index.search(body, budget.message_search_hits as usize) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!("searching the failure's message: {e}");
            return Vec::new();
        }
    };
    let mut found: Vec<(usize, RelatedDefinition)> = hits
        .into_iter()
        .filter(|h| !h.is_test && !crate::edits::is_test_path(&h.path) && !h.symbol.is_empty())
        .filter(|h| matches!(h.kind.as_str(), "function" | "method"))
        .filter_map(|h| {
            let at = writes_message(&h.body, message, budget.message_piece_chars as usize)?;
            // A chunk can be part of a long definition: show the whole one.
            let d = enclosing_definition(&h.path, &env.sources.read(&h.path)?, h.start_line)?;
            let def = RelatedDefinition {
                path: h.path,
                name: d.name,
                start_line: d.start_line,
                end_line: d.end_line,
                raises: true,
            };
            Some((at, def))
        })
        .collect();
    // A wrapped error puts the inner one's text last ("key from env: not a
    // boolean"): the piece latest in the message is the innermost raise.
    found.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    found.dedup_by(|a, b| a.1.same_place(&b.1));
    found.into_iter().map(|(_, d)| d).collect()
}

/// The failing test's location and source, after the module-level values it
/// uses (its data: without `LOG = [...]` the model cannot tell what the code
/// gets), each cut to `max_lines` (without a marker: a small model copies
/// markers into code).
fn with_module_values(
    path: &str,
    text: &str,
    test: (usize, usize),
    code: String,
    max_lines: usize,
) -> (String, String) {
    let (a, z) = test;
    let values: Vec<crate::syntax::ModuleValue> = crate::syntax::language_for_path(Path::new(path))
        .map(|lang| crate::syntax::module_values(lang, text))
        .unwrap_or_default()
        .into_iter()
        .filter(|v| v.end_line < a && code.lines().any(|l| names_word(l, &v.name)))
        .collect();
    if values.is_empty() {
        return (format!("{path}:{a}-{z}"), code);
    }
    let mut shown = String::new();
    for v in &values {
        let end = v.end_line.min(v.start_line + max_lines.max(1) - 1);
        shown.push_str(&lines_of(text, v.start_line, end));
        shown.push_str("\n\n");
    }
    let names: Vec<String> = values.iter().map(|v| format!("`{}`", v.name)).collect();
    (format!("{path}:{a}-{z}, after {} from the same file", names.join(", ")), format!("{shown}{code}"))
}

fn is_holder_kind(kind: &str) -> bool {
    matches!(kind, "class" | "impl" | "struct" | "trait" | "module" | "enum")
}

/// Functions in other files than `path` that the code under test calls: what
/// the test calls and what the focused code calls, then what those call, breadth
/// first up to `budget.related_hops` calls deep and `budget.related_symbols` in all.
/// A bug is often a few calls below the function the test names. Returns those
/// in other files (shown to the coder), and every definition reached, in
/// `path` too, with the number of calls it is below the test.
fn related_definitions(
    env: &AgentEnv,
    path: &str,
    text: &str,
    focus: (usize, usize),
    test_calls: &[String],
) -> (Vec<RelatedDefinition>, Vec<(RelatedDefinition, usize)>) {
    let limit = env.config.budget.related_symbols as usize;
    let hops = env.config.budget.related_hops.max(1) as usize;
    env.index.with_files(|table| {
        let defs_of = |names: &[String]| -> Vec<RelatedDefinition> {
            let mut out = Vec::new();
            for name in names {
                for (file, record) in &table.files {
                    if crate::edits::is_test_path(file) {
                        continue;
                    }
                    for s in record.symbols.iter().filter(|s| &s.name == name && !is_holder_kind(&s.kind)) {
                        out.push(RelatedDefinition {
                            path: file.clone(),
                            name: name.clone(),
                            start_line: s.start_line,
                            end_line: s.end_line,
                            raises: false,
                        });
                    }
                }
            }
            out
        };
        let mut named: Vec<String> = test_calls.to_vec();
        let mut level: Vec<String> = test_calls.to_vec();
        for n in called_names(&lines_of(text, focus.0, focus.1)) {
            if !named.contains(&n) {
                named.push(n.clone());
                level.push(n);
            }
        }
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut out: Vec<RelatedDefinition> = Vec::new();
        let mut reached: Vec<(RelatedDefinition, usize)> = Vec::new();
        for hop in 0..hops {
            let mut next: Vec<String> = Vec::new();
            for d in defs_of(&level) {
                if seen.contains(&(d.path.clone(), d.start_line)) {
                    continue;
                }
                seen.push((d.path.clone(), d.start_line));
                let body = match d.path == path {
                    true => d.lines_in(text),
                    false => env.sources.read(&d.path).map(|t| d.lines_in(&t)).unwrap_or_default(),
                };
                for n in called_names(&body) {
                    if !named.contains(&n) {
                        named.push(n.clone());
                        next.push(n);
                    }
                }
                reached.push((d.clone(), hop));
                // The target file is shown itself.
                if d.path != path {
                    out.push(d);
                }
            }
            if next.is_empty() || out.len() >= limit {
                break;
            }
            level = next;
        }
        out.truncate(limit);
        (out, reached)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_is_shown_after_the_values_it_uses_cut_to_the_limit() {
        let text = "from calc import add\n\nCASES = [\n    (1, 2, 3),\n    (2, 3, 5),\n    (0, 0, 0),\n]\nOTHER = 1\n\n\ndef test_add():\n    for a, b, want in CASES:\n        assert add(a, b) == want\n";
        let code = lines_of(text, 11, 13);
        let (title, shown) = with_module_values("tests/test_calc.py", text, (11, 13), code.clone(), 3);
        assert_eq!(title, "tests/test_calc.py:11-13, after `CASES` from the same file");
        assert_eq!(
            shown,
            format!("CASES = [\n    (1, 2, 3),\n    (2, 3, 5),\n\n{code}"),
            "cut to 3 lines, OTHER unused"
        );
        let (title, shown) =
            with_module_values("tests/test_calc.py", "def test_x():\n    pass\n", (1, 2), "x".into(), 3);
        assert_eq!((title.as_str(), shown.as_str()), ("tests/test_calc.py:1-2", "x"));
    }

    #[test]
    fn the_tests_own_frame_comes_before_the_place_the_error_was_raised() {
        use crate::sandbox::TestFailure;
        let failure = TestFailure {
            file: "app/loader.py".into(),
            line: 81,
            test: "tests/test_loader.py::test_debug[True]".into(),
            message: "boom".into(),
        };
        let frames = vec![
            Frame { path: "tests/test_loader.py".into(), line: 35 },
            Frame { path: "app/loader.py".into(), line: 102 },
            Frame { path: "app/loader.py".into(), line: 81 },
        ];
        assert_eq!(test_frame(&failure, &frames), Some(Frame { path: "tests/test_loader.py".into(), line: 35 }));
        // Without the test's file among the frames (a Rust test id), the failure's location.
        let rust = TestFailure { test: "tests::parses".into(), file: "src/lib.rs".into(), line: 9, ..failure };
        assert_eq!(test_frame(&rust, &frames), Some(Frame { path: "src/lib.rs".into(), line: 9 }));
    }
}
