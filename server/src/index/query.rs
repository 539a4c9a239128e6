//! Reading a search query: plain words and identifiers, or error output pasted
//! as is — a Python traceback or exception line, a Rust panic (with or without
//! a backtrace), rustc's diagnostics. Error output is split into what weighs
//! differently: the exception type, the message, names in quotes or backticks,
//! quoted source lines, and the places it points at (file and function or
//! line). Boilerplate (`Traceback (most recent call last):`, `called
//! `Result::unwrap()` on an `Err` value`, rustc's lists of other impls, line
//! and column numbers) is dropped. Pure: no index access.

use regex::Regex;
use std::sync::LazyLock;

/// What a part of a query is; the ranking weighs each kind (see `index.error_*_weight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// An exception type or panic kind (`JSONDecodeError`).
    ExceptionType,
    /// The words of an error message.
    Message,
    /// A name in quotes or backticks.
    Name,
    /// Plain query text, or text of error output that is none of the above.
    Text,
    /// A source line the output quotes.
    CodeLine,
}

/// A place the query points at: a file as written (absolute, relative or
/// `<frozen module>`), with a line and a function when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    pub line: Option<usize>,
    pub function: Option<String>,
    /// 0 for the innermost frame (where the error was raised), 1 for its caller, …
    pub depth: usize,
}

/// A query split into its parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedQuery {
    /// Text parts in order of appearance, each with its role.
    pub parts: Vec<(Role, String)>,
    pub locations: Vec<Location>,
    /// Dotted module names of exception types (`json.decoder` of `json.decoder.JSONDecodeError`).
    pub modules: Vec<String>,
    /// Whether the query looked like error output.
    pub is_error: bool,
}

static PY_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$"#).unwrap());
static PY_EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:E\s+)?(?P<name>(?:[A-Za-z_][A-Za-z0-9_]*\.)*_?[A-Z][A-Za-z0-9_]*)(?::\s?(?P<msg>.*))?$").unwrap()
});
static EXCEPTION_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(Error|Exception|Warning|Exit|Interrupt|Iteration|Expired|Timeout)$").unwrap());
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '[^']*'(?: \(\d+\))? panicked at (?:'(?P<msg>.*)', )?(?P<path>[^:\s]+):(?P<line>\d+):\d+:?$")
        .unwrap()
});
static BACKTRACE_FRAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*\d+: (?P<func>\S.*)$").unwrap());
static BACKTRACE_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*at (?P<path>[^:\s]+):(?P<line>\d+)(?::\d+)?$").unwrap());
static RUSTC_HEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:error|warning)(?:\[[A-Z]\d{4}\])?: (?P<msg>.+)$").unwrap());
static RUSTC_LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (?P<path>[^:\s]+):(?P<line>\d+)(?::\d+)?$").unwrap());
static RUSTC_SOURCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(?P<n>\d+)? *\|(?P<rest>.*)$").unwrap());
static RUSTC_NOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:= )?(?P<kind>note|help): ?(?P<msg>.*)$").unwrap());
static PATH_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?P<path>[A-Za-z0-9_./\\-]+\.[A-Za-z]{1,5}):(?P<line>\d+)").unwrap());
static UNWRAP_BOILERPLATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"called `(?:Result|Option)::(?:unwrap|expect)[a-z_]*\(\)` on an? `(?:Err|None)` value:?").unwrap()
});
static JSON_ERROR_DEBUG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\w*\("(?P<m>(?:[^"\\]|\\.)*)", line: \d+, column: \d+\)"#).unwrap());
static POSITION_NOISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:at )?line \d+,? column \d+(?: \(char \d+\))?|line: \d+, column: \d+|\[line\s+\d+\]").unwrap()
});
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|[\s(\[{,=:])(?:'(?P<s>[^'\n]*)'|"(?P<d>[^"\n]*)")(?:$|[\s)\]},.:;])|`(?P<b>[^`\n]*)`"#).unwrap()
});
static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*$").unwrap());

/// Lines of error output that carry nothing to search for.
const BOILERPLATE: &[&str] = &[
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "stack backtrace:",
];
/// Prefixes of such lines.
const BOILERPLATE_PREFIXES: &[&str] = &[
    "note: run with `RUST_BACKTRACE",
    "note: Some details are omitted",
    "For more information about",
    "error: could not compile",
    "error: aborting due to",
    "warning: build failed",
    "Some errors have detailed explanations",
];
/// Backtrace frames of the standard library and the runtime, never the user's code.
const RUNTIME_FRAMES: &[&str] =
    &["core::", "std::", "alloc::", "__rustc", "rust_begin_unwind", "<core::", "<std::", "<alloc::"];

/// Splits `text` into its parts (see the module doc).
pub fn parse_query(text: &str) -> ParsedQuery {
    let mut p = ParsedQuery::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut py_frames: Vec<Location> = Vec::new();
    let mut rust_depth = 0;
    let mut in_traceback = false;
    let mut in_panic_message = false;
    let mut skip_list_indent: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        i += 1;
        let indent = line.len() - line.trim_start().len();
        if let Some(min) = skip_list_indent {
            if !t.is_empty() && indent > min {
                continue;
            }
            skip_list_indent = None;
        }
        if t.is_empty() || t.chars().all(|c| matches!(c, '^' | '~' | ' ')) || BOILERPLATE.contains(&t) {
            in_traceback |= t == BOILERPLATE[0];
            p.is_error |= BOILERPLATE.contains(&t);
            continue;
        }
        if BOILERPLATE_PREFIXES.iter().any(|b| t.starts_with(b)) {
            p.is_error = true;
            in_panic_message = false;
            continue;
        }
        if let Some(c) = PY_FRAME.captures(line) {
            p.is_error = true;
            in_traceback = true;
            py_frames.push(Location {
                path: c["path"].to_string(),
                line: c["line"].parse().ok(),
                function: c.name("func").map(|f| f.as_str().trim().to_string()).filter(|f| !f.starts_with('<')),
                depth: 0,
            });
            // The source line under a frame.
            if let Some(next) = lines.get(i) {
                let nt = next.trim();
                let is_source = next.starts_with("    ") && !nt.is_empty() && !PY_FRAME.is_match(next);
                if is_source && !nt.chars().all(|c| matches!(c, '^' | '~' | ' ')) {
                    p.parts.push((Role::CodeLine, nt.to_string()));
                    i += 1;
                }
            }
            continue;
        }
        if let Some(c) = PANIC.captures(t) {
            p.is_error = true;
            p.locations.push(Location {
                path: c["path"].to_string(),
                line: c["line"].parse().ok(),
                function: None,
                depth: 0,
            });
            match c.name("msg") {
                Some(m) => push_message(&mut p, m.as_str()),
                None => in_panic_message = true,
            }
            continue;
        }
        if let Some(c) = BACKTRACE_FRAME.captures(line) {
            let func = c["func"].trim();
            let at = lines.get(i).and_then(|l| BACKTRACE_AT.captures(l));
            if at.is_some() {
                i += 1;
            }
            if at.is_some() || p.is_error {
                p.is_error = true;
                in_panic_message = false;
                let runtime = RUNTIME_FRAMES.iter().any(|r| func.starts_with(r))
                    || at.as_ref().is_some_and(|a| a["path"].starts_with("/rustc/"));
                if !runtime {
                    p.locations.push(Location {
                        path: at.as_ref().map(|a| a["path"].to_string()).unwrap_or_default(),
                        line: at.as_ref().and_then(|a| a["line"].parse().ok()),
                        function: rust_function_name(func),
                        depth: rust_depth,
                    });
                    rust_depth += 1;
                }
                continue;
            }
        }
        if let Some(c) = RUSTC_LOCATION.captures(line) {
            p.is_error = true;
            p.locations.push(Location {
                path: c["path"].to_string(),
                line: c["line"].parse().ok(),
                function: None,
                depth: 0,
            });
            continue;
        }
        if let Some(c) = RUSTC_HEAD.captures(t) {
            p.is_error = true;
            in_panic_message = false;
            push_message(&mut p, &c["msg"]);
            continue;
        }
        if let Some(c) = RUSTC_NOTE.captures(line) {
            p.is_error = true;
            let msg = &c["msg"];
            if msg.contains("the following") && msg.contains("implement") {
                skip_list_indent = Some(indent);
            } else {
                push_text(&mut p, msg, Role::Text);
            }
            continue;
        }
        if p.is_error {
            if let Some(c) = RUSTC_SOURCE.captures(line) {
                let rest = c["rest"].trim();
                if c.name("n").is_some() {
                    p.parts.push((Role::CodeLine, rest.to_string()));
                } else {
                    // A label under the source: `^^^^ expected `&str`, found `String``.
                    let label = rest.trim_start_matches(['^', '-', '|', '_', '+', ' ']);
                    if !label.is_empty() {
                        push_message(&mut p, label);
                    }
                }
                continue;
            }
        }
        if indent == 0 && (in_traceback || in_panic_message || i == lines.len()) {
            if let Some(c) = PY_EXCEPTION.captures(t) {
                let name = &c["name"];
                let last = name.rsplit('.').next().unwrap_or(name);
                if in_traceback || EXCEPTION_SUFFIX.is_match(last) {
                    p.is_error = true;
                    p.parts.push((Role::ExceptionType, last.to_string()));
                    if let Some((module, _)) = name.rsplit_once('.') {
                        p.modules.push(module.to_string());
                    }
                    if let Some(m) = c.name("msg") {
                        push_message(&mut p, m.as_str());
                    }
                    continue;
                }
            }
        }
        if in_panic_message {
            push_message(&mut p, t);
            continue;
        }
        if let Some(c) = PY_EXCEPTION.captures(t).filter(|c| {
            let name = &c["name"];
            EXCEPTION_SUFFIX.is_match(name.rsplit('.').next().unwrap_or(name)) && c.name("msg").is_some()
        }) {
            // `ValueError: …` without a traceback (a log line, a test report).
            let name = &c["name"];
            p.is_error = true;
            p.parts.push((Role::ExceptionType, name.rsplit('.').next().unwrap_or(name).to_string()));
            if let Some((module, _)) = name.rsplit_once('.') {
                p.modules.push(module.to_string());
            }
            push_message(&mut p, c.name("msg").map(|m| m.as_str()).unwrap_or(""));
            continue;
        }
        for c in PATH_LINE.captures_iter(t) {
            p.locations.push(Location {
                path: c["path"].to_string(),
                line: c["line"].parse().ok(),
                function: None,
                depth: 0,
            });
        }
        p.parts.push((Role::Text, t.to_string()));
    }
    // Python prints the innermost frame last.
    let n = py_frames.len();
    for (k, mut f) in py_frames.into_iter().enumerate() {
        f.depth = n - 1 - k;
        p.locations.push(f);
    }
    p
}

/// The method or function of a backtrace frame: `<usize as a::Index>::index_or_insert::{{closure}}` → `index_or_insert`.
fn rust_function_name(frame: &str) -> Option<String> {
    let cleaned = frame.split(" at ").next().unwrap_or(frame);
    cleaned
        .rsplit("::")
        .map(|s| s.trim_end_matches('>').trim())
        .find(|s| !s.is_empty() && !s.starts_with('{') && !s.starts_with('<') && IDENTIFIER.is_match(s))
        .map(str::to_string)
}

/// Adds an error message: names in quotes or backticks become [`Role::Name`] parts,
/// other quoted values (user data) and position noise are dropped.
fn push_message(p: &mut ParsedQuery, msg: &str) {
    push_text(p, msg, Role::Message);
}

/// Adds `msg` as `role`, its quoted names as [`Role::Name`] (see [`push_message`]).
fn push_text(p: &mut ParsedQuery, msg: &str, role: Role) {
    let msg = UNWRAP_BOILERPLATE.replace_all(msg, " ");
    let msg = JSON_ERROR_DEBUG.replace_all(&msg, "$m");
    let msg = POSITION_NOISE.replace_all(&msg, " ");
    let mut rest = String::with_capacity(msg.len());
    let mut last = 0;
    for c in QUOTED.captures_iter(&msg) {
        let whole = c.get(0).map(|m| m.range()).unwrap_or(0..0);
        rest.push_str(&msg[last..whole.start]);
        rest.push(' ');
        last = whole.end;
        if let Some(b) = c.name("b") {
            // Backticks quote code: every identifier in it is a name.
            p.parts.push((Role::Name, b.as_str().to_string()));
        } else if let Some(q) = c.name("s").or(c.name("d")) {
            if IDENTIFIER.is_match(q.as_str()) {
                p.parts.push((Role::Name, q.as_str().to_string()));
            }
        }
    }
    rest.push_str(&msg[last..]);
    if !rest.trim().is_empty() {
        p.parts.push((role, rest.trim().to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(p: &ParsedQuery, role: Role) -> Vec<&str> {
        p.parts.iter().filter(|(r, _)| *r == role).map(|(_, t)| t.as_str()).collect()
    }

    #[test]
    fn plain_queries_are_text() {
        let p = parse_query("how many days are in a month");
        assert!(!p.is_error);
        assert_eq!(p.parts, vec![(Role::Text, "how many days are in a month".into())]);
        let p = parse_query("JSONDecoder.raw_decode");
        assert_eq!(p.parts, vec![(Role::Text, "JSONDecoder.raw_decode".into())]);
    }

    #[test]
    fn python_traceback() {
        let tb = r#"Traceback (most recent call last):
  File "/home/dev/app.py", line 4, in load
    return json.loads(text)
           ^^^^^^^^^^^^^^^^
  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode
    raise JSONDecodeError("Expecting value", s, err.value) from None
  File "<frozen importlib._bootstrap>", line 1140, in _find_and_load_unlocked
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
"#;
        let p = parse_query(tb);
        assert!(p.is_error);
        assert_eq!(parts(&p, Role::ExceptionType), ["JSONDecodeError"]);
        assert_eq!(parts(&p, Role::Message), ["Expecting value:"]);
        assert_eq!(p.modules, ["json.decoder"]);
        assert_eq!(parts(&p, Role::CodeLine).len(), 2);
        let inner = p.locations.iter().find(|l| l.depth == 0).unwrap();
        assert_eq!(inner.path, "<frozen importlib._bootstrap>");
        assert_eq!(inner.function.as_deref(), Some("_find_and_load_unlocked"));
        let raw = p.locations.iter().find(|l| l.depth == 1).unwrap();
        assert_eq!(
            (raw.path.as_str(), raw.line, raw.function.as_deref()),
            ("/usr/lib/python3.11/json/decoder.py", Some(355), Some("raw_decode"))
        );
    }

    #[test]
    fn exception_lines_keep_names_and_drop_values() {
        let p = parse_query("TypeError: namedtuple() got an unexpected keyword argument 'verbose'");
        assert_eq!(parts(&p, Role::ExceptionType), ["TypeError"]);
        assert_eq!(parts(&p, Role::Name), ["verbose"]);
        let p = parse_query("ValueError: time data '2020-13-01' does not match format '%Y-%m-%d'");
        assert_eq!(parts(&p, Role::Message), ["time data does not match format"]);
        let p = parse_query("AttributeError: Can't pickle local object 'f.<locals>.g'");
        assert!(parts(&p, Role::Message)[0].starts_with("Can't pickle local object"), "{p:?}");
    }

    #[test]
    fn rust_panic_and_backtrace() {
        let out =
            "thread 'main' (24532) panicked at /root/.cargo/registry/src/x/serde_json-1.0.154/src/value/index.rs:72:21:
cannot access index 3 of JSON array of length 1
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/abc/library/std/src/panicking.rs:689:5
   2: <usize as serde_json::value::index::Index>::index_or_insert::{{closure}}
             at /root/.cargo/registry/src/x/serde_json-1.0.154/src/value/index.rs:72:21
   6: inventory::main
             at ./src/main.rs:5:19
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
";
        let p = parse_query(out);
        assert_eq!(parts(&p, Role::Message), ["cannot access index 3 of JSON array of length 1"]);
        let f: Vec<(usize, Option<&str>)> = p.locations.iter().map(|l| (l.depth, l.function.as_deref())).collect();
        assert_eq!(f, [(0, None), (0, Some("index_or_insert")), (1, Some("main"))]);
        let p = parse_query(
            "thread 'main' panicked at src/main.rs:5:50:\ncalled `Result::unwrap()` on an `Err` value: Error(\"trailing comma\", line: 1, column: 25)\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        );
        assert_eq!(parts(&p, Role::Message), ["trailing comma"]);
        assert_eq!(p.locations[0].path, "src/main.rs");
    }

    #[test]
    fn rustc_diagnostics() {
        let out = "error[E0308]: mismatched types
    --> src/main.rs:5:41
     |
   5 |     let v: Value = serde_json::from_str(body).unwrap();
     |                    -------------------- ^^^^ expected `&str`, found `String`
     |
note: function defined here
    --> /root/.cargo/registry/src/x/serde_json-1.0.154/src/de.rs:2709:8
     = help: the following other types implement trait `From<T>`:
               `Value` implements `From<&str>`
               `Value` implements `From<bool>`
For more information about this error, try `rustc --explain E0308`.
";
        let p = parse_query(out);
        assert_eq!(
            p.locations.iter().map(|l| (l.path.as_str(), l.line)).collect::<Vec<_>>(),
            [("src/main.rs", Some(5)), ("/root/.cargo/registry/src/x/serde_json-1.0.154/src/de.rs", Some(2709))]
        );
        assert_eq!(parts(&p, Role::CodeLine), ["let v: Value = serde_json::from_str(body).unwrap();"]);
        assert_eq!(parts(&p, Role::Name), ["&str", "String"]);
        assert!(!p.parts.iter().any(|(_, t)| t.contains("implements")), "{p:?}");
    }
}
