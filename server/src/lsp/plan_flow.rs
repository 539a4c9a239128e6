//! `tinycoder.run [request]`: a request that may span files, from the editor.
//! The router, planner and steps run in the background under cancellable
//! progress (each step's events reported as they come); the combined patch is
//! offered for review like any other (`review.rs`).

use super::agent_flow::{BufferSnapshot, FlowHandles, Launcher};
use super::commands::string_arg;
use super::progress::ProgressHandle;
use super::server::Backend;
use crate::agent::{describe_event, plan, AgentEnv, TaskOptions};
use crate::contracts::EventType;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::MessageType;

/// `tinycoder.run ["REQUEST"]` or `[{"request": "REQUEST", "uri"?}]`: runs in the folder holding
/// `uri` (else the first folder); answers at once with the task and job ids.
pub async fn run(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let request = string_arg(args, "request").filter(|r| !r.trim().is_empty()).ok_or_else(|| {
        Error::invalid_params(
            "tinycoder.run needs the request in words: [\"add a timeout to fetch\"] or [{\"request\": \"…\"}]",
        )
    })?;
    let folder = backend.root_for_args(args)?;
    backend.launcher_in(&folder)?.start_planned(request).map(Some)
}

impl Launcher {
    /// Starts a free-text request in the background under progress.
    pub fn start_planned(&self, request: String) -> Result<Value> {
        self.model()?;
        let h = &self.handles;
        let snapshot = self.snapshot();
        let progress = ProgressHandle::start(&h.client, &h.jobs, "tinycoder: run", h.progress);
        let task_id = uuid::Uuid::new_v4().to_string();
        let answer = json!({"taskId": task_id, "jobId": progress.id()});
        let me = self.clone();
        tokio::spawn(async move {
            match me.env(snapshot.clone()).await {
                Ok(env) => run_planned(me.handles.clone(), env, snapshot, task_id, request, progress).await,
                Err(e) => {
                    let message = format!("tinycoder: the task could not start: {e}");
                    me.handles.client.show_message(MessageType::ERROR, message).await
                }
            }
        });
        Ok(answer)
    }
}

async fn run_planned(
    handles: FlowHandles,
    env: AgentEnv,
    snapshot: Arc<BufferSnapshot>,
    task_id: String,
    request: String,
    progress: ProgressHandle,
) {
    let mut rx = env.bus.subscribe();
    let cancel = progress.cancel_token();
    let reporter = {
        let sink = progress.sender();
        let parent = task_id.clone();
        tokio::spawn(async move {
            // The steps' own tasks are named by the parent's `step_started` events.
            let mut ours: HashSet<String> = HashSet::from([parent.clone()]);
            while let Ok(e) = rx.recv().await {
                if e.task_id == parent && e.event_type == EventType::StepStarted {
                    if let Some(id) = e.payload.get("task_id").and_then(Value::as_str) {
                        ours.insert(id.to_string());
                    }
                }
                if ours.contains(&e.task_id) {
                    if let Some(line) = describe_event(&e) {
                        tracing::info!(task = %e.task_id, "{line}");
                        sink.report(line, None);
                    }
                }
            }
        })
    };
    let options = TaskOptions { best_attempt: false, origin: "lsp".into(), session_id: None };
    let outcome = plan::run_request(&env, &task_id, &request, None, options, cancel).await;
    reporter.abort();
    drop(progress);
    match outcome {
        Ok(o) => super::review::deliver(&handles, &env, &snapshot, o.report, None).await,
        Err(e) => handles.client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
    }
}
