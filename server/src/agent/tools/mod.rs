//! The tool registry: the one way a plan step calls a tool (`file_read`,
//! `file_write`, `search`, `run_tests`, `shell_exec`). Every call runs under
//! `runtime.tool_timeout_s`, records a `tool_called` / `tool_completed` pair on
//! the task, and ends in a [`ToolResult`]: a tool's error, timeout or panic is
//! data, never an error or a panic through the runtime.
//!
//! Architecture Invariant: `shell_exec` runs only through `sandbox::ShellTool`
//! (permission policy → stored decision or the human → sandboxed run in a
//! shadow), and `file_write` writes only the running plan's in-memory layer,
//! never the user's disk.

mod error;
mod files;
mod search;
mod shell;

pub use error::ToolError;

use crate::agent::plan::TaskLog;
use crate::agent::AgentEnv;
use crate::contracts::{EventType, ToolCall, ToolResult};
use crate::store::NewEvent;
use futures::FutureExt;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What a tool call runs within.
pub struct ToolContext<'a> {
    /// The task's event chain: every call records its `tool_called` / `tool_completed` there.
    pub log: &'a tokio::sync::Mutex<TaskLog>,
    /// The running plan's pending changes (path → text) over the user's view; `file_write`
    /// writes only here, and `file_read`, `run_tests` and `shell_exec` see them.
    pub layer: Option<&'a Mutex<BTreeMap<String, String>>>,
    /// The plan step the call belongs to (named in the events).
    pub step_id: Option<&'a str>,
}

impl ToolContext<'_> {
    /// A copy of the pending changes (empty without a layer).
    pub(crate) fn layer_snapshot(&self) -> BTreeMap<String, String> {
        self.layer.map(|l| l.lock().unwrap_or_else(|p| p.into_inner()).clone()).unwrap_or_default()
    }
}

/// What a tool returns to the registry.
#[derive(Debug, Default)]
pub(crate) struct ToolOutput {
    pub output: String,
    /// False when the tool ran but its work failed (a failing test, a non-zero exit).
    pub ok: bool,
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    /// Extra fields for the `tool_completed` event (e.g. `ran`, `rule`).
    pub detail: Value,
}

impl ToolOutput {
    /// A successful call with `output`.
    pub fn ok(output: String) -> Self {
        Self { output, ok: true, detail: json!({}), ..Default::default() }
    }
}

/// One tool of the registry.
#[async_trait::async_trait]
pub(crate) trait Tool: Send + Sync {
    /// The name a [`ToolCall`] uses.
    fn name(&self) -> &'static str;
    /// Runs the call; `cancel` fires on the registry's timeout or the task's cancel.
    async fn run(
        &self,
        env: &AgentEnv,
        args: &Value,
        ctx: &ToolContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError>;
}

/// The tools a plan step may call, behind one interface.
pub struct ToolRegistry {
    env: AgentEnv,
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    /// Every built-in tool over `env`.
    pub fn new(env: AgentEnv) -> Self {
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(files::FileRead),
            Box::new(files::FileWrite),
            Box::new(search::Search),
            Box::new(search::RunTests),
            Box::new(shell::ShellExec),
        ];
        Self { env, tools }
    }

    /// The names of the registered tools.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// Runs `call` under `runtime.tool_timeout_s` and records its events; never fails.
    pub async fn call(&self, call: &ToolCall, ctx: &ToolContext<'_>, cancel: &CancellationToken) -> ToolResult {
        let started = Instant::now();
        let called = json!({"tool": call.tool, "arguments": call.arguments, "step_id": ctx.step_id, "registry": true});
        record(&self.env, ctx, EventType::ToolCalled, called).await;
        let outcome = self.run_bounded(call, ctx, cancel).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        let (result, detail, outcome_name) = match outcome {
            Ok(out) => {
                let result = ToolResult {
                    ok: out.ok,
                    output: out.output,
                    error: out.error,
                    exit_code: out.exit_code,
                    duration_ms,
                };
                (result, out.detail, if out.ok { "ok" } else { "failed" })
            }
            Err(e) => {
                let result = ToolResult {
                    ok: false,
                    output: String::new(),
                    error: Some(e.to_string()),
                    exit_code: None,
                    duration_ms,
                };
                (result, json!({}), e.outcome())
            }
        };
        let mut done = json!({
            "tool": call.tool, "step_id": ctx.step_id, "registry": true, "outcome": outcome_name,
            "ok": result.ok, "error": result.error, "exit_code": result.exit_code,
            "output_bytes": result.output.len(), "duration_ms": duration_ms,
        });
        if let (Some(d), Some(extra)) = (done.as_object_mut(), detail.as_object()) {
            d.extend(extra.clone());
        }
        record(&self.env, ctx, EventType::ToolCompleted, done).await;
        result
    }

    /// The tool's run under the timeout, with a panic caught as an error.
    async fn run_bounded(
        &self,
        call: &ToolCall,
        ctx: &ToolContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.name() == call.tool)
            .ok_or_else(|| ToolError::UnknownTool { tool: call.tool.clone(), known: self.names().join(", ") })?;
        let seconds = self.env.config.runtime.tool_timeout_s;
        let inner = cancel.child_token();
        let run = AssertUnwindSafe(tool.run(&self.env, &call.arguments, ctx, &inner)).catch_unwind();
        tokio::pin!(run);
        tokio::select! {
            done = &mut run => done.unwrap_or_else(|_| Err(ToolError::Panicked { tool: call.tool.clone() })),
            _ = tokio::time::sleep(Duration::from_secs(seconds)) => {
                // Let the tool stop what it started (a sandboxed process group gets
                // SIGTERM, then SIGKILL after sandbox.kill_grace_ms) before giving up on it.
                inner.cancel();
                let grace = Duration::from_millis(self.env.config.sandbox.kill_grace_ms.saturating_mul(2));
                let _ = tokio::time::timeout(grace, &mut run).await;
                Err(ToolError::TimedOut { tool: call.tool.clone(), seconds })
            }
        }
    }
}

/// Appends one event to the task; a store failure is logged, not raised (the call's result stands).
async fn record(env: &AgentEnv, ctx: &ToolContext<'_>, kind: EventType, payload: Value) {
    if let Err(e) = ctx.log.lock().await.record(env, vec![NewEvent::new(kind, payload)]).await {
        tracing::warn!(error = %e, "could not record a tool event");
    }
}

/// The string argument `key` of a call to `tool`.
pub(crate) fn str_arg<'a>(tool: &str, args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| ToolError::BadArguments {
        tool: tool.to_string(),
        reason: format!("`{key}` (a string) is missing"),
    })
}

#[cfg(test)]
mod tests;
