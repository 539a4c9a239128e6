//! `python -m unittest` tracebacks.

use super::TestFailure;
use regex::Regex;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAIL|ERROR): (\S+) \(([^)]+)\)").expect("valid regex"));
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s+File "([^"]+)", line (\d+), in (\S+)"#).expect("valid regex"));

/// Parses unittest's FAIL/ERROR blocks.
pub fn parse_unittest(output: &str) -> Vec<TestFailure> {
    let lines: Vec<&str> = output.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(h) = HEADER.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let qualified = h[3].to_string();
        let test = if qualified.ends_with(&h[2]) { qualified } else { format!("{}.{}", &h[3], &h[2]) };
        let mut file = String::new();
        let mut line = 0;
        let mut message = String::new();
        let mut j = i + 1;
        while j < lines.len() && !lines[j].starts_with("======") && !HEADER.is_match(lines[j]) {
            let l = lines[j];
            if let Some(f) = FRAME.captures(l) {
                // Prefer frames outside the standard library / site-packages.
                let path = f[1].to_string();
                if !path.contains("/lib/python") && !path.contains("site-packages") {
                    file = path;
                    line = f[2].parse().unwrap_or(0);
                }
                message.clear();
            } else if !l.starts_with(' ')
                && !l.is_empty()
                && !l.starts_with("Traceback")
                && !l.starts_with("---")
                && message.is_empty()
            {
                message = l.trim().to_string();
            }
            j += 1;
        }
        out.push(TestFailure { file, line, test, message });
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_block() {
        let out = "======================================================================\n\
FAIL: test_sub (tests.test_u.CalcTest.test_sub)\n\
----------------------------------------------------------------------\n\
Traceback (most recent call last):\n  File \"/w/tests/test_u.py\", line 8, in test_sub\n    self.assertEqual(sub(3, 1), 3)\n\
AssertionError: 2 != 3\n\n----------------------------------------------------------------------\nRan 2 tests\n";
        expect_test::expect![[r#"
            /w/tests/test_u.py:8 [tests.test_u.CalcTest.test_sub] AssertionError: 2 != 3
        "#]]
        .assert_eq(&super::super::render(&parse_unittest(out)));
    }
}
