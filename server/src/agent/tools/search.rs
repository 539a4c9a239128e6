//! `search` (the tantivy index, the one search of the product) and `run_tests`
//! (the project's tests in a fresh shadow, with the plan's pending changes).

use super::{str_arg, Tool, ToolContext, ToolError, ToolOutput};
use crate::agent::steps::run_tests;
use crate::agent::AgentEnv;
use crate::sandbox::SandboxError;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Searches the index: one line per hit, `path:start-end kind signature`.
pub(super) struct Search;

#[async_trait::async_trait]
impl Tool for Search {
    fn name(&self) -> &'static str {
        "search"
    }

    async fn run(
        &self,
        env: &AgentEnv,
        args: &Value,
        _ctx: &ToolContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let query = str_arg(self.name(), args, "query")?.to_string();
        let limit =
            args.get("limit").and_then(Value::as_u64).map_or(env.config.runtime.query_hits as usize, |l| l as usize);
        let index = env.index.clone();
        let hits = tokio::task::spawn_blocking(move || index.search(&query, limit))
            .await
            .map_err(|e| ToolError::Search(format!("the search stopped: {e}")))?
            .map_err(|e| ToolError::Search(e.to_string()))?;
        let lines: Vec<String> = hits
            .iter()
            .map(|h| format!("{}:{}-{} {} {}", h.path, h.start_line, h.end_line, h.kind, h.signature.trim()))
            .collect();
        let mut out = ToolOutput::ok(lines.join("\n"));
        out.detail = json!({"hits": hits.len()});
        Ok(out)
    }
}

/// Runs the project's tests in a fresh shadow with the plan's pending changes.
pub(super) struct RunTests;

#[async_trait::async_trait]
impl Tool for RunTests {
    fn name(&self) -> &'static str {
        "run_tests"
    }

    async fn run(
        &self,
        env: &AgentEnv,
        _args: &Value,
        ctx: &ToolContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        // The same run as the whole patch's test: the user's view with the changes as overlays.
        let pending: Vec<(String, String)> = ctx.layer_snapshot().into_iter().collect();
        let summary = match run_tests(env, &pending, cancel).await {
            Ok(s) => s,
            Err(SandboxError::NoTestCommand(root)) => {
                return Ok(ToolOutput {
                    error: Some(format!("no test command found in {}", root.display())),
                    detail: json!({"available": false}),
                    ..Default::default()
                })
            }
            Err(e) => return Err(e.into()),
        };
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let error = (!summary.passed).then(|| match summary.failing.len() {
            0 => format!("`{}` failed: {}", summary.command, summary.why),
            n => format!("{n} test(s) fail: {}", summary.failing.join(", ")),
        });
        Ok(ToolOutput {
            output: summary.output_tail.clone(),
            ok: summary.passed,
            error,
            exit_code: None,
            detail: json!({"command": summary.command, "passed": summary.passed, "failing": summary.failing}),
        })
    }
}
