//! The outcome of a task, for people (CLI, editor) and scripts (`--json`).

use super::state::{AttemptRecord, CriticOutcome, TaskProgress, TestSummary};
use crate::edits::Patch;
use serde::Serialize;

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    /// A patch passed the checks.
    Patched,
    /// The tests already pass: nothing to do.
    NothingToFix,
    /// No attempt passed; the best one is handed back because the user asked for it.
    BestAttempt,
    Failed,
    Cancelled,
}

/// What a task produced and what it cost.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    pub task_id: String,
    pub status: ReportStatus,
    /// One line for people.
    pub summary: String,
    pub attempts: usize,
    /// Attempts whose reply became an edit that applied and parsed.
    pub well_formed_edits: usize,
    pub model_calls: usize,
    /// Prompt tokens of each model call, in order.
    pub prompt_tokens: Vec<usize>,
    pub prompt_tokens_max: usize,
    pub prompt_tokens_total: usize,
    /// Prompt tokens the model server evaluated, where it reports them.
    pub prompt_tokens_evaluated: usize,
    /// Prompt tokens the model server reused from its prompt cache instead of evaluating.
    pub prompt_tokens_cached: usize,
    pub files_changed: Vec<String>,
    pub diff: String,
    /// The change itself (absent when nothing is proposed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<Patch>,
    pub tests_before: Option<TestSummary>,
    /// The tests in the shadow with the patch applied.
    pub tests_after: Option<TestSummary>,
    pub critic: Option<CriticOutcome>,
    pub failure_reason: Option<String>,
    /// How another tool's diagnostic was checked after the patch, or why it was not.
    pub diagnostic_check: Option<String>,
    /// How each attempt ended, one line each.
    pub attempt_log: Vec<String>,
    /// What the passing patch does that its tests cannot vouch for (an operator
    /// changed against its definition's words), one question each, for the reviewer.
    pub questions: Vec<String>,
    pub duration_ms: u64,
}

impl TaskReport {
    /// The report of a task in state `p` that ended with `status`.
    pub fn new(
        task_id: &str,
        status: ReportStatus,
        summary: String,
        p: &TaskProgress,
        chosen: Option<&AttemptRecord>,
        duration_ms: u64,
    ) -> Self {
        let patch: Option<Patch> = chosen.and_then(|a| p.patch_of(a));
        let tests_after = chosen.and_then(|a| match &a.result {
            super::state::AttemptResult::Tested { tests, .. } => Some(tests.clone()),
            _ => None,
        });
        Self {
            task_id: task_id.to_string(),
            status,
            summary,
            attempts: p.attempts.len(),
            well_formed_edits: p.attempts.iter().filter(|a| !a.changes.is_empty()).count(),
            model_calls: p.model_calls,
            prompt_tokens_max: p.prompt_tokens.iter().copied().max().unwrap_or(0),
            prompt_tokens_total: p.prompt_tokens.iter().sum(),
            prompt_tokens: p.prompt_tokens.clone(),
            prompt_tokens_evaluated: p.prompt_evaluated,
            prompt_tokens_cached: p.prompt_cached,
            files_changed: patch.as_ref().map(|p| p.files()).unwrap_or_default(),
            diff: patch.as_ref().map(|p| p.diff()).unwrap_or_default(),
            patch,
            tests_before: p.baseline.clone(),
            tests_after,
            critic: p.critic.clone(),
            failure_reason: None,
            // What the checker said of the chosen patch; else why nothing was re-checked.
            diagnostic_check: chosen
                .and_then(|a| a.check.clone())
                .or_else(|| p.check.as_ref().and_then(|c| c.note.clone())),
            attempt_log: p.attempts.iter().map(super::router::describe).collect(),
            questions: Vec::new(),
            duration_ms,
        }
    }

    /// True when a patch is proposed (passing, or the best attempt as asked).
    pub fn has_patch(&self) -> bool {
        self.patch.as_ref().is_some_and(|p| !p.changes.is_empty())
    }
}
