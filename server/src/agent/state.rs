//! The state of one task as the runtime loop carries it: plain serde data,
//! saved whole in every checkpoint, so a resumed task continues exactly here.

use crate::contracts::CriticScore;
use crate::edits::{EditFormat, FileChange, Patch};
use crate::sandbox::{TestFailure, TestReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most failures kept per test summary (the rest are counted).
const KEPT_FAILURES: usize = 20;

/// A test run, reduced to what decisions and reports need.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// False when the project has no test command (then only syntax is checked).
    pub available: bool,
    /// The command that ran.
    pub command: String,
    /// Why this command was chosen.
    pub why: String,
    pub passed: bool,
    /// Names of the failing tests (every one, for comparisons).
    pub failing: Vec<String>,
    /// The first failures with their place and message.
    pub failures: Vec<TestFailure>,
    pub duration_ms: u64,
    /// The end of the output (for the coder's feedback and for people).
    pub output_tail: String,
}

impl TestSummary {
    /// From a sandboxed run.
    pub fn from_report(r: &TestReport, why: &str) -> Self {
        let mut failing: Vec<String> = r.failures.iter().map(|f| f.test.clone()).collect();
        failing.dedup();
        Self {
            available: true,
            command: r.command.clone(),
            why: why.to_string(),
            passed: r.passed,
            failing,
            failures: r.failures.iter().take(KEPT_FAILURES).cloned().collect(),
            duration_ms: r.duration.as_millis() as u64,
            output_tail: r.output_tail.clone(),
        }
    }

    /// A project without tests.
    pub fn unavailable(why: &str) -> Self {
        Self { available: false, passed: true, why: why.to_string(), ..Default::default() }
    }

    /// "3 failing (`pytest …`)" / "passed (`cargo test`)" / "no tests".
    pub fn headline(&self) -> String {
        if !self.available {
            return "no test command".to_string();
        }
        if self.passed {
            format!("tests pass (`{}`, {:.1} s)", self.command, self.duration_ms as f64 / 1000.0)
        } else {
            format!("{} failing (`{}`)", self.failing.len().max(1), self.command)
        }
    }
}

/// The one file a coder call edits, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Workspace-relative path of the file to edit.
    pub path: String,
    /// 1-based lines the request is about (the definition to fix, or the selection).
    pub start_line: usize,
    pub end_line: usize,
    /// The failing test to make pass, if any (its name as the test run reports it).
    pub test: Option<String>,
    /// The failure or diagnostic message, or the user's instruction.
    pub message: String,
    /// The failing test's own source (shown to the coder), with its location.
    pub test_source: Option<(String, String)>,
    /// Why this file: "raised in", "called by the test", "named by the request".
    pub why: String,
    /// The file's text when the task chose it (what every attempt starts from).
    pub before: String,
    /// Refuse edits to tests (on for fixes: a fix changes the code under test).
    pub protect_tests: bool,
    /// Definitions in other files that the failing code calls: shown to the coder, changeable by name.
    #[serde(default)]
    pub related: Vec<RelatedDefinition>,
    /// The text of each related definition's file when the task read it.
    #[serde(default)]
    pub related_files: BTreeMap<String, String>,
    /// Definitions the failure may come from, most likely first
    /// (`target::rank_suspects`); a retry points the coder at the next one.
    #[serde(default)]
    pub suspects: Vec<RelatedDefinition>,
    /// Code from another file the request is about (location, source), shown and never edited.
    #[serde(default)]
    pub subject: Option<(String, String)>,
    /// The user's own words about the problem (`fix --message`), shown beside the failure.
    #[serde(default)]
    pub reported: Option<String>,
    /// The calls into the suspects that the failing test was seen making (`sandbox::trace_python_test`).
    #[serde(default)]
    pub observed: Vec<crate::sandbox::TracedCall>,
    /// The suspect those calls show computing the wrong value (`observed::value_origin`), if any.
    #[serde(default)]
    pub computed_by: Option<RelatedDefinition>,
}

impl Target {
    /// Every file an attempt may change, with its text at the start: the target first.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut out = vec![(self.path.clone(), self.before.clone())];
        out.extend(self.related_files.iter().filter(|(p, _)| **p != self.path).map(|(p, t)| (p.clone(), t.clone())));
        out
    }

    /// The code every coder prompt about this target shows: the failing
    /// test, the code under test, the definitions in other files, and the
    /// target's file (whole when it has at most `whole_file_lines` lines,
    /// else the target's own lines).
    pub fn shown_code(&self, whole_file_lines: usize) -> Vec<String> {
        let mut out: Vec<String> = self.test_source.iter().chain(&self.subject).map(|(_, code)| code.clone()).collect();
        for d in &self.related {
            if let Some(text) = self.before_of(&d.path) {
                out.push(d.lines_in(text));
            }
        }
        if self.before.lines().count() <= whole_file_lines {
            out.push(self.before.clone());
        } else {
            out.push(lines_of(&self.before, self.start_line, self.end_line));
        }
        out
    }

    /// The text `path` had when the task read it.
    pub fn before_of(&self, path: &str) -> Option<&str> {
        if path == self.path {
            Some(&self.before)
        } else {
            self.related_files.get(path).map(String::as_str)
        }
    }
}

/// A definition in another file that the code under test calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelatedDefinition {
    pub path: String,
    pub name: String,
    /// 1-based inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// Whether its string literal makes up the failure's message (it raised the error).
    #[serde(default)]
    pub raises: bool,
}

impl RelatedDefinition {
    /// Whether `other` is the same definition (same file, same first line).
    pub fn same_place(&self, other: &RelatedDefinition) -> bool {
        self.path == other.path && self.start_line == other.start_line
    }

    /// Its lines in `text`, the text of its file.
    pub fn lines_in(&self, text: &str) -> String {
        lines_of(text, self.start_line, self.end_line)
    }
}

/// The 1-based lines `a..=z` of `text`.
pub fn lines_of(text: &str, a: usize, z: usize) -> String {
    text.lines().skip(a.saturating_sub(1)).take((z + 1).saturating_sub(a.max(1))).collect::<Vec<_>>().join("\n")
}

/// How one coder attempt ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum AttemptResult {
    /// The reply could not be used as an edit (no code, no match, bad syntax, changed a test).
    BadEdit { error: String },
    /// The edit applied and the tests ran.
    Tested { tests: TestSummary, success: bool, why: String },
    /// The model call failed.
    ModelError { error: String },
}

/// One coder attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// 1-based.
    pub number: usize,
    pub format: EditFormat,
    /// The reply's code (what the next attempt is shown of it).
    pub reply: String,
    /// The changed files and their new text, when the edit applied.
    pub changes: Vec<(String, String)>,
    pub changed_symbols: Vec<String>,
    pub result: AttemptResult,
    /// Prompt tokens of the call (exact where the server counts them).
    pub prompt_tokens: usize,
    pub duration_ms: u64,
    /// The reply repeated the code unchanged.
    #[serde(default)]
    pub changes_nothing: bool,
    /// What the diagnostic's checker said of this attempt's patch, when one ran.
    #[serde(default)]
    pub check: Option<String>,
}

impl AttemptRecord {
    /// The attempt's edit passed every check.
    pub fn succeeded(&self) -> bool {
        matches!(self.result, AttemptResult::Tested { success: true, .. })
    }

    /// Failing tests after this attempt (usize::MAX when it never ran them).
    pub fn failing_count(&self) -> usize {
        match &self.result {
            AttemptResult::Tested { tests, .. } => tests.failing.len(),
            _ => usize::MAX,
        }
    }
}

/// What the critic said, or that it could not say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CriticOutcome {
    Scored {
        score: CriticScore,
    },
    /// The critic was unavailable; `fallback` says what was done instead.
    Unavailable {
        error: String,
        fallback: String,
    },
    /// `critic.enabled = false`.
    Skipped,
}

impl CriticOutcome {
    /// The score, when there is one.
    pub fn score(&self) -> Option<&CriticScore> {
        match self {
            Self::Scored { score } => Some(score),
            _ => None,
        }
    }
}

/// Everything the runtime knows about a task; the checkpoint payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// The tests before any change (`None` until they ran).
    pub baseline: Option<TestSummary>,
    /// The file being edited (`None` until located).
    pub target: Option<Target>,
    pub attempts: Vec<AttemptRecord>,
    pub critic: Option<CriticOutcome>,
    /// The memory step ran (whatever it decided).
    pub memory_done: bool,
    /// Why the task cannot go on, once decided.
    pub stop_reason: Option<String>,
    /// Model calls made (coder and critic).
    pub model_calls: usize,
    /// Prompt tokens of every model call, in order.
    pub prompt_tokens: Vec<usize>,
    /// What the user chose each time the attempts ran out, in order.
    #[serde(default)]
    pub strategies: Vec<crate::contracts::StrategyChoice>,
    /// Prompt tokens the server evaluated / took from its prompt cache, summed over
    /// the calls it reported them for.
    #[serde(default)]
    pub prompt_evaluated: usize,
    #[serde(default)]
    pub prompt_cached: usize,
    /// The checker of another tool's diagnostic (`None` for other requests).
    #[serde(default)]
    pub check: Option<super::diagnostic_check::DiagnosticCheck>,
    /// Questions about the passing patch that its tests cannot answer (an operator
    /// changed against the words of its definition), shown with the proposal.
    #[serde(default)]
    pub questions: Vec<String>,
}

impl TaskProgress {
    /// The attempt whose edit passed, if any.
    pub fn success(&self) -> Option<&AttemptRecord> {
        self.attempts.iter().find(|a| a.succeeded())
    }

    /// The attempt with the fewest failing tests among those whose edit applied.
    pub fn best_attempt(&self) -> Option<&AttemptRecord> {
        self.attempts.iter().filter(|a| !a.changes.is_empty()).min_by_key(|a| a.failing_count())
    }

    /// The patch of `attempt` (`None` when its edit did not apply).
    pub fn patch_of(&self, attempt: &AttemptRecord) -> Option<Patch> {
        let target = self.target.as_ref()?;
        let changes: Vec<FileChange> = attempt
            .changes
            .iter()
            .filter_map(|(path, after)| {
                let before = target.before_of(path)?;
                Some(FileChange { path: path.clone(), before: before.to_string(), after: after.clone() })
            })
            .collect();
        (!changes.is_empty()).then_some(Patch { changes })
    }
}

/// Whether a test run after an edit counts as success, and why, given the run
/// before it: the target test (if any) passes and nothing that passed now fails.
pub fn judge(baseline: &TestSummary, after: &TestSummary, target_test: Option<&str>) -> (bool, String) {
    if !after.available {
        return (true, "the project has no tests; the edit parses".into());
    }
    let new: Vec<&String> = after.failing.iter().filter(|t| !baseline.failing.contains(t)).collect();
    if !new.is_empty() {
        let names: Vec<&str> = new.iter().take(3).map(|s| s.as_str()).collect();
        return (false, format!("the edit breaks {} test(s) that passed before: {}", new.len(), names.join(", ")));
    }
    if let Some(t) = target_test {
        if after.failing.iter().any(|f| f == t || f.ends_with(t) || t.ends_with(f.as_str())) {
            return (false, format!("`{t}` still fails"));
        }
    }
    if after.passed {
        return (true, "all tests pass".into());
    }
    if target_test.is_some() || !baseline.passed {
        let fixed = baseline.failing.len().saturating_sub(after.failing.len());
        return (
            true,
            format!(
                "the target passes; {} other failing test(s) were failing before ({fixed} fixed)",
                after.failing.len()
            ),
        );
    }
    (false, "the tests fail".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(failing: &[&str]) -> TestSummary {
        TestSummary {
            available: true,
            passed: failing.is_empty(),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn judging_a_run_against_the_baseline() {
        let before = run(&["t::a", "t::b"]);
        assert!(!judge(&before, &run(&["t::a", "t::b"]), Some("t::a")).0);
        assert!(judge(&before, &run(&["t::b"]), Some("t::a")).0);
        let (ok, why) = judge(&before, &run(&["t::b", "t::c"]), Some("t::a"));
        assert!(!ok && why.contains("t::c"), "{why}");
        assert!(judge(&run(&[]), &run(&[]), None).0);
        assert!(!judge(&run(&[]), &run(&["x"]), None).0);
        assert!(judge(&run(&[]), &TestSummary::unavailable("none"), None).0);
    }
}
