//! A plan as the planner writes it: steps with files and dependencies, plain data.
//! Validation (files exist, no cycles) lives in `agent::plan`.

use serde::{Deserialize, Serialize};

/// Who carries out a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A tool runs it (search, tests).
    Tool,
    /// The coder writes an edit.
    Coder,
    /// Looks something up; never writes.
    Query,
    /// Answers the user in words.
    Respond,
}

/// What a step does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    /// Changes an existing file.
    Edit,
    /// Writes a new file.
    Create,
    /// Reads only.
    Query,
    /// Runs a shell command (behind the permission gate, in a sandboxed copy); writes nothing.
    Command,
}

impl ActionType {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Edit => "edit",
            Self::Create => "create",
            Self::Query => "query",
            Self::Command => "command",
        }
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanStep {
    /// Unique within the plan (e.g. "1", "add-param").
    pub id: String,
    pub kind: StepKind,
    pub action_type: ActionType,
    /// Workspace-relative path of the one file the step is about (empty or "." for a command step).
    pub file: String,
    /// The shell command line a `command` step runs; none for other steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What to do, in words the coder is given.
    pub description: String,
    /// Ids of the steps that must be done first.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// The user must agree before the step runs.
    #[serde(default)]
    pub requires_confirmation: bool,
}

/// The planner's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanReply {
    pub steps: Vec<PlanStep>,
}
