//! How a planned request ends: its report (completed, failed, cancelled) and
//! the event that closes its task.

use super::graph::TaskGraph;
use super::run::{PlanOutcome, Run, StepResult};
use super::schedule::StepState;
use crate::agent::{AgentError, ReportStatus, TaskReport, TestSummary};
use crate::contracts::EventType;
use crate::edits::Patch;
use crate::store::NewEvent;
use serde_json::json;

impl Run<'_> {
    pub(super) fn step_results(&self, graph: &TaskGraph, states: &[StepState]) -> Vec<StepResult> {
        let s = self.shared();
        graph
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                s.results.get(&i).cloned().unwrap_or_else(|| StepResult {
                    id: step.id.clone(),
                    file: step.file.clone(),
                    command: step.command.clone(),
                    action: step.action_type,
                    state: states[i],
                    summary: match states[i] {
                        StepState::Skipped => "a step it depends on failed".into(),
                        _ => "not run".into(),
                    },
                    task_id: None,
                    attempts: 0,
                    model_calls: 0,
                    duration_ms: 0,
                })
            })
            .collect()
    }

    pub(super) fn report(
        &self,
        status: ReportStatus,
        summary: String,
        patch: Option<Patch>,
        steps: &[StepResult],
    ) -> TaskReport {
        let s = self.shared();
        TaskReport {
            task_id: self.log.task_id.clone(),
            status,
            summary,
            attempts: s.attempts,
            well_formed_edits: s.well_formed,
            model_calls: s.model_calls,
            prompt_tokens_max: s.prompt_tokens.iter().copied().max().unwrap_or(0),
            prompt_tokens_total: s.prompt_tokens.iter().sum(),
            prompt_tokens: s.prompt_tokens.clone(),
            prompt_tokens_evaluated: s.prompt_evaluated,
            prompt_tokens_cached: s.prompt_cached,
            files_changed: patch.as_ref().map(|p| p.files()).unwrap_or_default(),
            diff: patch.as_ref().map(|p| p.diff()).unwrap_or_default(),
            patch,
            tests_before: None,
            tests_after: None,
            critic: None,
            failure_reason: None,
            diagnostic_check: None,
            attempt_log: steps.iter().map(|r| format!("step {} ({}): {}", r.id, r.subject(), r.summary)).collect(),
            questions: Vec::new(),
            duration_ms: self.started.elapsed().as_millis() as u64,
        }
    }

    pub(super) async fn complete(
        mut self,
        graph: Option<TaskGraph>,
        steps: Vec<StepResult>,
        status: ReportStatus,
        summary: String,
        patch: Option<Patch>,
        baseline: Option<TestSummary>,
    ) -> Result<PlanOutcome, AgentError> {
        let mut report = self.report(status, summary, patch, &steps);
        report.tests_before = baseline;
        let result = json!({"status": report.status, "summary": report.summary, "files_changed": report.files_changed, "diff": report.diff, "steps": steps.len()});
        self.log.record(self.env, vec![NewEvent::new(EventType::TaskCompleted, result)]).await?;
        Ok(PlanOutcome { report, route: self.route, graph, steps, replans: 0 })
    }

    pub(super) async fn fail(
        mut self,
        graph: Option<TaskGraph>,
        steps: Vec<StepResult>,
        reason: String,
    ) -> Result<PlanOutcome, AgentError> {
        self.log.record(self.env, vec![NewEvent::new(EventType::TaskFailed, json!({"reason": reason}))]).await?;
        let mut report = self.report(ReportStatus::Failed, reason.clone(), None, &steps);
        report.failure_reason = Some(reason);
        Ok(PlanOutcome { report, route: self.route, graph, steps, replans: 0 })
    }

    pub(super) async fn cancelled(
        mut self,
        graph: Option<TaskGraph>,
        steps: Vec<StepResult>,
    ) -> Result<PlanOutcome, AgentError> {
        let reason = "cancelled by the user".to_string();
        self.log
            .record(
                self.env,
                vec![NewEvent::new(EventType::StatusChanged, json!({"status": "cancelled", "reason": reason}))],
            )
            .await?;
        let mut report = self.report(ReportStatus::Cancelled, reason.clone(), None, &steps);
        report.failure_reason = Some(reason);
        Ok(PlanOutcome { report, route: self.route, graph, steps, replans: 0 })
    }
}
