//! `[checkers.NAME]`: commands that reproduce another tool's diagnostic in the
//! shadow workspace, so a fix of it is proven by the tool that reported it.

use super::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a checker's output reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckFormat {
    /// `cargo check/clippy --message-format=json`: one JSON object per line.
    CargoJson,
    /// `ruff check --output-format=json`: one JSON array.
    RuffJson,
    /// `pyright --outputjson`: `generalDiagnostics`.
    PyrightJson,
    /// `FILE:LINE[:COL]: SEVERITY: MESSAGE  [CODE]` lines (mypy, gcc, many linters).
    Lines,
}

/// One checker.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckerConfig {
    /// Diagnostic sources (the `source` an editor's server gives) this checker reproduces.
    pub sources: Vec<String>,
    /// Files at the project's root of which one must exist; empty = any project.
    #[serde(default)]
    pub project_files: Vec<String>,
    /// File extensions it checks (without the dot).
    pub extensions: Vec<String>,
    /// Program and arguments, run in the shadow's project folder.
    pub command: Vec<String>,
    pub format: CheckFormat,
    /// What to tell the user when the program is not installed.
    #[serde(default)]
    pub install: String,
    /// Runs for `tinycoder fix --check` (a checker that repeats another's errors stays off).
    #[serde(default = "yes")]
    pub on_check: bool,
}

fn yes() -> bool {
    true
}

/// Every configured checker, by name (a table, so a user's file adds or changes one).
pub type CheckersConfig = BTreeMap<String, CheckerConfig>;

/// Checks that each checker can run.
pub(super) fn validate(checkers: &CheckersConfig) -> Result<(), Invalid> {
    for (name, c) in checkers {
        if c.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(Invalid::new(&format!("checkers.{name}.command"), "[]", "a program and its arguments"));
        }
        if c.sources.is_empty() {
            return Err(Invalid::new(
                &format!("checkers.{name}.sources"),
                "[]",
                "the diagnostic sources it reproduces (e.g. [\"rustc\"])",
            ));
        }
    }
    Ok(())
}

impl CheckerConfig {
    /// True when this checker reproduces diagnostics of `source` (case-insensitive).
    pub fn reproduces(&self, source: &str) -> bool {
        self.sources.iter().any(|s| s.eq_ignore_ascii_case(source))
    }

    /// True when it checks files like `path`.
    pub fn checks_file(&self, path: &str) -> bool {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
    }

    /// True when the project at `root` is one it applies to.
    pub fn applies_to(&self, root: &std::path::Path) -> bool {
        self.project_files.is_empty() || self.project_files.iter().any(|f| root.join(f).exists())
    }
}
