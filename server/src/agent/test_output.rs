//! The part of a test run's output that a prompt shows: the failing test's
//! own section, without what the model already sees elsewhere in the prompt.
//!
//! pytest's long tracebacks print the source of every frame, which is the
//! failing test and the suspects the prompt already shows; cargo prints build
//! progress and the summaries of test binaries that ran nothing. On the
//! `bench fix` corpus these repeats were about a tenth of every coder prompt,
//! and on a retry they pushed the line that says what broke (an import error,
//! a panic) past the feedback's budget.

use std::collections::HashSet;

/// The lines of `output` about `test` (its pytest section, its cargo
/// `---- name stdout ----` section, or the lines from its name on), at most
/// `max_lines`; the output's end when the test is not named.
pub fn failure_excerpt(output: &str, test: Option<&str>, max_lines: usize) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let short = test.map(|t| t.rsplit([':', '.']).next().unwrap_or(t));
    let start = short.and_then(|name| {
        lines
            .iter()
            .position(|l| l.starts_with('_') && l.contains(name))
            .or_else(|| lines.iter().position(|l| l.contains(name)))
    });
    let cargo = test.and_then(|t| cargo_section(&lines, t));
    let picked: Vec<&str> = match (cargo, start) {
        (Some(section), _) => section.iter().copied().take(max_lines).collect(),
        (None, Some(s)) => {
            let end = lines[s + 1..]
                .iter()
                .position(|l| (l.starts_with("___") || l.starts_with("===")) && !l.contains(short.unwrap_or("\u{0}")))
                .map(|e| s + 1 + e)
                .unwrap_or(lines.len());
            lines[s..end].iter().copied().take(max_lines).collect()
        }
        (None, None) => lines[lines.len().saturating_sub(max_lines)..].to_vec(),
    };
    picked.join("\n").trim().to_string()
}

/// cargo's own section about `test` (`---- path::name stdout ----` up to the
/// next section or the `failures:` list), when it printed one.
fn cargo_section<'a>(lines: &'a [&'a str], test: &str) -> Option<&'a [&'a str]> {
    let start = lines.iter().position(|l| {
        l.strip_prefix("---- ").and_then(|r| r.strip_suffix(" stdout ----")).is_some_and(|name| {
            name == test || name.ends_with(&format!("::{test}")) || test.ends_with(&format!("::{name}"))
        })
    })?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("---- ") || l.trim_end() == "failures:")
        .map_or(lines.len(), |e| start + 1 + e);
    Some(&lines[start..end])
}

/// `excerpt` without the test runner's progress lines and without the
/// traceback lines that repeat `shown` code (the lines a prompt already
/// holds). The line a traceback marks (`>`), its messages (`E`) and every
/// location stay; a run of left-out lines leaves no marker, since a small
/// model copies such markers into code.
pub fn without_repeats(excerpt: &str, shown: &[&str]) -> String {
    let shown: HashSet<&str> =
        shown.iter().flat_map(|code| code.lines()).map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut out: Vec<&str> = Vec::new();
    let mut in_library_frame = false;
    for line in excerpt.lines() {
        // A frame in Python's own library or an installed package, with its source lines.
        if is_library_frame(line) {
            in_library_frame = true;
            continue;
        }
        if in_library_frame && is_traceback_source(line) {
            continue;
        }
        in_library_frame = false;
        if is_runner_progress(line) || is_caret_line(line) || (is_traceback_source(line) && shown.contains(line.trim()))
        {
            continue;
        }
        // Left-out lines must not leave a stack of blank lines behind.
        if line.trim().is_empty() && out.last().is_none_or(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(line);
    }
    out.join("\n").trim().to_string()
}

/// A pytest frame's location outside the project (`/usr/lib/python3.11/…:126: in f`):
/// the project's own frames are printed relative to it.
fn is_library_frame(line: &str) -> bool {
    line.starts_with('/')
        && line.contains(": in ")
        && ["/lib/python", "site-packages", "dist-packages"].iter().any(|p| line.contains(p))
}

/// The `^^^^` under an expression in Python 3.11+ tracebacks: the line above says it all.
fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| c == '^' || c == '~')
}

/// A source line of a pytest traceback frame: indented code, not the marked
/// line (`>`), a message (`E`) or a location (`file.py:12: Error`).
fn is_traceback_source(line: &str) -> bool {
    line.starts_with("    ") && !line.trim().is_empty()
}

/// A line the runner prints about itself, never about the failure: pytest's
/// session header, cargo's build steps, test binaries that ran nothing,
/// passing tests and the backtrace hint.
fn is_runner_progress(line: &str) -> bool {
    let t = line.trim();
    const CARGO_STEPS: [&str; 4] = ["Compiling ", "Finished ", "Running ", "Doc-tests "];
    (t.starts_with("====") && t.contains(" test session starts "))
        || (line.starts_with("platform ") && line.contains(" -- Python "))
        || ["rootdir: ", "configfile: ", "plugins: ", "cachedir: "].iter().any(|p| line.starts_with(p))
        || (line.starts_with("collected ") && line.contains(" item"))
        || (line.starts_with("   ") && CARGO_STEPS.iter().any(|s| t.starts_with(s)))
        || t == "running 0 tests"
        || (t.starts_with("test result: ok. 0 passed; 0 failed"))
        || (t.starts_with("test ") && t.ends_with(" ... ok"))
        || t.starts_with("note: run with `RUST_BACKTRACE=1`")
        || t.starts_with("error: test failed, to rerun pass")
        || t == "Hint: make sure your test modules/packages have valid Python names."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_pick_the_failing_tests_section() {
        let out = "============ FAILURES ============\n______ test_a ______\n\n>   assert f(1) == 2\nE   assert 3 == 2\n\ntest_x.py:4: AssertionError\n______ test_b ______\nE  other\n======== short test summary ========\nFAILED test_x.py::test_a\n";
        let e = failure_excerpt(out, Some("test_x.py::test_a"), 40);
        assert!(e.starts_with("______ test_a") && e.contains("assert 3 == 2") && !e.contains("test_b"), "{e}");
        assert_eq!(failure_excerpt("a\nb\nc\n", None, 2), "b\nc");
    }

    const CARGO: &str = "\
running 3 tests
test tests::deposit_and_withdraw ... ok
test tests::failed_transfer ... FAILED
test tests::overdraw ... FAILED

failures:

---- tests::failed_transfer stdout ----

thread 'tests::failed_transfer' (77) panicked at src/lib.rs:72:25:
attempt to subtract with overflow
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- tests::overdraw stdout ----

thread 'tests::overdraw' (79) panicked at src/lib.rs:72:25:
attempt to subtract with overflow


failures:
    tests::failed_transfer
    tests::overdraw

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Compiling wallet v0.1.0 (/tmp/tree)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.56s
     Running unittests src/lib.rs (/tmp/target/debug/deps/wallet-17f98fd1c3553e3d)
error: test failed, to rerun pass `--lib`
";

    #[test]
    fn a_cargo_failure_is_its_own_section_without_the_hint() {
        for name in ["tests::failed_transfer", "failed_transfer", "wallet::tests::failed_transfer"] {
            let e = without_repeats(&failure_excerpt(CARGO, Some(name), 40), &[]);
            assert_eq!(
                e,
                "---- tests::failed_transfer stdout ----\n\nthread 'tests::failed_transfer' (77) panicked at src/lib.rs:72:25:\nattempt to subtract with overflow",
                "{name}"
            );
        }
    }

    #[test]
    fn the_runners_own_progress_is_left_out_and_failures_stay() {
        let e = without_repeats(CARGO, &[]);
        for gone in [
            "deposit_and_withdraw ... ok",
            "running 0 tests",
            "Compiling",
            "Finished",
            "Running unittests",
            "to rerun",
            "RUST_BACKTRACE",
        ] {
            assert!(!e.contains(gone), "{gone} stays in:\n{e}");
        }
        for kept in
            ["tests::overdraw ... FAILED", "panicked at src/lib.rs:72:25", "test result: FAILED. 1 passed; 2 failed"]
        {
            assert!(e.contains(kept), "{kept} is gone from:\n{e}");
        }
        let pytest = "============================= test session starts ==============================\nplatform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0\nrootdir: /tmp/tree\ncollected 0 items / 1 error\n\n=== ERRORS ===\nE   ImportError: cannot import name 'create_event' from 'events'\n";
        assert_eq!(
            without_repeats(pytest, &[]),
            "=== ERRORS ===\nE   ImportError: cannot import name 'create_event' from 'events'"
        );
    }

    #[test]
    fn an_import_error_keeps_its_message_and_drops_pythons_own_frames() {
        let out = "\
____________________ ERROR collecting checks/test_events.py ____________________
ImportError while importing test module 'checks/test_events.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
checks/test_events.py:3: in <module>
    from events import EventFull, create_event
E   ImportError: cannot import name 'create_event' from 'events' (events.py)";
        assert_eq!(
            without_repeats(out, &[]),
            "____________________ ERROR collecting checks/test_events.py ____________________\nImportError while importing test module 'checks/test_events.py'.\nTraceback:\nchecks/test_events.py:3: in <module>\n    from events import EventFull, create_event\nE   ImportError: cannot import name 'create_event' from 'events' (events.py)"
        );
    }

    #[test]
    fn traceback_lines_the_prompt_shows_are_left_out_and_the_marked_line_stays() {
        let out = "\
___________________________ test_total ___________________________

    def test_total():
        cart = Cart()
        cart.add(\"pen\", 700, 1)
>       assert cart.total() == 630
E       assert 0 == 630
E        +  where 0 = total()

tests/test_cart.py:9: AssertionError";
        let test =
            "def test_total():\n    cart = Cart()\n    cart.add(\"pen\", 700, 1)\n    assert cart.total() == 630\n";
        let e = without_repeats(out, &[test]);
        assert_eq!(
            e,
            "___________________________ test_total ___________________________\n\n>       assert cart.total() == 630\nE       assert 0 == 630\nE        +  where 0 = total()\n\ntests/test_cart.py:9: AssertionError"
        );
        // Code the prompt does not show stays.
        assert_eq!(without_repeats(out, &["def other():\n    pass"]), out);
    }
}
