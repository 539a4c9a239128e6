//! A free-text request from start to one tested patch: route, plan, run the
//! steps (each a coder task on one file, over the changes of the steps before
//! it), then test the combined patch once more as a whole.

use super::graph::{validate, TaskGraph};
use super::layered::LayeredSources;
use super::log::TaskLog;
use super::planner::{file_exists, known_files, make_plan, PlannerError};
use super::route::{route, Route};
use super::schedule::{run_graph, StepState};
use crate::agent::state::judge;
use crate::agent::steps::{baseline_run, run_tests};
use crate::agent::tools::ToolRegistry;
use crate::agent::{AgentEnv, AgentError, AgentRequest, Location, ReportStatus, Runtime, TaskOptions, TaskReport};
use crate::config::PromptId;
use crate::contracts::{ActionType, EventType, PlanReply, PlanStep, StepKind};
use crate::edits::{FileChange, Patch};
use crate::llm::LlmError;
use crate::sandbox::{OneQuestionAtATime, StepConfirmation};
use crate::store::{NewEvent, NewTask};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How one step of a plan went.
#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    pub id: String,
    pub file: String,
    /// The command line of a command step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub action: ActionType,
    pub state: StepState,
    /// One line: the step's task summary, or why it did not run.
    pub summary: String,
    /// The step's own task (its events: `tinycoder events ID`).
    pub task_id: Option<String>,
    pub attempts: usize,
    pub model_calls: usize,
    pub duration_ms: u64,
}

impl StepResult {
    /// What the step is about, for one line: its command, else its file.
    pub fn subject(&self) -> String {
        match &self.command {
            Some(c) => format!("`{c}`"),
            None => self.file.clone(),
        }
    }
}

/// The outcome of a request run through the planner path.
#[derive(Debug, Clone)]
pub struct PlanOutcome {
    pub report: TaskReport,
    pub route: Route,
    pub graph: Option<TaskGraph>,
    pub steps: Vec<StepResult>,
    /// Planner replies sent back before one validated.
    pub replans: u32,
}

/// What the steps share while they run.
#[derive(Default)]
pub(super) struct Shared {
    /// Path → text after the finished steps.
    pub(super) changed: BTreeMap<String, String>,
    /// Step index → what a query step found or a command step printed.
    pub(super) notes: BTreeMap<usize, String>,
    pub(super) results: BTreeMap<usize, StepResult>,
    pub(super) model_calls: usize,
    pub(super) prompt_tokens: Vec<usize>,
    pub(super) attempts: usize,
    pub(super) well_formed: usize,
    /// Server-reported prompt tokens evaluated / reused from its cache, over the steps.
    pub(super) prompt_evaluated: usize,
    pub(super) prompt_cached: usize,
}

/// Runs `request` as task `task_id`: directly on one file when the router says so, else planned.
/// With `given`, that plan runs instead of the planner's (validated the same way).
pub async fn run_request(
    env: &AgentEnv,
    task_id: &str,
    request: &str,
    given: Option<PlanReply>,
    options: TaskOptions,
    cancel: CancellationToken,
) -> Result<PlanOutcome, AgentError> {
    let started = Instant::now();
    // Steps run side by side; their questions (a command's permission, what to do after
    // repeated failure) reach the user one at a time.
    let serial = AgentEnv { human: Arc::new(OneQuestionAtATime::new(env.human.clone())), ..env.clone() };
    let env = &serial;
    let (_, received) = env
        .bus
        .create_task(NewTask {
            task_id: Some(task_id.to_string()),
            session_id: options.session_id.clone(),
            input: format!("run: {request}"),
            context: json!({"request": {"kind": "run", "text": request}, "origin": options.origin}),
        })
        .await?;
    let log = TaskLog::new(task_id, Some(received.event_id));
    let known = known_files(env);
    let rt = &env.config.runtime;
    let route = match &given {
        Some(_) => Route::Given { reason: "the plan was given".into() },
        None => route(request, &known, rt.plan_min_files as usize, &rt.plan_keywords),
    };
    let tools = ToolRegistry::new(env.clone());
    let mut run = Run { env, options, started, log, shared: Default::default(), route: route.clone(), tools };
    let (graph, replans) = match &route {
        Route::Direct { file, .. } => {
            let step = PlanStep {
                id: "1".into(),
                kind: StepKind::Coder,
                action_type: ActionType::Edit,
                file: file.clone(),
                description: request.to_string(),
                depends_on: vec![],
                command: None,
                requires_confirmation: false,
            };
            let exists = |_: &str| true;
            match validate(PlanReply { steps: vec![step] }, &exists, &known, &[], 1) {
                Ok(g) => (g, 0),
                Err(e) => return run.fail(None, vec![], format!("{e}")).await,
            }
        }
        Route::Given { .. } => {
            let exists = |f: &str| file_exists(env, f);
            let plan = given.unwrap_or(PlanReply { steps: vec![] });
            match validate(plan, &exists, &known, &[], rt.max_steps as usize) {
                Ok(g) => (g, 0),
                Err(e) => return run.fail(None, vec![], format!("the given plan cannot be used: {e}")).await,
            }
        }
        Route::Planned { .. } => {
            run.log
                .record(
                    env,
                    vec![NewEvent::new(EventType::StatusChanged, json!({"status": "planning", "route": route}))],
                )
                .await?;
            match make_plan(env, request, Some(&mut run.log), &cancel).await {
                Ok(p) => {
                    run.count_calls(p.model_calls, &p.prompt_tokens);
                    (p.graph, p.replans)
                }
                Err(PlannerError::Model(LlmError::Cancelled)) => return run.cancelled(None, vec![]).await,
                Err(PlannerError::Invalid { model_calls, prompt_tokens, problems, .. }) => {
                    run.count_calls(model_calls, &prompt_tokens);
                    let reason = PlannerError::Invalid {
                        attempts: problems.len() as u32,
                        max_replans: env.config.runtime.max_replans,
                        problems,
                        model_calls,
                        prompt_tokens,
                    }
                    .to_string();
                    return run.fail(None, vec![], reason).await;
                }
                Err(PlannerError::Agent(e)) => return Err(e),
                Err(e) => return run.fail(None, vec![], e.to_string()).await,
            }
        }
    };
    run.log
        .record(
            env,
            vec![NewEvent::new(
                EventType::PlanCreated,
                json!({"plan": graph.steps, "order": graph.order, "route": route, "replans": replans}),
            )],
        )
        .await?;
    let mut outcome = run.execute(graph, &cancel).await?;
    outcome.replans = replans;
    Ok(outcome)
}

/// One request in flight.
pub(super) struct Run<'a> {
    pub(super) env: &'a AgentEnv,
    pub(super) options: TaskOptions,
    pub(super) started: Instant,
    pub(super) log: TaskLog,
    pub(super) shared: Mutex<Shared>,
    pub(super) route: Route,
    /// The one way steps call tools (search, shell commands).
    pub(super) tools: ToolRegistry,
}

impl Run<'_> {
    pub(super) fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds model calls made outside the steps (the planner's).
    fn count_calls(&self, calls: usize, prompt_tokens: &[usize]) {
        let mut s = self.shared();
        s.model_calls += calls;
        s.prompt_tokens.extend(prompt_tokens);
    }

    /// Runs the graph's steps, then the whole patch's tests.
    async fn execute(mut self, graph: TaskGraph, cancel: &CancellationToken) -> Result<PlanOutcome, AgentError> {
        let env = self.env;
        self.log
            .record(
                env,
                vec![NewEvent::new(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "baseline"}))],
            )
            .await?;
        let (baseline, payload, stop) = baseline_run(env, cancel).await;
        self.log.record(env, vec![NewEvent::new(EventType::ToolCompleted, payload)]).await?;
        if cancel.is_cancelled() {
            return self.cancelled(Some(graph), vec![]).await;
        }
        if let Some(reason) = stop {
            return self.fail(Some(graph), vec![], reason).await;
        }
        let log = tokio::sync::Mutex::new(self.log.clone());
        let states = {
            let this = &self;
            let graph = &graph;
            let log = &log;
            run_graph(graph, env.config.runtime.parallel_edits as usize, cancel, |i| async move {
                this.step(graph, i, log, cancel).await
            })
            .await
        };
        self.log = log.into_inner();
        let steps = self.step_results(&graph, &states);
        if cancel.is_cancelled() {
            return self.cancelled(Some(graph), steps).await;
        }
        if let Some(bad) = steps.iter().find(|s| s.state == StepState::Failed) {
            let reason = format!("step {} ({}) failed: {}", bad.id, bad.subject(), bad.summary);
            return self.fail(Some(graph), steps, reason).await;
        }
        let patch = self.patch();
        if patch.changes.is_empty() {
            let summary = "the plan's steps change no file".to_string();
            return self.complete(Some(graph), steps, ReportStatus::NothingToFix, summary, None, Some(baseline)).await;
        }
        let pairs: Vec<(String, String)> = patch.changes.iter().map(|c| (c.path.clone(), c.after.clone())).collect();
        self.log
            .record(
                env,
                vec![NewEvent::new(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "whole_patch"}))],
            )
            .await?;
        let after = match run_tests(env, &pairs, cancel).await {
            Ok(t) => t,
            Err(crate::sandbox::SandboxError::NoTestCommand(_)) => {
                crate::agent::TestSummary::unavailable("no test command found")
            }
            Err(e) => {
                return self.fail(Some(graph), steps, format!("the tests could not run on the whole patch: {e}")).await
            }
        };
        let (ok, why) = judge(&baseline, &after, None);
        self.log
            .record(
                env,
                vec![NewEvent::new(
                    EventType::ToolCompleted,
                    json!({"tool": "run_tests", "purpose": "whole_patch", "success": ok, "why": why, "passed": after.passed, "failing": after.failing}),
                )],
            )
            .await?;
        let files = patch.files().join(", ");
        let (status, summary) = if ok {
            (ReportStatus::Patched, format!("patched {files} in {} step(s): {why}", steps.len()))
        } else if self.options.best_attempt {
            (ReportStatus::BestAttempt, format!("best attempt for {files} (the whole patch fails its checks: {why})"))
        } else {
            return self
                .fail(Some(graph), steps, format!("every step passed, but the whole patch does not: {why}"))
                .await;
        };
        let mut outcome = self.complete(Some(graph), steps, status, summary, Some(patch), Some(baseline)).await?;
        outcome.report.tests_after = Some(after);
        Ok(outcome)
    }

    /// Runs step `i`; true when it is done.
    async fn step(
        &self,
        graph: &TaskGraph,
        i: usize,
        log: &tokio::sync::Mutex<TaskLog>,
        cancel: &CancellationToken,
    ) -> bool {
        let env = self.env;
        let step = &graph.steps[i];
        let started = Instant::now();
        let writes = matches!(step.action_type, ActionType::Edit | ActionType::Create);
        let sub_id = writes.then(|| uuid::Uuid::new_v4().to_string());
        let start = json!({"step_id": step.id, "file": step.file, "command": step.command, "action": step.action_type, "description": step.description, "task_id": sub_id});
        if let Err(e) = log.lock().await.record(env, vec![NewEvent::new(EventType::StepStarted, start)]).await {
            tracing::warn!(error = %e, "could not record a step's start");
        }
        let declined = step.requires_confirmation && !self.confirmed(step, log, cancel).await;
        let (ok, summary, report) = match step.action_type {
            _ if declined => (false, "not run: the user did not confirm this step".to_string(), None),
            ActionType::Query => self.query(i, step, log, cancel).await,
            ActionType::Command => self.command(i, step, log, cancel).await,
            ActionType::Edit | ActionType::Create => {
                self.edit(graph, i, sub_id.clone().unwrap_or_default(), cancel).await
            }
        };
        let done = json!({"tool": "step", "step_id": step.id, "ok": ok, "summary": summary, "task_id": sub_id});
        if let Err(e) = log.lock().await.record(env, vec![NewEvent::new(EventType::ToolCompleted, done)]).await {
            tracing::warn!(error = %e, "could not record a step's end");
        }
        let mut s = self.shared();
        if let Some(r) = &report {
            s.model_calls += r.model_calls;
            s.prompt_tokens.extend(&r.prompt_tokens);
            s.attempts += r.attempts;
            s.well_formed += r.well_formed_edits;
            s.prompt_evaluated += r.prompt_tokens_evaluated;
            s.prompt_cached += r.prompt_tokens_cached;
        }
        s.results.insert(
            i,
            StepResult {
                id: step.id.clone(),
                file: step.file.clone(),
                command: step.command.clone(),
                action: step.action_type,
                state: if ok { StepState::Done } else { StepState::Failed },
                summary,
                task_id: sub_id,
                attempts: report.as_ref().map_or(0, |r| r.attempts),
                model_calls: report.as_ref().map_or(0, |r| r.model_calls),
                duration_ms: started.elapsed().as_millis() as u64,
            },
        );
        ok
    }

    /// Asks the user whether a step marked `requires_confirmation` may run (recorded as events).
    async fn confirmed(&self, step: &PlanStep, log: &tokio::sync::Mutex<TaskLog>, cancel: &CancellationToken) -> bool {
        let env = self.env;
        let question = StepConfirmation {
            task_id: log.lock().await.task_id.clone(),
            step_id: step.id.clone(),
            subject: step.command.clone().unwrap_or_else(|| step.file.clone()),
            description: step.description.clone(),
        };
        let asked = json!({"question": "step", "step_id": step.id, "message": question.message()});
        if let Err(e) = log.lock().await.record(env, vec![NewEvent::new(EventType::PermissionRequested, asked)]).await {
            tracing::warn!(error = %e, "could not record a step's confirmation question");
        }
        let yes = tokio::select! {
            yes = env.human.confirm_step(&question) => yes,
            _ = cancel.cancelled() => false,
        };
        let answered = json!({"question": "step", "step_id": step.id, "run": yes});
        if let Err(e) = log.lock().await.record(env, vec![NewEvent::new(EventType::PermissionResolved, answered)]).await
        {
            tracing::warn!(error = %e, "could not record a step's confirmation answer");
        }
        yes
    }

    /// An edit or create step: a coder task on the step's file, over the changes so far.
    async fn edit(
        &self,
        graph: &TaskGraph,
        i: usize,
        sub_id: String,
        cancel: &CancellationToken,
    ) -> (bool, String, Option<TaskReport>) {
        let env = self.env;
        let step = &graph.steps[i];
        let (mut view, notes) = {
            let s = self.shared();
            let notes: Vec<String> = graph.dependencies[i]
                .iter()
                .filter_map(|d| s.notes.get(d))
                .filter(|n| !n.is_empty())
                .cloned()
                .collect();
            (s.changed.clone(), notes)
        };
        if step.action_type == ActionType::Create {
            view.entry(step.file.clone()).or_default();
        }
        let instruction = match self.instruction(step, &notes) {
            Ok(t) => t,
            Err(e) => return (false, e.to_string(), None),
        };
        let mut sub_env = env.clone();
        sub_env.sources = Arc::new(LayeredSources::new(env.sources.clone(), view));
        let options = TaskOptions {
            best_attempt: false,
            origin: crate::agent::PLAN_STEP_ORIGIN.into(),
            session_id: self.options.session_id.clone(),
        };
        let request =
            AgentRequest::Edit { target: Location::file(step.file.clone()), instruction, comments_only: false };
        let report = match Runtime::new(sub_env).run(&sub_id, request, options, cancel.child_token()).await {
            Ok(r) => r,
            Err(e) => return (false, e.to_string(), None),
        };
        if report.status != ReportStatus::Patched {
            let why = report.failure_reason.clone().unwrap_or_else(|| report.summary.clone());
            return (false, why, Some(report));
        }
        let mut s = self.shared();
        let changes = report.patch.as_ref().map(|p| p.changes.clone()).unwrap_or_default();
        for c in &changes {
            let current = s.changed.get(&c.path).cloned().or_else(|| env.sources.read(&c.path)).unwrap_or_default();
            if current != c.before {
                let why = format!("another step changed {} at the same time; this step's edit was set aside", c.path);
                return (false, why, Some(report));
            }
        }
        for c in changes {
            s.changed.insert(c.path, c.after);
        }
        (true, report.summary.clone(), Some(report))
    }

    fn instruction(&self, step: &PlanStep, notes: &[String]) -> Result<String, crate::config::PromptError> {
        let p = &self.env.prompts;
        let notes = if notes.is_empty() {
            String::new()
        } else {
            p.render(PromptId::PLAN_STEP_NOTES, &[("hits", &notes.join("\n"))])?
        };
        p.render(PromptId::PLAN_STEP_INSTRUCTION, &[("step", &step.description), ("notes", &notes)])
    }

    /// Every file the steps changed, against the user's view before the task.
    fn patch(&self) -> Patch {
        let s = self.shared();
        let changes = s
            .changed
            .iter()
            .filter_map(|(path, after)| {
                let before = self.env.sources.read(path).unwrap_or_default();
                (before != *after).then(|| FileChange { path: path.clone(), before, after: after.clone() })
            })
            .collect();
        Patch { changes }
    }
}
