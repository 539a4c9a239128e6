//! `file_read` (the user's view, with the plan's pending changes on top) and
//! `file_write` (the plan's pending changes only: never the user's disk).

use super::{str_arg, Tool, ToolContext, ToolError, ToolOutput};
use crate::agent::plan::normalize_path;
use crate::agent::AgentEnv;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// `path` as a clean workspace-relative path, or why not.
fn workspace_path(path: &str) -> Result<String, ToolError> {
    match normalize_path(path) {
        Some(p) if !p.is_empty() => Ok(p),
        _ => Err(ToolError::OutsideWorkspace { path: path.to_string() }),
    }
}

/// Reads a workspace file as the user sees it (an unsaved buffer wins), after the plan's changes.
pub(super) struct FileRead;

#[async_trait::async_trait]
impl Tool for FileRead {
    fn name(&self) -> &'static str {
        "file_read"
    }

    async fn run(
        &self,
        env: &AgentEnv,
        args: &Value,
        ctx: &ToolContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = workspace_path(str_arg(self.name(), args, "path")?)?;
        let pending = ctx.layer.and_then(|l| l.lock().unwrap_or_else(|p| p.into_inner()).get(&path).cloned());
        let text = pending.or_else(|| env.sources.read(&path)).ok_or(ToolError::NoSuchFile { path: path.clone() })?;
        let mut out = ToolOutput::ok(text);
        out.detail = json!({"path": path});
        Ok(out)
    }
}

/// Writes a file into the running plan's pending changes.
pub(super) struct FileWrite;

#[async_trait::async_trait]
impl Tool for FileWrite {
    fn name(&self) -> &'static str {
        "file_write"
    }

    async fn run(
        &self,
        _env: &AgentEnv,
        args: &Value,
        ctx: &ToolContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = workspace_path(str_arg(self.name(), args, "path")?)?;
        let text = str_arg(self.name(), args, "text")?;
        let layer = ctx.layer.ok_or(ToolError::NoLayer)?;
        layer.lock().unwrap_or_else(|p| p.into_inner()).insert(path.clone(), text.to_string());
        let mut out = ToolOutput::ok(format!("{path}: {} bytes pending", text.len()));
        out.detail = json!({"path": path});
        Ok(out)
    }
}
