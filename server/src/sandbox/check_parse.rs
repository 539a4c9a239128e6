//! Turning a checker's output into diagnostics (one parser per `CheckFormat`).

use crate::config::CheckFormat;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// One diagnostic a checker reported, workspace-relative.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckedDiagnostic {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// 1-based (0 when the checker gives none).
    pub column: usize,
    /// "error", "warning", "note", …
    pub severity: String,
    /// The rule or error code (`E0425`, `F821`); empty when there is none.
    pub code: String,
    pub message: String,
}

impl CheckedDiagnostic {
    /// True for errors (what a patch must not add).
    pub fn is_error(&self) -> bool {
        self.severity == "error"
    }

    /// `src/lib.rs:6: E0425 cannot find value `totl` in this scope`.
    pub fn headline(&self) -> String {
        let code = if self.code.is_empty() { String::new() } else { format!("{} ", self.code) };
        format!("{}:{}: {code}{}", self.path, self.line, self.message)
    }
}

/// The diagnostics in `output` (stdout of a checker run in `shadow_root`), with
/// paths made relative to it; duplicates (one per cargo target) kept once.
pub fn parse_check_output(format: CheckFormat, output: &str, shadow_root: &Path) -> Vec<CheckedDiagnostic> {
    let mut found = match format {
        CheckFormat::CargoJson => cargo_json(output),
        CheckFormat::RuffJson => ruff_json(output),
        CheckFormat::PyrightJson => pyright_json(output),
        CheckFormat::Lines => lines(output),
    };
    let root = format!("{}/", shadow_root.display());
    for d in &mut found {
        if let Some(rest) = d.path.strip_prefix(&root) {
            d.path = rest.to_string();
        }
        while let Some(rest) = d.path.strip_prefix("./") {
            d.path = rest.to_string();
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|d| seen.insert(d.clone()));
    found
}

fn cargo_json(output: &str) -> Vec<CheckedDiagnostic> {
    let mut out = Vec::new();
    for line in output.lines().filter(|l| l.starts_with('{')) {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        if v["reason"] != "compiler-message" {
            continue;
        }
        let m = &v["message"];
        let spans = m["spans"].as_array().cloned().unwrap_or_default();
        // "aborting due to 2 previous errors" and other summaries have no span.
        let Some(span) = spans.iter().find(|s| s["is_primary"] == true).or(spans.first()) else { continue };
        out.push(CheckedDiagnostic {
            path: span["file_name"].as_str().unwrap_or("").to_string(),
            line: span["line_start"].as_u64().unwrap_or(0) as usize,
            column: span["column_start"].as_u64().unwrap_or(0) as usize,
            severity: severity(m["level"].as_str().unwrap_or("error")),
            code: m["code"]["code"].as_str().unwrap_or("").to_string(),
            message: m["message"].as_str().unwrap_or("").to_string(),
        });
    }
    out
}

fn ruff_json(output: &str) -> Vec<CheckedDiagnostic> {
    let Some(start) = output.find('[') else { return Vec::new() };
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&output[start..]) else { return Vec::new() };
    items
        .iter()
        .map(|d| CheckedDiagnostic {
            path: d["filename"].as_str().unwrap_or("").to_string(),
            line: d["location"]["row"].as_u64().unwrap_or(0) as usize,
            column: d["location"]["column"].as_u64().unwrap_or(0) as usize,
            // Every ruff finding fails `ruff check`: each counts as an error.
            severity: "error".into(),
            code: d["code"].as_str().unwrap_or("").to_string(),
            message: d["message"].as_str().unwrap_or("").to_string(),
        })
        .collect()
}

fn pyright_json(output: &str) -> Vec<CheckedDiagnostic> {
    let Some(start) = output.find('{') else { return Vec::new() };
    let Ok(v) = serde_json::from_str::<Value>(&output[start..]) else { return Vec::new() };
    let items = v["generalDiagnostics"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .map(|d| CheckedDiagnostic {
            path: d["file"].as_str().unwrap_or("").to_string(),
            // Pyright's positions are 0-based.
            line: d["range"]["start"]["line"].as_u64().map_or(0, |l| l as usize + 1),
            column: d["range"]["start"]["character"].as_u64().map_or(0, |c| c as usize + 1),
            severity: severity(d["severity"].as_str().unwrap_or("error")),
            code: d["rule"].as_str().unwrap_or("").to_string(),
            message: d["message"].as_str().unwrap_or("").to_string(),
        })
        .collect()
}

fn lines(output: &str) -> Vec<CheckedDiagnostic> {
    static LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>error|warning|note|info)\s*:\s*(?P<msg>.*?)(?:\s+\[(?P<code>[\w.-]+)\])?\s*$",
        )
        .expect("the diagnostic line pattern compiles")
    });
    output
        .lines()
        .filter_map(|l| LINE.captures(l))
        .map(|c| CheckedDiagnostic {
            path: c["file"].to_string(),
            line: c["line"].parse().unwrap_or(0),
            column: c.name("col").and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
            severity: severity(&c["sev"]),
            code: c.name("code").map(|m| m.as_str().to_string()).unwrap_or_default(),
            message: c["msg"].to_string(),
        })
        .filter(|d| d.severity != "note")
        .collect()
}

fn severity(level: &str) -> String {
    match level.to_ascii_lowercase().as_str() {
        "error" | "error: internal compiler error" => "error",
        "warning" => "warning",
        "information" | "info" => "info",
        "note" | "help" => "note",
        _ => "error",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_messages_become_one_diagnostic_each_without_the_summary() {
        let out = concat!(
            r#"{"reason":"compiler-artifact","target":{}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `totl` in this scope","code":{"code":"E0425"},"spans":[{"file_name":"src/lib.rs","line_start":6,"column_start":5,"is_primary":true}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `totl` in this scope","code":{"code":"E0425"},"spans":[{"file_name":"src/lib.rs","line_start":6,"column_start":5,"is_primary":true}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"warning","message":"unused variable: `y`","code":{"code":"unused_variables"},"spans":[{"file_name":"src/main.rs","line_start":2,"column_start":9,"is_primary":false},{"file_name":"src/main.rs","line_start":3,"column_start":9,"is_primary":true}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}"#,
            "\n",
            r#"{"reason":"build-finished","success":false}"#,
        );
        let d = parse_check_output(CheckFormat::CargoJson, out, Path::new("/s"));
        assert_eq!(d.len(), 2, "{d:#?}");
        assert_eq!(d[0].headline(), "src/lib.rs:6: E0425 cannot find value `totl` in this scope");
        assert!(d[0].is_error());
        assert_eq!((d[1].line, d[1].severity.as_str()), (3, "warning"));
    }

    #[test]
    fn ruff_and_pyright_paths_become_workspace_relative() {
        let ruff = r#"[{"code":"F821","filename":"/s/app/a.py","location":{"row":4,"column":12},"message":"Undefined name `y`"}]"#;
        let d = parse_check_output(CheckFormat::RuffJson, ruff, Path::new("/s"));
        assert_eq!(d[0].headline(), "app/a.py:4: F821 Undefined name `y`");
        let pyright = r#"{"version":"1","generalDiagnostics":[{"file":"/s/a.py","severity":"error","message":"\"y\" is not defined","range":{"start":{"line":3,"character":11}},"rule":"reportUndefinedVariable"}]}"#;
        let d = parse_check_output(CheckFormat::PyrightJson, pyright, Path::new("/s"));
        assert_eq!((d[0].path.as_str(), d[0].line, d[0].column), ("a.py", 4, 12));
        assert_eq!(d[0].code, "reportUndefinedVariable");
    }

    #[test]
    fn diagnostic_lines_with_and_without_columns_and_codes() {
        let out = "./a.py:3:5: error: Incompatible return value type (got \"str\", expected \"int\")  [return-value]\n\
                   a.py:9: note: See https://mypy.rtfd.io\n\
                   b.c:2:1: warning: implicit declaration\n\
                   Found 1 error in 1 file\n";
        let d = parse_check_output(CheckFormat::Lines, out, Path::new("/s"));
        assert_eq!(d.len(), 2, "{d:#?}");
        assert_eq!((d[0].path.as_str(), d[0].line, d[0].code.as_str()), ("a.py", 3, "return-value"));
        assert!(d[0].message.starts_with("Incompatible return value type"), "{}", d[0].message);
        assert_eq!((d[1].column, d[1].code.as_str(), d[1].severity.as_str()), (1, "", "warning"));
    }

    #[test]
    fn garbage_is_no_diagnostic() {
        for f in [CheckFormat::CargoJson, CheckFormat::RuffJson, CheckFormat::PyrightJson, CheckFormat::Lines] {
            assert!(parse_check_output(f, "{not json\n[1,\n\u{0}binary", Path::new("/s")).is_empty());
        }
    }
}
