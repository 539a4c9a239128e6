//! A tool call of the runtime and what it returned: plain data.

use serde::{Deserialize, Serialize};

/// A call of a tool by the runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// `run_tests`, `file_read`, `search`, …
    pub tool: String,
    pub arguments: serde_json::Value,
}

/// What a tool call returned; errors are isolated here, never thrown through the runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub ok: bool,
    pub output: String,
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
}
