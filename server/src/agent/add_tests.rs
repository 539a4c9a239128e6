//! Writing tests for a definition: which test file they go into, what the
//! coder is shown, and the check that an edit only adds tests. The new tests
//! must pass in the shadow like any other attempt (`state::judge`): a test the
//! edit adds is a test that did not fail before, so a failing one is a new failure.

use super::env::AgentEnv;
use super::request::Location;
use super::state::{Target, TestSummary};
use crate::edits::is_test_path;
use crate::syntax::{extract_symbols, language_for_path, parse, SymbolKind};
use std::collections::BTreeMap;
use std::path::Path;

/// The definition to test: its name and 1-based lines, and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub name: String,
    pub start_line: usize,
    pub end_line: usize,
    pub code: String,
}

/// The innermost function, method or class around 1-based `line` of `path`.
pub fn subject_at(path: &str, text: &str, line: usize) -> Option<Subject> {
    let lang = language_for_path(Path::new(path))?;
    let tree = parse(lang, text)?;
    let row = line.saturating_sub(1);
    extract_symbols(lang, &tree, text.as_bytes())
        .into_iter()
        .filter(|s| {
            matches!(
                s.kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Class | SymbolKind::Struct | SymbolKind::Enum
            )
        })
        .filter(|s| s.start.row <= row && row <= s.end.row)
        .min_by_key(|s| s.end.row - s.start.row)
        .map(|s| Subject {
            name: s.name.clone(),
            start_line: s.start.row + 1,
            end_line: s.end.row + 1,
            code: text[s.byte_range.clone()].to_string(),
        })
}

/// The test file that best fits tests of `name` from `path`, among `files`
/// (path → names it references): one already naming the definition, then one
/// naming its module, then one whose file name holds the module's. A Rust file
/// is its own test file (unit tests live beside the code) when no other fits.
pub fn pick_test_file(path: &str, name: &str, files: &BTreeMap<String, Vec<String>>) -> Option<String> {
    let stem = Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let ext = Path::new(path).extension().and_then(|s| s.to_str()).unwrap_or("");
    let score = |file: &str, refs: &[String]| -> usize {
        let file_name = Path::new(file).file_name().and_then(|s| s.to_str()).unwrap_or("");
        let mut s = 0;
        if refs.iter().any(|r| r == name) {
            s += 4;
        }
        // A test file named after the module is its home; one that imports it comes next.
        if !stem.is_empty() && file_name.contains(stem) {
            s += 2;
        }
        if !stem.is_empty() && refs.iter().any(|r| r == stem) {
            s += 1;
        }
        s
    };
    let best = files
        .iter()
        .filter(|(f, _)| is_test_path(f) && f.as_str() != path && f.ends_with(&format!(".{ext}")))
        .map(|(f, refs)| (score(f, refs), f))
        .filter(|(s, _)| *s > 0)
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, f)| f.clone());
    best.or_else(|| (ext == "rs").then(|| path.to_string()))
}

/// The target of a request for tests of the definition at `loc`: the test file,
/// with the definition shown beside it (never edited).
pub fn tests_target(env: &AgentEnv, loc: &Location, test_file: Option<&str>) -> Result<Target, String> {
    let source = env
        .sources
        .read(&loc.path)
        .ok_or_else(|| format!("`{}` is not a readable text file in the workspace", loc.path))?;
    let subject = subject_at(&loc.path, &source, loc.focus())
        .ok_or_else(|| format!("there is no function or class at {loc} to write tests for"))?;
    let file = match test_file {
        Some(f) => f.to_string(),
        None => {
            let refs = env.index.with_files(|t| {
                t.files.iter().map(|(p, r)| (p.clone(), r.references.clone())).collect::<BTreeMap<_, _>>()
            });
            pick_test_file(&loc.path, &subject.name, &refs).ok_or_else(|| {
                format!(
                    "no test file of the project fits tests of `{}`: create one (e.g. tests/test_{}.py) and ask again",
                    subject.name,
                    Path::new(&loc.path).file_stem().and_then(|s| s.to_str()).unwrap_or("module")
                )
            })?
        }
    };
    let before = env.sources.read(&file).ok_or_else(|| format!("`{file}` is not a readable text file"))?;
    let last = before.lines().count().max(1);
    let shown = format!("{}:{}-{}", loc.path, subject.start_line, subject.end_line);
    Ok(Target {
        path: file.clone(),
        start_line: last,
        end_line: last,
        message: format!("`{}` ({shown})", subject.name),
        why: format!("tests of `{}` go into {file}", subject.name),
        before,
        subject: Some((shown, subject.code)),
        ..Default::default()
    })
}

/// Every definition of `text` (nested ones included); none when it does not parse.
fn definitions(lang: &'static crate::syntax::LanguageSpec, text: &str) -> Vec<crate::syntax::Symbol> {
    parse(lang, text).map(|t| extract_symbols(lang, &t, text.as_bytes())).unwrap_or_default()
}

/// `reply` without the top-level definitions `before` already has: small models
/// often repeat the existing tests around the new ones, and only the new ones
/// are wanted. The reply is returned unchanged when it has no code to parse.
pub fn without_existing_definitions(path: &str, before: &str, reply: &str) -> String {
    crate::edits::filter_reply_definitions(path, before, reply, crate::edits::KeepDefinitions::New)
}

/// `before` with the reply's code appended, when that code defines only names
/// `before` does not have (new tests); `None` otherwise (the reply then goes
/// through the ordinary edit format). The result must still parse.
pub fn append_new_tests(path: &str, before: &str, reply: &str) -> Option<crate::edits::EditOutcome> {
    let lang = language_for_path(Path::new(path))?;
    let code = distinct_complete_definitions(lang, &crate::edits::fence::reply_code(reply)?);
    let names = |text: &str| -> Vec<String> {
        definitions(lang, text).into_iter().filter(|s| s.parent.is_none()).map(|s| s.name).collect()
    };
    let old = names(before);
    let new = names(&code);
    if new.is_empty() || new.iter().any(|n| old.contains(n)) {
        return None;
    }
    let after = format!("{}\n\n\n{}\n", before.trim_end(), code.trim());
    if !crate::edits::new_syntax_errors(path, before, &after).is_empty() {
        return None;
    }
    Some(crate::edits::EditOutcome {
        changes: vec![(path.to_string(), after)],
        changed_symbols: new,
        kept_documentation_lines: 0,
    })
}

/// `code` with each top-level definition once (the first) and without those
/// that do not parse on their own: a small model that rambles repeats one test
/// until the reply is cut at the token cap, mid-definition. What comes before
/// the first definition (imports) stays; `code` is returned as it is when it
/// has no definitions.
fn distinct_complete_definitions(lang: &'static crate::syntax::LanguageSpec, code: &str) -> String {
    let tops: Vec<crate::syntax::Symbol> = definitions(lang, code).into_iter().filter(|s| s.parent.is_none()).collect();
    let Some(first) = tops.first() else { return code.to_string() };
    let lines: Vec<&str> = code.lines().collect();
    let start_of = |row: usize| first_line_with_attributes(&lines, row);
    let mut out = vec![lines[..start_of(first.start.row)].join("\n").trim_end().to_string()];
    let mut seen: Vec<&str> = Vec::new();
    for s in &tops {
        let text = lines[start_of(s.start.row)..=s.end.row.min(lines.len() - 1)].join("\n");
        let parses = parse(lang, &text).is_some_and(|t| !t.root_node().has_error());
        if parses && !seen.contains(&s.name.as_str()) {
            seen.push(&s.name);
            out.push(text);
        }
    }
    out.retain(|p| !p.is_empty());
    out.join("\n\n\n")
}

/// The 0-based row where the definition on `row` of `lines` starts once the
/// decorators or attributes directly above it (`@pytest.mark...`, `#[test]`) are counted.
fn first_line_with_attributes(lines: &[&str], row: usize) -> usize {
    let mut first = row;
    while first > 0 && {
        let above = lines[first - 1].trim_start();
        above.starts_with('@') || above.starts_with("#[")
    } {
        first -= 1;
    }
    first
}

/// Checks that `after` only adds tests to `path`: at least one new test
/// definition, and no existing definition changed. Returns the new tests' names.
pub fn check_added_tests(path: &str, before: &str, after: &str) -> Result<Vec<String>, String> {
    let names = |text: &str| -> Vec<String> {
        let Some(lang) = language_for_path(Path::new(path)) else { return Vec::new() };
        definitions(lang, text).into_iter().map(|s| s.name).collect()
    };
    let old = names(before);
    let changed: Vec<String> =
        crate::edits::changed_symbols(path, before, after).into_iter().filter(|n| old.contains(n)).collect();
    if !changed.is_empty() {
        return Err(format!(
            "the edit changes existing code ({}); add new test functions and leave everything else as it is",
            changed.join(", ")
        ));
    }
    let added: Vec<String> = names(after)
        .into_iter()
        .filter(|n| !old.contains(n) && (n.starts_with("test") || n.starts_with("Test")))
        .collect();
    if added.is_empty() {
        return Err("the edit adds no test function (names start with `test`)".into());
    }
    Ok(added)
}

/// Changed files and their new text.
type FileChanges = Vec<(String, String)>;

/// The candidate without the new tests that fail on the current code, when
/// only new tests fail and at least one new test is left: the pruned changes
/// and the names left out. A generated test that fails expects what the code
/// does not do (from a small model, more often a wrong expectation than a
/// found bug); either way it is not a test to add as passing.
pub fn without_failing_new_tests(
    changes: &[(String, String)],
    target: &Target,
    baseline: &TestSummary,
    after: &TestSummary,
) -> Option<(FileChanges, Vec<String>)> {
    let failing: Vec<String> = after
        .failing
        .iter()
        .filter(|t| !baseline.failing.contains(t))
        .map(|t| short_test_name(t).to_string())
        .collect();
    if failing.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    for (path, text) in changes {
        let before = target.before_of(path).unwrap_or("");
        let added = check_added_tests(path, before, text).ok()?;
        let here: Vec<String> = failing.iter().filter(|f| added.contains(f)).cloned().collect();
        if here.len() == added.len() {
            return None;
        }
        let pruned = if here.is_empty() { text.clone() } else { remove_definitions(path, text, &here)? };
        if !crate::edits::new_syntax_errors(path, before, &pruned).is_empty() {
            return None;
        }
        dropped.extend(here);
        out.push((path.clone(), pruned));
    }
    // A failure that is not one of the new tests is a real breakage: nothing to prune.
    (failing.iter().all(|f| dropped.contains(f))).then_some((out, dropped))
}

/// A candidate that passes once its failing new tests are left out.
pub struct PrunedTests {
    pub changes: FileChanges,
    pub tests: TestSummary,
    /// The judgement of the rerun, naming the tests left out.
    pub why: String,
    pub left_out: Vec<String>,
}

/// [`without_failing_new_tests`], run again in the shadow: `Some` when the
/// rest passes (nothing that passed before breaks).
pub async fn passing_without_failing_new_tests(
    env: &AgentEnv,
    changes: &[(String, String)],
    target: &Target,
    baseline: &TestSummary,
    after: &TestSummary,
    cancel: &tokio_util::sync::CancellationToken,
) -> Option<PrunedTests> {
    let (pruned, left_out) = without_failing_new_tests(changes, target, baseline, after)?;
    let tests = super::steps::run_tests(env, &pruned, cancel).await.ok()?;
    let (ok, judged) = super::state::judge(baseline, &tests, None);
    let why = format!(
        "{judged}; left out {} new test(s) that fail on the current code: {}",
        left_out.len(),
        left_out.join(", ")
    );
    ok.then_some(PrunedTests { changes: pruned, tests, why, left_out })
}

/// `tests/test_a.py::TestX::test_y[1]` -> `test_y`; `tests::adds_one` -> `adds_one`.
fn short_test_name(test: &str) -> &str {
    let last = test.rsplit("::").next().unwrap_or(test);
    last.split('[').next().unwrap_or(last)
}

/// `text` without the functions named in `names`, with their decorators or
/// attributes (`@pytest.mark...`, `#[test]`); `None` when one is not found.
fn remove_definitions(path: &str, text: &str, names: &[String]) -> Option<String> {
    let lang = language_for_path(Path::new(path))?;
    let defs: Vec<crate::syntax::Symbol> = definitions(lang, text)
        .into_iter()
        .filter(|s| matches!(s.kind, SymbolKind::Function | SymbolKind::Method) && names.contains(&s.name))
        .collect();
    if names.iter().any(|n| !defs.iter().any(|d| &d.name == n)) {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    for d in &defs {
        let first = first_line_with_attributes(&lines, d.start.row);
        for flag in drop.iter_mut().take(d.end.row + 1).skip(first) {
            *flag = true;
        }
    }
    let mut out: Vec<&str> = Vec::new();
    for (line, _) in lines.iter().zip(&drop).filter(|(_, d)| !**d) {
        // At most two blank lines in a row where definitions were taken out.
        if line.trim().is_empty() && out.len() >= 2 && out[out.len() - 2..].iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(line);
    }
    Some(format!("{}\n", out.join("\n").trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_file_that_names_the_definition_wins() {
        let files: BTreeMap<String, Vec<String>> = [
            ("shop/prices.py", vec!["item_price", "total_price"]),
            ("tests/test_other.py", vec!["shop"]),
            ("tests/test_prices.py", vec!["shop", "total_price"]),
            ("tests/test_cart.py", vec!["prices"]),
        ]
        .into_iter()
        .map(|(p, r)| (p.to_string(), r.into_iter().map(String::from).collect()))
        .collect();
        assert_eq!(pick_test_file("shop/prices.py", "total_price", &files).as_deref(), Some("tests/test_prices.py"));
        assert_eq!(pick_test_file("shop/prices.py", "unknown", &files).as_deref(), Some("tests/test_prices.py"));
        // A test file named after the module is its home even when it names nothing of it yet.
        assert_eq!(pick_test_file("lib/other.py", "f", &files).as_deref(), Some("tests/test_other.py"));
        assert_eq!(pick_test_file("lib/zeta.py", "f", &files), None);
        assert_eq!(pick_test_file("src/ring.rs", "push", &files).as_deref(), Some("src/ring.rs"));
    }

    #[test]
    fn repeated_existing_tests_are_dropped_from_the_reply() {
        let before = "from shop import f\n\n\ndef test_a():\n    assert f(1) == 1\n";
        let reply = "```python\ndef test_a():\n    assert f(1) == 2\n\n\ndef test_b():\n    assert f(2) == 2\n```";
        let kept = without_existing_definitions("tests/test_f.py", before, reply);
        assert!(!kept.contains("def test_a") && kept.contains("def test_b"), "{kept}");
        // Nothing new: the reply stays as it was, for the check to explain.
        let same = "```python\ndef test_a():\n    assert f(1) == 1\n```";
        assert_eq!(without_existing_definitions("tests/test_f.py", before, same), same);
    }

    #[test]
    fn new_tests_are_appended_to_the_test_file() {
        let before = "from shop import f\n\n\ndef test_a():\n    assert f(1) == 1\n";
        let reply = "```python\ndef test_b():\n    assert f(2) == 2\n```";
        let out = append_new_tests("tests/test_f.py", before, reply).expect("appended");
        assert!(out.changes[0].1.starts_with(before.trim_end()) && out.changes[0].1.contains("def test_b"));
        assert_eq!(check_added_tests("tests/test_f.py", before, &out.changes[0].1).unwrap(), vec!["test_b"]);
        // A reply that touches an existing definition is not an append.
        assert!(append_new_tests("tests/test_f.py", before, "```python\ndef test_a():\n    pass\n```").is_none());
    }

    #[test]
    fn only_new_tests_pass_the_check() {
        let before = "from shop import f\n\n\ndef test_a():\n    assert f(1) == 1\n";
        let added = format!("{before}\n\ndef test_b():\n    assert f(2) == 2\n");
        assert_eq!(check_added_tests("tests/test_f.py", before, &added).unwrap(), vec!["test_b"]);
        let changed = "from shop import f\n\n\ndef test_a():\n    assert True\n";
        assert!(check_added_tests("tests/test_f.py", before, changed).unwrap_err().contains("test_a"));
        let helper = format!("{before}\n\ndef helper():\n    return 1\n");
        assert!(check_added_tests("tests/test_f.py", before, &helper).unwrap_err().contains("no test"));
        let s = subject_at("a.py", "x = 1\n\ndef f(a):\n    return a\n", 4).unwrap();
        assert_eq!((s.name.as_str(), s.start_line, s.end_line), ("f", 3, 4));
    }

    #[test]
    fn failing_new_tests_are_left_out_when_others_pass() {
        let before = "from shop import f\n\n\ndef test_a():\n    assert f(1) == 1\n";
        let after = format!("{before}\n\n@pytest.mark.slow\ndef test_b():\n    assert f(2) == 3\n\n\ndef test_c():\n    assert f(3) == 3\n");
        let target = Target { path: "tests/test_f.py".into(), before: before.into(), ..Default::default() };
        let summary = |failing: &[&str]| TestSummary {
            available: true,
            passed: failing.is_empty(),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let changes = vec![("tests/test_f.py".to_string(), after.clone())];
        let (pruned, dropped) =
            without_failing_new_tests(&changes, &target, &summary(&[]), &summary(&["tests/test_f.py::test_b"]))
                .expect("pruned");
        assert_eq!(dropped, vec!["test_b"]);
        assert_eq!(pruned[0].1, format!("{before}\n\ndef test_c():\n    assert f(3) == 3\n"), "decorator gone too");
        // Every new test fails, or an old one breaks: nothing to keep.
        let both = summary(&["tests/test_f.py::test_b", "tests/test_f.py::test_c"]);
        assert!(without_failing_new_tests(&changes, &target, &summary(&[]), &both).is_none());
        let old = summary(&["tests/test_f.py::test_b", "tests/test_f.py::test_a"]);
        assert!(without_failing_new_tests(&changes, &target, &summary(&[]), &old).is_none());
        assert_eq!(short_test_name("t.py::TestX::test_y[1-2]"), "test_y");
    }

    #[test]
    fn a_rambling_reply_keeps_each_test_once_and_drops_a_cut_one() {
        let py = language_for_path(Path::new("t.py")).expect("python");
        let code = "from shop import f\n\ndef test_a():\n    assert f(1) == 1\n\n@pytest.mark.x\ndef test_b():\n    assert f(2) == 2\n\ndef test_a():\n    assert f(3) == 3\n\ndef test_c():\n    assert f(";
        assert_eq!(
            distinct_complete_definitions(py, code),
            "from shop import f\n\n\ndef test_a():\n    assert f(1) == 1\n\n\n@pytest.mark.x\ndef test_b():\n    assert f(2) == 2"
        );
        assert_eq!(distinct_complete_definitions(py, "x = 1\n"), "x = 1\n");
    }
}
