//! Why a tool call failed, in words a user (and the model after it) can act on.

use crate::sandbox::SandboxError;

/// A tool call's failure; the registry turns it into `ToolResult.error`.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("there is no tool `{tool}`; the tools are {known}")]
    UnknownTool { tool: String, known: String },
    #[error("the call of `{tool}` is malformed: {reason}")]
    BadArguments { tool: String, reason: String },
    #[error("`{path}` is outside the workspace; give a path relative to its root (no `..`, not absolute)")]
    OutsideWorkspace { path: String },
    #[error("`{path}` is not a readable text file of the workspace")]
    NoSuchFile { path: String },
    #[error("file_write writes only into the running plan's pending changes, and this call has none; the user's files are never written by a tool")]
    NoLayer,
    #[error("{}, which {} (rule `{rule}`: {reason}){}",
        if *.from_store { format!("a stored decision denies `{command}`") } else { format!("the user denied `{command}`") },
        .effect.replace('-', " "),
        if *.from_store { "; `tinycoder permissions reset` forgets it" } else { "" })]
    Denied { command: String, effect: String, rule: String, reason: String, from_store: bool },
    #[error("`{tool}` took longer than runtime.tool_timeout_s ({seconds} s) and was stopped (timeout)")]
    TimedOut { tool: String, seconds: u64 },
    #[error("`{command}` took longer than sandbox.shell_timeout_s ({seconds} s) and was killed (timeout)")]
    ShellTimedOut { command: String, seconds: u64 },
    #[error("the tool call was cancelled")]
    Cancelled,
    #[error("the search failed: {0}")]
    Search(String),
    #[error("the tool `{tool}` failed unexpectedly (a bug in tinycoder; the task goes on without it)")]
    Panicked { tool: String },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

impl ToolError {
    /// One word for the `tool_completed` event: `denied`, `timed_out`, `cancelled` or `error`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Denied { .. } => "denied",
            Self::TimedOut { .. } | Self::ShellTimedOut { .. } => "timed_out",
            Self::Cancelled => "cancelled",
            _ => "error",
        }
    }
}
