//! pytest output (`--tb=long` or `--tb=short`, with the `-rf` short summary).

use super::TestFailure;
use regex::Regex;
use std::sync::LazyLock;

static SECTION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^_{3,} (.+?) _{3,}$").expect("valid regex"));
static LOCATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\S+?\.py):(\d+): (.+)$").expect("valid regex"));
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$").expect("valid regex"));

/// Parses pytest output into one failure per failed test.
pub fn parse_pytest(output: &str) -> Vec<TestFailure> {
    let lines: Vec<&str> = output.lines().collect();
    // Sections of the FAILURES/ERRORS block: name -> (file, line, first E line).
    let mut sections: Vec<(String, String, u32, String)> = Vec::new();
    let mut current: Option<(String, String, u32, String)> = None;
    for line in &lines {
        if let Some(c) = SECTION.captures(line) {
            if let Some(s) = current.take() {
                sections.push(s);
            }
            let name = c[1].trim().to_string();
            current = Some((name, String::new(), 0, String::new()));
            continue;
        }
        if line.starts_with("=====") {
            if let Some(s) = current.take() {
                sections.push(s);
            }
            continue;
        }
        if let Some(cur) = current.as_mut() {
            if let Some(c) = LOCATION.captures(line) {
                cur.1 = c[1].to_string();
                cur.2 = c[2].parse().unwrap_or(0);
            } else if let Some(e) = line.strip_prefix("E   ") {
                if cur.3.is_empty() {
                    cur.3 = e.trim().to_string();
                }
            }
        }
    }
    if let Some(s) = current.take() {
        sections.push(s);
    }
    let mut out = Vec::new();
    for line in &lines {
        let Some(c) = SUMMARY.captures(line) else {
            continue;
        };
        let nodeid = c[2].to_string();
        let summary_msg = c.get(3).map(|m| m.as_str().to_string()).unwrap_or_default();
        let dotted = nodeid.split("::").skip(1).collect::<Vec<_>>().join(".");
        let file_part = nodeid.split("::").next().unwrap_or("").to_string();
        let section = sections.iter().find(|s| {
            s.0 == dotted
                || (!dotted.is_empty() && s.0.ends_with(&dotted))
                || (dotted.is_empty() && s.0.contains(&file_part))
        });
        let (file, ln, emsg) = match section {
            Some(s) if !s.1.is_empty() => (s.1.clone(), s.2, s.3.clone()),
            _ => (file_part.clone(), 0, String::new()),
        };
        let message = if !emsg.is_empty() { emsg } else { summary_msg };
        out.push(TestFailure { file, line: ln, test: nodeid, message });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_traceback_with_summary() {
        let out = "=================================== FAILURES ===================================\n\
___________________________________ test_add ___________________________________\n\
\n    def test_add():\n>       assert add(1, 2) == 4\nE       assert 3 == 4\n\ntests/test_calc.py:7: AssertionError\n\
=========================== short test summary info ============================\n\
FAILED tests/test_calc.py::test_add - assert 3 == 4\n";
        expect_test::expect![[r#"
            tests/test_calc.py:7 [tests/test_calc.py::test_add] assert 3 == 4
        "#]]
        .assert_eq(&super::super::render(&parse_pytest(out)));
    }
}
