//! `cargo test` output: test panics and compile errors.

use super::TestFailure;
use regex::Regex;
use std::sync::LazyLock;

static PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '([^']+)' (?:\(\d+\) )?panicked at ([^:\s]+):(\d+):(\d+):$").expect("valid regex")
});
static PANIC_OLD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '([^']+)' panicked at '(.*)', ([^:\s]+):(\d+):(\d+)$").expect("valid regex"));
static COMPILE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^error(\[E\d+\])?: (.+)$").expect("valid regex"));
static ARROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*--> ([^:\s]+):(\d+):(\d+)$").expect("valid regex"));
static FAILED_TEST: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^test (\S+) \.\.\. FAILED$").expect("valid regex"));

/// Parses cargo/rustc/libtest output.
pub fn parse_cargo(output: &str) -> Vec<TestFailure> {
    let lines: Vec<&str> = output.lines().collect();
    let mut out = Vec::new();
    let mut located = std::collections::HashSet::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(c) = PANIC_NEW.captures(line) {
            let mut msg = Vec::new();
            let mut j = i + 1;
            while j < lines.len()
                && !lines[j].is_empty()
                && !lines[j].starts_with("note:")
                && !lines[j].starts_with("stack backtrace")
            {
                msg.push(lines[j].trim_end());
                j += 1;
            }
            located.insert(c[1].to_string());
            out.push(TestFailure {
                file: c[2].to_string(),
                line: c[3].parse().unwrap_or(0),
                test: c[1].to_string(),
                message: msg.join("\n"),
            });
            i = j;
            continue;
        }
        if let Some(c) = PANIC_OLD.captures(line) {
            located.insert(c[1].to_string());
            out.push(TestFailure {
                file: c[3].to_string(),
                line: c[4].parse().unwrap_or(0),
                test: c[1].to_string(),
                message: c[2].to_string(),
            });
        } else if let Some(c) = COMPILE.captures(line) {
            let message = c[2].to_string();
            if !message.starts_with("could not compile")
                && !message.starts_with("aborting due to")
                && !message.starts_with("test failed")
                && !message.starts_with("1 target failed")
                && !message.contains("targets failed")
            {
                let code = c.get(1).map(|m| m.as_str()).unwrap_or("");
                let arrow = lines[i + 1..].iter().take(4).find_map(|l| ARROW.captures(l));
                let (file, ln) = arrow.map(|a| (a[1].to_string(), a[2].parse().unwrap_or(0))).unwrap_or_default();
                out.push(TestFailure { file, line: ln, test: format!("compile error{code}"), message });
            }
        } else if let Some(c) = FAILED_TEST.captures(line) {
            // Listed as failed; located later by its panic line (or kept unlocated).
            let name = c[1].to_string();
            if !lines.iter().any(|l| l.starts_with(&format!("thread '{name}'"))) && !located.contains(&name) {
                out.push(TestFailure {
                    file: String::new(),
                    line: 0,
                    test: name,
                    message: "test failed (no panic location in the output)".into(),
                });
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_and_compile_errors() {
        let out = "test tests::bad ... FAILED\n\nthread 'tests::bad' panicked at src/lib.rs:12:5:\nassertion `left == right` failed\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1`\n\
error[E0308]: mismatched types\n  --> src/lib.rs:5:9\n   |\nerror: could not compile `x`\n";
        let f = parse_cargo(out);
        expect_test::expect![[r#"
            src/lib.rs:12 [tests::bad] assertion `left == right` failed
              left: 3
             right: 4
            src/lib.rs:5 [compile error[E0308]] mismatched types
        "#]]
        .assert_eq(&super::super::render(&f));
    }
}
