//! "Fix all in this file": the errors the project's checkers report in one
//! file, fixed one at a time as ordinary fix tasks. Each fix starts from the
//! texts the fixes before it produced (their changes laid over the user's
//! view), and the checker runs again after each, so every diagnostic is taken
//! at its current position. A diagnostic whose fix failed is not tried again;
//! at most `runtime.fix_all_max_diagnostics` fixes run. The adapters get one
//! combined patch (the original texts to the final ones) and what happened to
//! each diagnostic.

use super::plan::LayeredSources;
use super::{AgentError, AgentRequest, DiagnosticOrigin, Job, JobContext, Location, ReportStatus, TaskReport};
use super::{SourceView, TaskOptions, Workspace};
use crate::edits::{FileChange, Patch};
use crate::sandbox::{checkers_for_project, run_checker, CheckedDiagnostic, Checker, CheckerChoice, HumanPort};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Why a file's diagnostics could not be fixed at all.
#[derive(Debug, thiserror::Error)]
pub enum FixAllError {
    #[error("no checker applies to {path} (configured: {configured}); add one as [checkers.NAME] in the config")]
    NoChecker { path: String, configured: String },
    #[error("no checker could run on {path}: {why}")]
    NoneRuns { path: String, why: String },
    #[error("{path} is not a readable text file of the workspace")]
    Unreadable { path: String },
    #[error(transparent)]
    Checker(#[from] crate::sandbox::SandboxError),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// What happened to one diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// A fix passed and its checker no longer reports the diagnostic.
    Fixed,
    /// The fix task ended without a passing patch.
    Failed,
    /// Not tried: the limit was reached or the run was cancelled.
    Skipped,
}

/// One diagnostic and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticOutcome {
    /// The checker that reported it (`[checkers.NAME]`).
    pub checker: String,
    /// The diagnostic as the checker reported it when it was taken up.
    pub diagnostic: CheckedDiagnostic,
    pub outcome: OutcomeKind,
    /// What checked the fix, or why it failed or was skipped.
    pub detail: String,
    /// The fix task, when one ran.
    pub task_id: Option<String>,
    /// What its passing patch does that the checks cannot vouch for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
}

impl DiagnosticOutcome {
    /// `fixed: a.py:1: F401 `os` imported but unused (`ruff …` no longer reports F401 …)`.
    pub fn line(&self) -> String {
        let kind = match self.outcome {
            OutcomeKind::Fixed => "fixed",
            OutcomeKind::Failed => "failed",
            OutcomeKind::Skipped => "skipped",
        };
        format!("{kind}: {} ({})", self.diagnostic.headline(), self.detail)
    }
}

/// What a fix-all run produced.
#[derive(Debug, Clone, Serialize)]
pub struct FixAllReport {
    /// The file, workspace-relative.
    pub path: String,
    pub outcomes: Vec<DiagnosticOutcome>,
    /// Errors the checkers still report in the file with the combined patch.
    pub remaining: Vec<String>,
    /// Checkers that apply but could not run, and why.
    pub not_run: Vec<String>,
    /// The original texts to the final ones (`None`: nothing was fixed).
    #[serde(skip)]
    pub patch: Option<Patch>,
    pub cancelled: bool,
    pub duration_ms: u64,
}

impl FixAllReport {
    /// How many diagnostics ended as `kind`.
    pub fn count(&self, kind: OutcomeKind) -> usize {
        self.outcomes.iter().filter(|o| o.outcome == kind).count()
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        if self.outcomes.is_empty() && self.remaining.is_empty() {
            return format!("no error reported in {}", self.path);
        }
        let mut s = format!(
            "{}: {} fixed, {} failed, {} skipped",
            self.path,
            self.count(OutcomeKind::Fixed),
            self.count(OutcomeKind::Failed),
            self.count(OutcomeKind::Skipped)
        );
        if !self.remaining.is_empty() {
            s.push_str(&format!("; {} error(s) remain", self.remaining.len()));
        }
        s
    }

    /// The combined result as one task report, for the adapters' review and write paths:
    /// `diagnostic_check` lists each diagnostic's outcome.
    pub fn task_report(&self, task_id: &str) -> TaskReport {
        let patch = self.patch.clone().filter(|p| !p.changes.is_empty());
        let status = if self.cancelled {
            ReportStatus::Cancelled
        } else if patch.is_some() {
            ReportStatus::Patched
        } else if self.outcomes.is_empty() && self.remaining.is_empty() {
            ReportStatus::NothingToFix
        } else {
            ReportStatus::Failed
        };
        let lines: Vec<String> = self.outcomes.iter().map(DiagnosticOutcome::line).collect();
        TaskReport {
            task_id: task_id.to_string(),
            status,
            summary: self.summary(),
            attempts: self.outcomes.iter().filter(|o| o.task_id.is_some()).count(),
            well_formed_edits: 0,
            model_calls: 0,
            prompt_tokens: vec![],
            prompt_tokens_max: 0,
            prompt_tokens_total: 0,
            prompt_tokens_evaluated: 0,
            prompt_tokens_cached: 0,
            files_changed: patch.as_ref().map(|p| p.files()).unwrap_or_default(),
            diff: patch.as_ref().map(|p| p.diff()).unwrap_or_default(),
            patch,
            tests_before: None,
            tests_after: None,
            critic: None,
            failure_reason: (status == ReportStatus::Failed).then(|| self.summary()),
            diagnostic_check: (!lines.is_empty()).then(|| lines.join("; ")),
            attempt_log: lines,
            questions: self.outcomes.iter().flat_map(|o| o.questions.iter().cloned()).collect(),
            duration_ms: self.duration_ms,
        }
    }
}

/// What a fix-all run tells its adapter as it goes.
#[derive(Debug, Clone)]
pub enum FixAllProgress {
    /// A checker runs on the texts so far.
    Checking { checker: String, command: String },
    /// A fix task starts on this diagnostic.
    Fixing { task_id: String, diagnostic: CheckedDiagnostic },
    /// A diagnostic's outcome.
    Done(DiagnosticOutcome),
}

/// The bookkeeping of a fix-all run, apart from running checkers and tasks:
/// which diagnostic comes next, the accumulated texts, the combined patch.
#[derive(Debug)]
pub struct FixAllState {
    path: String,
    limit: usize,
    /// Text of each changed file before the run (what the user's view showed).
    original: BTreeMap<String, String>,
    /// Text of each changed file after the fixes so far.
    changed: BTreeMap<String, String>,
    /// Diagnostics already taken up: checker, code, message and the text of their line.
    tried: HashSet<(String, String, String, String)>,
    started: usize,
    outcomes: Vec<DiagnosticOutcome>,
}

impl FixAllState {
    /// A run over `path` that starts at most `limit` fixes.
    pub fn new(path: &str, limit: usize) -> Self {
        Self {
            path: path.to_string(),
            limit,
            original: BTreeMap::new(),
            changed: BTreeMap::new(),
            tried: HashSet::new(),
            started: 0,
            outcomes: Vec::new(),
        }
    }

    /// The file's text now: after the fixes so far, else as `base` shows it.
    fn text_of(&self, base: &dyn SourceView, rel: &str) -> Option<String> {
        self.changed.get(rel).cloned().or_else(|| base.read(rel))
    }

    /// A diagnostic's identity across line moves: the text of its line stands for the line number.
    fn key(&self, checker: &str, d: &CheckedDiagnostic, base: &dyn SourceView) -> (String, String, String, String) {
        let line = self
            .text_of(base, &d.path)
            .and_then(|t| t.lines().nth(d.line.saturating_sub(1)).map(|l| l.trim().to_string()))
            .unwrap_or_else(|| d.line.to_string());
        (checker.to_string(), d.code.clone(), d.message.clone(), line)
    }

    /// The errors of `reported` in the file that were not taken up yet, in order.
    pub fn untried<'a>(
        &self,
        checker: &str,
        reported: &'a [CheckedDiagnostic],
        base: &dyn SourceView,
    ) -> Vec<&'a CheckedDiagnostic> {
        reported
            .iter()
            .filter(|d| d.is_error() && d.path == self.path)
            .filter(|d| !self.tried.contains(&self.key(checker, d, base)))
            .collect()
    }

    /// Whether another fix may start.
    pub fn may_start(&self) -> bool {
        self.started < self.limit
    }

    /// Marks `d` as taken up (it is never picked again) and counts the fix.
    pub fn start(&mut self, checker: &str, d: &CheckedDiagnostic, base: &dyn SourceView) {
        let key = self.key(checker, d, base);
        self.tried.insert(key);
        self.started += 1;
    }

    /// Records a skipped diagnostic, once.
    pub fn skip(
        &mut self,
        checker: &str,
        d: &CheckedDiagnostic,
        why: &str,
        base: &dyn SourceView,
    ) -> DiagnosticOutcome {
        let key = self.key(checker, d, base);
        self.tried.insert(key);
        let outcome = DiagnosticOutcome {
            checker: checker.to_string(),
            diagnostic: d.clone(),
            outcome: OutcomeKind::Skipped,
            detail: why.to_string(),
            task_id: None,
            questions: Vec::new(),
        };
        self.outcomes.push(outcome.clone());
        outcome
    }

    /// Records how the fix of `d` ended; a passing patch's texts become the base of the next fix.
    pub fn finish(
        &mut self,
        checker: &str,
        d: &CheckedDiagnostic,
        report: &TaskReport,
        base: &dyn SourceView,
    ) -> DiagnosticOutcome {
        let fixed = report.status == ReportStatus::Patched && report.has_patch();
        if fixed {
            for c in report.patch.iter().flat_map(|p| &p.changes) {
                if !self.original.contains_key(&c.path) {
                    let before = base.read(&c.path).unwrap_or_else(|| c.before.clone());
                    self.original.insert(c.path.clone(), before);
                }
                self.changed.insert(c.path.clone(), c.after.clone());
            }
        }
        let detail = if fixed {
            report.diagnostic_check.clone().unwrap_or_else(|| report.summary.clone())
        } else {
            report.failure_reason.clone().unwrap_or_else(|| report.summary.clone())
        };
        let outcome = DiagnosticOutcome {
            checker: checker.to_string(),
            diagnostic: d.clone(),
            outcome: if fixed { OutcomeKind::Fixed } else { OutcomeKind::Failed },
            detail,
            task_id: Some(report.task_id.clone()),
            questions: if fixed { report.questions.clone() } else { Vec::new() },
        };
        self.outcomes.push(outcome.clone());
        outcome
    }

    /// Records a fix task that could not run at all.
    pub fn broke(&mut self, checker: &str, d: &CheckedDiagnostic, why: String) -> DiagnosticOutcome {
        let outcome = DiagnosticOutcome {
            checker: checker.to_string(),
            diagnostic: d.clone(),
            outcome: OutcomeKind::Failed,
            detail: why,
            task_id: None,
            questions: Vec::new(),
        };
        self.outcomes.push(outcome.clone());
        outcome
    }

    /// The user's view with the fixes so far laid over it.
    pub fn sources(&self, base: Arc<dyn SourceView>) -> Arc<dyn SourceView> {
        Arc::new(LayeredSources::new(base, self.changed.clone()))
    }

    /// The original texts to the final ones; `None` when nothing changed.
    pub fn patch(&self) -> Option<Patch> {
        let changes: Vec<FileChange> = self
            .changed
            .iter()
            .filter_map(|(path, after)| {
                let before = self.original.get(path)?;
                (before != after).then(|| FileChange {
                    path: path.clone(),
                    before: before.clone(),
                    after: after.clone(),
                })
            })
            .collect();
        (!changes.is_empty()).then_some(Patch { changes })
    }

    /// Every outcome so far, in order.
    pub fn outcomes(&self) -> &[DiagnosticOutcome] {
        &self.outcomes
    }
}

/// Who the run is for: the user's view, who answers the tasks' questions, their options.
pub struct FixAllContext {
    pub sources: Arc<dyn SourceView>,
    pub human: Arc<dyn HumanPort>,
    pub options: TaskOptions,
    pub cancel: CancellationToken,
}

/// Fixes the checker errors of the workspace-relative `path` one at a time (see the module).
pub async fn fix_all(
    ws: &Workspace,
    path: &str,
    ctx: FixAllContext,
    progress: &(dyn Fn(FixAllProgress) + Send + Sync),
) -> Result<FixAllReport, FixAllError> {
    let started = std::time::Instant::now();
    let config = &ws.config;
    if ctx.sources.read(path).is_none() {
        return Err(FixAllError::Unreadable { path: path.to_string() });
    }
    let choices = checkers_for_project(config, &ws.root, &[PathBuf::from(path)]);
    if choices.is_empty() {
        let configured = config.checkers.keys().cloned().collect::<Vec<_>>().join(", ");
        return Err(FixAllError::NoChecker { path: path.to_string(), configured });
    }
    let mut not_run = Vec::new();
    let checkers: Vec<Checker> = choices
        .into_iter()
        .filter_map(|c| match c {
            CheckerChoice::Use(c) => Some(c),
            other => {
                not_run.push(other.why_not().unwrap_or_default());
                None
            }
        })
        .collect();
    if checkers.is_empty() {
        return Err(FixAllError::NoneRuns { path: path.to_string(), why: not_run.join("; ") });
    }
    let limit = config.runtime.fix_all_max_diagnostics as usize;
    let mut state = FixAllState::new(path, limit);
    let mut remaining = Vec::new();
    let base = ctx.sources.clone();
    'checkers: for checker in &checkers {
        loop {
            if ctx.cancel.is_cancelled() {
                break 'checkers;
            }
            progress(FixAllProgress::Checking { checker: checker.name.clone(), command: checker.display() });
            let view = state.sources(base.clone());
            let report = run_checker(config, &ws.paths, &view.overlays(), checker, &ctx.cancel).await?;
            let untried: Vec<CheckedDiagnostic> =
                state.untried(&checker.name, &report.diagnostics, &*base).into_iter().cloned().collect();
            let Some(next) = untried.first().cloned() else {
                remaining.extend(report.errors().filter(|d| d.path == path).map(|d| d.headline()));
                break;
            };
            if !state.may_start() {
                let why = format!("the limit of {limit} fixes per run was reached (runtime.fix_all_max_diagnostics)");
                for d in &untried {
                    progress(FixAllProgress::Done(state.skip(&checker.name, d, &why, &*base)));
                }
                remaining.extend(report.errors().filter(|d| d.path == path).map(|d| d.headline()));
                continue 'checkers;
            }
            state.start(&checker.name, &next, &*base);
            let task_id = uuid::Uuid::new_v4().to_string();
            progress(FixAllProgress::Fixing { task_id: task_id.clone(), diagnostic: next.clone() });
            let request = AgentRequest::Fix {
                target: Some(Location::line(path.to_string(), next.line)),
                message: Some(next.message.clone()),
                from_tests: false,
                origin: Some(DiagnosticOrigin {
                    source: checker.config.sources.first().cloned().unwrap_or_else(|| checker.name.clone()),
                    code: next.code.clone(),
                }),
            };
            let job_ctx = JobContext {
                sources: view,
                human: ctx.human.clone(),
                options: ctx.options.clone(),
                cancel: ctx.cancel.clone(),
            };
            let outcome = match ws.start(Job::New { task_id, request }, job_ctx).await {
                Ok(report) if report.status == ReportStatus::Cancelled => break 'checkers,
                Ok(report) => state.finish(&checker.name, &next, &report, &*base),
                Err(e) => state.broke(&checker.name, &next, e.to_string()),
            };
            progress(FixAllProgress::Done(outcome));
        }
    }
    let cancelled = ctx.cancel.is_cancelled();
    Ok(FixAllReport {
        path: path.to_string(),
        outcomes: state.outcomes().to_vec(),
        remaining,
        not_run,
        patch: state.patch(),
        cancelled,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

#[cfg(test)]
#[path = "fix_all_tests.rs"]
mod tests;
