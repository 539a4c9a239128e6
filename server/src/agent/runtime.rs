//! The runtime loop: the one place that moves a task between states. It asks
//! the router what to do, runs that step, records every transition as an event
//! and saves a checkpoint after each critical one, so a killed task resumes
//! where it was. It holds no prompt text and no threshold.

use super::env::AgentEnv;
use super::report::{ReportStatus, TaskReport};
use super::request::{AgentRequest, TaskOptions};
use super::router::{next_step, Completion, RouterLimits, Step};
use super::state::TaskProgress;
use super::steps::{self, StepEnd};
use super::AgentError;
use crate::contracts::{EventType, TaskStatus};
use crate::store::{CheckpointDraft, NewEvent, NewTask, UnfinishedTask};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The version of the checkpoint payload; a checkpoint of another version is not resumed.
const SNAPSHOT_VERSION: u32 = 1;

/// `TaskOptions::origin` of a task that is one step of a planned request.
pub const PLAN_STEP_ORIGIN: &str = "plan";

/// What a checkpoint holds: enough to continue the task from scratch.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Snapshot {
    version: u32,
    request: AgentRequest,
    options: TaskOptions,
    progress: TaskProgress,
}

/// A task in flight.
pub struct Task {
    pub id: String,
    pub request: AgentRequest,
    pub options: TaskOptions,
    pub progress: TaskProgress,
    /// The id of the last event recorded (the cause of the next).
    last_event: Option<String>,
}

impl Task {
    /// Appends `events` (in order, atomically).
    pub async fn record(&mut self, env: &AgentEnv, events: Vec<NewEvent>) -> Result<(), AgentError> {
        if events.is_empty() {
            return Ok(());
        }
        let events = events.into_iter().map(|mut e| {
            e.causation_id = self.last_event.clone();
            e
        });
        let done = env.bus.append_all(&self.id, events.collect()).await?;
        self.last_event = done.last().map(|e| e.event_id.clone()).or(self.last_event.take());
        Ok(())
    }

    /// Appends `events` and a checkpoint of the whole task in one transaction.
    pub async fn save(&mut self, env: &AgentEnv, events: Vec<NewEvent>, status: TaskStatus) -> Result<(), AgentError> {
        let snapshot = Snapshot {
            version: SNAPSHOT_VERSION,
            request: self.request.clone(),
            options: self.options.clone(),
            progress: self.progress.clone(),
        };
        let events: Vec<NewEvent> = events
            .into_iter()
            .map(|mut e| {
                e.causation_id = self.last_event.clone();
                e
            })
            .collect();
        let draft = CheckpointDraft {
            status,
            active_step_id: Some(format!("attempt-{}", self.progress.attempts.len())),
            plan_snapshot: serde_json::to_value(&snapshot).unwrap_or_default(),
            context_snapshot: json!({
                "target": self.progress.target.as_ref().map(|t| &t.path),
                "attempts": self.progress.attempts.len(),
            }),
        };
        let done = env.bus.checkpoint(&self.id, events, draft).await?;
        self.last_event = done.last().map(|e| e.event_id.clone()).or(self.last_event.take());
        Ok(())
    }
}

/// Runs tasks: fix, edit, resume.
pub struct Runtime {
    env: AgentEnv,
}

impl Runtime {
    /// A runtime over `env`.
    pub fn new(env: AgentEnv) -> Self {
        Self { env }
    }

    /// What it runs with.
    pub fn env(&self) -> &AgentEnv {
        &self.env
    }

    /// Runs `request` as task `task_id` to its end (patched, nothing to do, failed or cancelled).
    pub async fn run(
        &self,
        task_id: &str,
        request: AgentRequest,
        options: TaskOptions,
        cancel: CancellationToken,
    ) -> Result<TaskReport, AgentError> {
        let started = Instant::now();
        let (_, received) = self
            .env
            .bus
            .create_task(NewTask {
                task_id: Some(task_id.to_string()),
                session_id: options.session_id.clone(),
                input: request.summary(),
                context: json!({"request": request, "origin": options.origin}),
            })
            .await?;
        let mut task = Task {
            id: task_id.to_string(),
            request,
            options,
            progress: TaskProgress::default(),
            last_event: Some(received.event_id),
        };
        task.save(&self.env, vec![], TaskStatus::Received).await?;
        self.drive(task, cancel, started).await
    }

    /// Continues an unfinished task from its last checkpoint (or ends it as failed, with the reason).
    pub async fn resume(
        &self,
        unfinished: &UnfinishedTask,
        cancel: CancellationToken,
    ) -> Result<TaskReport, AgentError> {
        let started = Instant::now();
        let id = unfinished.task.task_id.clone();
        let snapshot = unfinished
            .checkpoint
            .as_ref()
            .ok_or_else(|| "it saved no checkpoint".to_string())
            .and_then(|cp| {
                serde_json::from_value::<Snapshot>(cp.plan_snapshot.clone())
                    .map_err(|e| format!("its checkpoint does not decode ({e})"))
            })
            .and_then(|s| {
                if s.version != SNAPSHOT_VERSION {
                    Err(format!("its checkpoint is of version {}", s.version))
                } else if s.options.origin == PLAN_STEP_ORIGIN {
                    // Its input was the earlier steps' changes, which lived only in memory.
                    Err("it was one step of a request that spans files, which does not resume; run the request again"
                        .into())
                } else {
                    Ok(s)
                }
            });
        let snapshot = match snapshot {
            Ok(s) => s,
            Err(reason) => {
                let reason = format!("cannot resume: {reason}");
                self.env.bus.fail_task(&id, &reason).await?;
                return Err(AgentError::Resume { task_id: id, reason });
            }
        };
        let mut task = Task {
            id,
            request: snapshot.request,
            options: snapshot.options,
            progress: snapshot.progress,
            last_event: None,
        };
        // A file may have changed while tinycoder was down: attempts made on the old text are void.
        if let Some(t) = task.progress.target.clone() {
            if t.files().iter().any(|(path, before)| self.env.sources.read(path).as_deref() != Some(before.as_str())) {
                task.progress.target = None;
                task.progress.attempts.clear();
                task.progress.critic = None;
                task.progress.memory_done = false;
            }
        }
        let status = unfinished.checkpoint.as_ref().map(|c| c.status).unwrap_or(TaskStatus::Received);
        let from = unfinished.checkpoint.as_ref().map(|c| c.last_sequence).unwrap_or(0);
        task.record(
            &self.env,
            vec![NewEvent::new(EventType::StatusChanged, json!({"status": status, "resumed_from_sequence": from}))],
        )
        .await?;
        self.drive(task, cancel, started).await
    }

    fn limits(&self, options: &TaskOptions) -> RouterLimits {
        RouterLimits {
            max_retries: self.env.config.runtime.max_retries,
            critic: self.env.config.runtime.critic,
            best_attempt: options.best_attempt,
            // Nobody to ask and a policy that stops: the question would change nothing.
            // A planned request's step asks like a task of its own (one question at a time).
            strategy_rounds: if self.env.human.fixed_strategy() == Some(crate::contracts::StrategyChoice::Stop) {
                0
            } else {
                self.env.config.runtime.strategy_rounds
            },
            attempts_per_strategy: self.env.config.runtime.attempts_per_strategy,
        }
    }

    async fn drive(
        &self,
        mut task: Task,
        cancel: CancellationToken,
        started: Instant,
    ) -> Result<TaskReport, AgentError> {
        let rt = &self.env.config.runtime;
        let step_limit = Duration::from_secs(rt.step_timeout_s);
        let task_deadline = started + Duration::from_secs(rt.task_timeout_s);
        loop {
            if cancel.is_cancelled() {
                return self.cancelled(&mut task, started).await;
            }
            if Instant::now() >= task_deadline && task.progress.stop_reason.is_none() {
                task.progress.stop_reason =
                    Some(format!("the task took longer than runtime.task_timeout_s ({} s)", rt.task_timeout_s));
            }
            let d = next_step(&task.request, &task.progress, &self.limits(&task.options));
            tracing::debug!(task = %task.id, step = ?d.step, reason = %d.reason, "next step");
            let step_cancel = cancel.child_token();
            let limit =
                step_limit.min(task_deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(1)));
            let env = &self.env;
            let end = match d.step {
                Step::Baseline => self.timed(steps::baseline(env, &mut task, &step_cancel), &step_cancel, limit).await,
                Step::Locate => self.timed(steps::locate(env, &mut task, &step_cancel), &step_cancel, limit).await,
                Step::Attempt => self.timed(steps::attempt(env, &mut task, &step_cancel), &step_cancel, limit).await,
                Step::Critic => self.timed(steps::critic(env, &mut task, &step_cancel), &step_cancel, limit).await,
                Step::Remember => self.timed(steps::remember(env, &mut task), &step_cancel, limit).await,
                Step::AskStrategy => {
                    self.timed(super::strategy::ask(env, &mut task, &step_cancel), &step_cancel, limit).await
                }
                Step::Complete(how) => return self.complete(&mut task, how, &d.reason, started).await,
                Step::Fail => return self.fail(&mut task, &d.reason, started).await,
            }?;
            if end == StepEnd::Cancelled && !cancel.is_cancelled() {
                task.progress.stop_reason = Some(format!(
                    "a step took longer than runtime.step_timeout_s ({} s) or the task deadline",
                    rt.step_timeout_s
                ));
            }
        }
    }

    /// Runs a step; past `limit` its token is cancelled and the step winds down.
    async fn timed<F>(&self, step: F, token: &CancellationToken, limit: Duration) -> Result<StepEnd, AgentError>
    where
        F: std::future::Future<Output = Result<StepEnd, AgentError>>,
    {
        tokio::pin!(step);
        tokio::select! {
            r = &mut step => r,
            _ = tokio::time::sleep(limit) => {
                token.cancel();
                step.await.map(|_| StepEnd::Cancelled)
            }
        }
    }

    async fn complete(
        &self,
        task: &mut Task,
        how: Completion,
        reason: &str,
        started: Instant,
    ) -> Result<TaskReport, AgentError> {
        let elapsed = started.elapsed().as_millis() as u64;
        let p = &task.progress;
        let attempt = |n: usize| p.attempts.iter().find(|a| a.number == n);
        let (status, chosen) = match how {
            Completion::NothingToFix => (ReportStatus::NothingToFix, None),
            Completion::BestAttempt { attempt: n } => (ReportStatus::BestAttempt, attempt(n)),
            Completion::Patched { attempt: n } => (ReportStatus::Patched, attempt(n)),
        };
        let summary = match (status, chosen.and_then(|a| p.patch_of(a))) {
            (ReportStatus::NothingToFix, _) => reason.to_string(),
            (ReportStatus::BestAttempt, Some(c)) => {
                format!("best attempt for {} (its checks fail): {reason}", c.files().join(", "))
            }
            (_, Some(c)) => {
                let tests = chosen.map(super::router::describe).unwrap_or_default();
                format!("patched {} in {} attempt(s): {tests}", c.files().join(", "), p.attempts.len())
            }
            (_, None) => reason.to_string(),
        };
        let mut report = TaskReport::new(&task.id, status, summary, p, chosen, elapsed);
        if status == ReportStatus::Patched {
            // Computed here as well as for the critic, which may be switched off.
            report.questions = super::critic::patch_questions(&self.env, p);
        }
        let result = json!({
            "status": report.status, "summary": report.summary, "attempts": report.attempts,
            "files_changed": report.files_changed, "diff": report.diff,
            "tests_after": report.tests_after.as_ref().map(|t| t.headline()),
            "questions": report.questions,
        });
        task.record(&self.env, vec![NewEvent::new(EventType::TaskCompleted, result)]).await?;
        Ok(report)
    }

    async fn fail(&self, task: &mut Task, reason: &str, started: Instant) -> Result<TaskReport, AgentError> {
        task.record(&self.env, vec![NewEvent::new(EventType::TaskFailed, json!({"reason": reason}))]).await?;
        let mut report = TaskReport::new(
            &task.id,
            ReportStatus::Failed,
            reason.to_string(),
            &task.progress,
            None,
            started.elapsed().as_millis() as u64,
        );
        report.failure_reason = Some(reason.to_string());
        if task.progress.strategies.last() == Some(&crate::contracts::StrategyChoice::Stop) {
            // Stopped by the user: the best attempt is shown as a diff, never offered to apply.
            let p = &task.progress;
            report.diff = p.best_attempt().and_then(|a| p.patch_of(a)).map(|c| c.diff()).unwrap_or_default();
        }
        Ok(report)
    }

    async fn cancelled(&self, task: &mut Task, started: Instant) -> Result<TaskReport, AgentError> {
        let reason = "cancelled by the user";
        task.record(
            &self.env,
            vec![NewEvent::new(EventType::StatusChanged, json!({"status": "cancelled", "reason": reason}))],
        )
        .await?;
        let mut report = TaskReport::new(
            &task.id,
            ReportStatus::Cancelled,
            reason.to_string(),
            &task.progress,
            None,
            started.elapsed().as_millis() as u64,
        );
        report.failure_reason = Some(reason.to_string());
        Ok(report)
    }
}
