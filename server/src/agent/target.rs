//! Which file a fix edits: from a failing test to the code it exercises.
//!
//! Evidence, strongest first: frames of the traceback outside the tests (where
//! the error was raised), then definitions of what the failing test calls (from
//! the index's symbol table), then the failure's own file. Test files are
//! chosen only when nothing else is left (e.g. a syntax error in the test).

use super::state::RelatedDefinition;
use crate::edits::is_test_path;
use regex::Regex;
use std::sync::LazyLock;

static PY_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"File "([^"]+\.py)", line (\d+)"#).expect("valid regex"));
static PATH_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^|[\s(])(/?(?:[\w.-]+/)*[\w.-]+\.(?:py|rs)):(\d+)(?::\d+)?").expect("valid regex")
});
static CALL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*[(!]").expect("valid regex"));
static STRING_LITERAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'"#).expect("valid regex"));
static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{[^{}]*\}|%[-+ #0-9.]*[sdifrxXeEgGc]|\\.").expect("valid regex"));
static ERROR_TYPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Failure)\w*:\s*").expect("valid regex"));
static ERROR_SITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\braise\b|\b(?:panic|bail|anyhow|unreachable|assert\w*)!|\bErr\(|\.expect\(|\w(?:Error|Exception)\(")
        .expect("valid regex")
});
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

/// The fixed pieces of the string literals in `code`: their text split at
/// placeholders (`{…}`, `%s`) and escapes, trimmed, each at least `min_chars` long.
pub fn literal_pieces(code: &str, min_chars: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in STRING_LITERAL.captures_iter(code) {
        let body = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
        for piece in PLACEHOLDER.split(body) {
            let piece = piece.trim();
            if piece.chars().count() >= min_chars.max(1) && !out.iter().any(|p| p == piece) {
                out.push(piece.to_string());
            }
        }
    }
    out
}

/// A failure's message without the error type in front (`pkg.mod.ConfigError: `):
/// the words the code wrote, to search for.
pub fn message_body(message: &str) -> &str {
    let m = message.trim();
    ERROR_TYPE.find(m).map(|t| &m[t.end()..]).unwrap_or(m)
}

/// Where in `message` a line of `code` that raises an error (`raise`,
/// `panic!`, `Err(…)`, an `…Error(` constructor) writes a string literal's
/// piece: the latest byte offset of such a piece in the message. Literals
/// elsewhere (a dictionary key that happens to be a word of the message) do
/// not count.
pub fn writes_message(code: &str, message: &str, min_chars: usize) -> Option<usize> {
    if message.is_empty() {
        return None;
    }
    code.lines()
        .filter(|l| ERROR_SITE.is_match(l))
        .flat_map(|l| literal_pieces(l, min_chars))
        .filter_map(|p| message.rfind(p.as_str()))
        .max()
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

/// The definitions a failure may come from, most likely first: those a frame
/// of its traceback falls in (innermost first), then those its message names
/// (`E` lines of pytest, the panic and assertion lines of Rust), then the rest
/// in the order given. Duplicates (same file and first line) are dropped.
pub fn rank_suspects(defs: Vec<RelatedDefinition>, excerpt: &str, frames: &[Frame]) -> Vec<RelatedDefinition> {
    let message: Vec<&str> = excerpt.lines().filter(|l| is_message_line(l)).collect();
    let mut seen = Vec::new();
    let mut scored: Vec<((usize, bool), RelatedDefinition)> = Vec::new();
    for d in defs {
        if seen.contains(&(d.path.clone(), d.start_line)) {
            continue;
        }
        seen.push((d.path.clone(), d.start_line));
        let depth = frames
            .iter()
            .rposition(|f| f.path == d.path && (d.start_line..=d.end_line).contains(&f.line))
            .map(|i| i + 1)
            .unwrap_or(0);
        let named = message.iter().any(|l| names_word(l, &d.name));
        scored.push(((depth, named), d));
    }
    // Stable: equal evidence keeps the given order.
    scored.sort_by_key(|(key, _)| std::cmp::Reverse(*key));
    scored.into_iter().map(|(_, d)| d).collect()
}

/// A line of test output that states the failure rather than echoing source:
/// pytest's `E` lines and unindented lines (Rust's panic and assertion lines).
fn is_message_line(line: &str) -> bool {
    let t = line.trim_end();
    if t.is_empty() || t.starts_with("___") || t.starts_with("===") || t.starts_with('>') {
        return false;
    }
    t.starts_with("E ") || !t.starts_with(char::is_whitespace)
}

/// Whether `line` holds `name` as a whole identifier.
pub fn names_word(line: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
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

    fn def(path: &str, name: &str, a: usize, z: usize) -> RelatedDefinition {
        RelatedDefinition { path: path.into(), name: name.into(), start_line: a, end_line: z, raises: false }
    }

    #[test]
    fn suspects_named_by_the_assertion_come_before_the_entry_point() {
        let out = "    def test_rows():\n>       assert render(LOG) == ['median=70.0']\nE       AssertionError: assert ['median=80.0'] == ['median=70.0']\nE         At index 0 diff: 'median=80.0' != 'median=70.0'\n\ntests/test_d.py:25: AssertionError";
        let defs = vec![
            def("d.py", "render", 19, 24),
            def("stats.py", "summary", 24, 31),
            def("stats.py", "median", 5, 10),
            def("stats.py", "percentile", 13, 21),
            def("stats.py", "median", 5, 10),
        ];
        let names: Vec<String> = rank_suspects(defs, out, &frames_in(out)).into_iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            vec!["median", "render", "summary", "percentile"],
            "render is echoed source, not the message"
        );
    }

    #[test]
    fn suspects_in_the_traceback_come_first_innermost_first() {
        let frames = frames_in(PYTEST);
        let defs = vec![def("shop/cart.py", "total_euros", 18, 22), def("shop/money.py", "to_cents", 12, 15)];
        let names: Vec<String> = rank_suspects(defs, PYTEST, &frames).into_iter().map(|d| d.name).collect();
        assert_eq!(names, vec!["to_cents", "total_euros"]);
        assert!(names_word("E  median=8", "median") && !names_word("E  medians", "median"));
        assert!(!is_message_line("    return ordered[mid]") && is_message_line("assertion `left == right` failed"));
    }

    #[test]
    fn the_message_is_traced_to_the_line_that_raises_it() {
        let to_bool = "def to_bool(v):\n    if v in WORDS:\n        return True\n    raise CoerceError(f\"not a boolean: {v!r}\")\n";
        let message = "loader.ConfigError: debug from environment: not a boolean: 'True'";
        assert_eq!(writes_message(to_bool, message, 8), message.find("not a boolean:"));
        // A literal that is not part of raising an error does not count.
        let load = "def load():\n    layers = [(\"from environment\", 1)]\n";
        assert_eq!(writes_message(load, message, 8), None);
        assert_eq!(writes_message("    panic!(\"unknown unit: {}\", u);\n", "unknown unit: h", 8), Some(0));
        assert_eq!(writes_message(to_bool, "", 8), None);
        assert_eq!(message_body(message), "debug from environment: not a boolean: 'True'");
        assert_eq!(message_body("assert 3 == 2"), "assert 3 == 2");
        assert_eq!(
            literal_pieces("x = f'{a} and {b}: done here' + \"%s items of %d\"", 4),
            [": done here", "items of"]
        );
    }
}
