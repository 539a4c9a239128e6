//! What the router decides and what the coder is asked: plain data.

use serde::{Deserialize, Serialize};

/// The kind of the next thing the runtime should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectiveType {
    Plan,
    Tool,
    Coder,
    Critic,
    Respond,
    Replan,
    StoreMemory,
    RequestPermission,
    Complete,
    Fail,
    Noop,
}

/// A decision of the router: what to do next and why. Only the runtime applies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionDirective {
    #[serde(rename = "type")]
    pub directive_type: DirectiveType,
    /// What the step needs (e.g. `{"tool": "run_tests"}` or `{"file": "calc.py", "attempt": 2}`).
    pub payload: serde_json::Value,
    /// 0..1: how sure the router is (1 for rule-based decisions).
    pub confidence: f32,
    /// Why, in words a user can read.
    pub reason: String,
}

impl ExecutionDirective {
    /// A rule-based directive (confidence 1).
    pub fn new(directive_type: DirectiveType, payload: serde_json::Value, reason: impl Into<String>) -> Self {
        Self { directive_type, payload, confidence: 1.0, reason: reason.into() }
    }
}

/// What the coder is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoderMode {
    Generate,
    Fix,
    Refactor,
    Document,
    Test,
}

impl CoderMode {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Generate => "generate",
            Self::Fix => "fix",
            Self::Refactor => "refactor",
            Self::Document => "document",
            Self::Test => "test",
        }
    }
}

/// One coder call: one file, one instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoderRequest {
    pub mode: CoderMode,
    pub instruction: String,
    /// Workspace-relative path of the one file the coder edits.
    pub file: String,
    /// Titles of the context sections the call was given.
    pub context: Vec<String>,
}

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

/// A request as the user made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserTask {
    /// The request in words (or the diagnostic's message).
    pub text: String,
    /// Where it came from: `cli`, `lsp`, `acp`.
    pub origin: String,
    pub session_id: Option<String>,
}
