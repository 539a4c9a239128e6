//! Which file a fix edits: from a failing test to the code it exercises.
//!
//! Evidence, strongest first: frames of the traceback outside the tests (where
//! the error was raised), then definitions of what the failing test calls (from
//! the index's symbol table), then the failure's own file. Test files are
//! chosen only when nothing else is left (e.g. a syntax error in the test).

use crate::edits::is_test_path;
use regex::Regex;
use std::sync::LazyLock;

static PY_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"File "([^"]+\.py)", line (\d+)"#).expect("valid regex"));
static PATH_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^|[\s(])(/?(?:[\w.-]+/)*[\w.-]+\.(?:py|rs)):(\d+)(?::\d+)?").expect("valid regex")
});
static CALL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*[(!]").expect("valid regex"));
static TYPE_USE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b([A-Z][A-Za-z0-9_]*)\b").expect("valid regex"));

/// Names a test calls that are never the code under test (language builtins and test helpers).
const NOT_UNDER_TEST: [&str; 40] = [
    "assert",
    "assert_eq",
    "assert_ne",
    "assertEqual",
    "assertTrue",
    "assertFalse",
    "assertRaises",
    "assertIn",
    "assertAlmostEqual",
    "print",
    "println",
    "len",
    "range",
    "str",
    "int",
    "float",
    "list",
    "dict",
    "set",
    "tuple",
    "sorted",
    "isinstance",
    "raises",
    "approx",
    "vec",
    "format",
    "Some",
    "Ok",
    "Err",
    "None",
    "Vec",
    "String",
    "panic",
    "unwrap",
    "expect",
    "to_string",
    "into",
    "iter",
    "collect",
    "def",
];

/// A frame or location found in test output, workspace-relative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub line: usize,
}

/// Locations in `output` (Python tracebacks, `path:line` of pytest and Rust),
/// innermost last as the tools print them; paths inside a shadow are made relative.
pub fn frames_in(output: &str) -> Vec<Frame> {
    let mut out: Vec<(usize, Frame)> = Vec::new();
    for c in PY_FRAME.captures_iter(output) {
        let at = c.get(0).map(|m| m.start()).unwrap_or(0);
        out.push((at, Frame { path: relative(&c[1]), line: c[2].parse().unwrap_or(0) }));
    }
    for c in PATH_LINE.captures_iter(output) {
        let at = c.get(1).map(|m| m.start()).unwrap_or(0);
        out.push((at, Frame { path: relative(&c[1]), line: c[2].parse().unwrap_or(0) }));
    }
    out.sort_by_key(|(at, _)| *at);
    out.into_iter()
        .map(|(_, f)| f)
        .filter(|f| f.line > 0 && !f.path.contains("site-packages") && !f.path.starts_with('/'))
        .collect()
}

/// A path as the workspace names it: shadow prefixes (`…/shadows/<id>/tree/`) and `./` removed.
fn relative(path: &str) -> String {
    let p = path.replace('\\', "/");
    if let Some(i) = p.find("/shadows/") {
        if let Some(j) = p[i + 9..].find("/tree/") {
            return p[i + 9 + j + 6..].to_string();
        }
    }
    p.strip_prefix("./").unwrap_or(&p).to_string()
}

/// The names a piece of test code calls or constructs, in order of appearance, without repeats.
pub fn called_names(code: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let body: String = code.lines().skip_while(|l| !l.contains('(')).skip(1).collect::<Vec<_>>().join("\n");
    let body = if body.is_empty() { code.to_string() } else { body };
    for name in CALL
        .captures_iter(&body)
        .map(|c| c[1].to_string())
        .chain(TYPE_USE.captures_iter(&body).map(|c| c[1].to_string()))
    {
        if !NOT_UNDER_TEST.contains(&name.as_str()) && !name.starts_with("test") && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// A candidate file to edit, with the line to focus on and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: String,
    /// 1-based.
    pub line: usize,
    pub why: String,
}

/// Ranks the files to edit for a failure. `frames` come from [`frames_in`];
/// `definitions` are (name, path, line) of what the test calls; `failure` is the
/// failing test's own location; `exists` says whether a path is a workspace file.
pub fn rank_candidates(
    frames: &[Frame],
    definitions: &[(String, String, usize)],
    failure: Option<&Frame>,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |path: &str, line: usize, why: String| {
        if exists(path) && !out.iter().any(|c| c.path == path) {
            out.push(Candidate { path: path.to_string(), line, why });
        }
    };
    for f in frames.iter().rev().filter(|f| !is_test_path(&f.path)) {
        push(&f.path, f.line, format!("the error is raised at {}:{}", f.path, f.line));
    }
    for (name, path, line) in definitions.iter().filter(|(_, p, _)| !is_test_path(p)) {
        push(path, *line, format!("the failing test calls `{name}`, defined at {path}:{line}"));
    }
    // Rust unit tests live beside the code: the failure's own file is the code too.
    if let Some(f) = failure.filter(|f| f.path.ends_with(".rs")) {
        push(&f.path, f.line, format!("the test fails at {}:{} in the same file as the code", f.path, f.line));
    }
    for (name, path, line) in definitions {
        push(path, *line, format!("the failing test calls `{name}`, defined at {path}:{line}"));
    }
    if let Some(f) = failure {
        push(&f.path, f.line, format!("the failure is reported at {}:{}", f.path, f.line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTEST: &str = "\
_________________________________ test_total __________________________________

    def test_total():
        cart = Cart()
        cart.add(Item(\"pen\", 150))
>       assert cart.total_euros() == 1.5
E       assert 0.015 == 1.5

tests/test_cart.py:9: AssertionError
____________________________ test_money_rounding ______________________________

    def test_money_rounding():
>       assert to_cents(\"1.005\") == 101

shop/money.py:14: in to_cents
    return int(Decimal(value) * 100)
E   decimal.InvalidOperation

/root/.cache/tinycoder/workspaces/x/shadows/t-1/tree/shop/money.py:14: InvalidOperation
";

    #[test]
    fn frames_from_pytest_unittest_and_cargo() {
        let frames = frames_in(PYTEST);
        let shown: Vec<String> = frames.iter().map(|f| format!("{}:{}", f.path, f.line)).collect();
        assert_eq!(shown, vec!["tests/test_cart.py:9", "shop/money.py:14", "shop/money.py:14"]);
        let unittest = "Traceback (most recent call last):\n  File \"/tmp/x/shadows/a/tree/tests/test_a.py\", line 7, in test_a\n    self.assertEqual(f(1), 2)\n  File \"/tmp/x/shadows/a/tree/pkg/core.py\", line 3, in f\n";
        let f = frames_in(unittest);
        assert_eq!(f.last().map(|f| (f.path.as_str(), f.line)), Some(("pkg/core.py", 3)));
        let cargo = "thread 'tests::wraps' panicked at src/ring.rs:41:9:\nassertion `left == right` failed\n";
        assert_eq!(frames_in(cargo), vec![Frame { path: "src/ring.rs".into(), line: 41 }]);
    }

    #[test]
    fn called_names_skip_builtins_and_asserts() {
        let code = "def test_total():\n    cart = Cart()\n    cart.add(Item(\"pen\", 150))\n    assert cart.total_euros() == 1.5\n";
        assert_eq!(called_names(code), vec!["Cart", "add", "Item", "total_euros"]);
        let rust = "#[test]\nfn wraps() {\n    let mut r = Ring::new(2);\n    assert_eq!(r.push(1), None);\n}\n";
        assert_eq!(called_names(rust), vec!["new", "push", "Ring"]);
    }

    #[test]
    fn candidates_prefer_raising_frames_then_called_code_and_skip_tests() {
        let frames = frames_in(PYTEST);
        let defs = vec![("total_euros".to_string(), "shop/cart.py".to_string(), 20)];
        let failure = Frame { path: "tests/test_cart.py".into(), line: 9 };
        let exists = |p: &str| p != "missing.py";
        let c = rank_candidates(&frames, &defs, Some(&failure), &exists);
        let paths: Vec<&str> = c.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, vec!["shop/money.py", "shop/cart.py", "tests/test_cart.py"]);
        assert!(c[0].why.contains("raised at shop/money.py:14"), "{}", c[0].why);
    }
}
