//! The typed contracts of the design as plain serde data, shared by every layer.
//!
//! The bottom layer: it imports nothing from the crate (only serde, serde_json
//! and std), so `store`, `memory`, `sandbox` and `agent` may all use it without a
//! cycle. Architecture Invariant: nothing here may `use crate::...`.

mod plan;
mod strategy;
mod tool_call;

pub use plan::{ActionType, PlanReply, PlanStep, StepKind};
pub use strategy::{StrategyChoice, StrategyKind, StrategyQuestion};
pub use tool_call::{ToolCall, ToolResult};

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// The kinds of runtime events (the minimal set of the task flow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    TaskReceived,
    ContextBuilt,
    LlmCalled,
    LlmResultReceived,
    PlanCreated,
    StepStarted,
    ToolCalled,
    ToolCompleted,
    CoderCalled,
    CoderCompleted,
    CriticCalled,
    CriticCompleted,
    MemoryWriteSuggested,
    MemoryWriteDecided,
    MemoryWritten,
    PermissionRequested,
    PermissionResolved,
    CheckpointSaved,
    TaskCompleted,
    TaskFailed,
    /// The status changed without another event implying it (`payload.status`), e.g. a cancel.
    StatusChanged,
}

impl EventType {
    /// Every event type.
    pub const ALL: [EventType; 21] = [
        Self::TaskReceived,
        Self::ContextBuilt,
        Self::LlmCalled,
        Self::LlmResultReceived,
        Self::PlanCreated,
        Self::StepStarted,
        Self::ToolCalled,
        Self::ToolCompleted,
        Self::CoderCalled,
        Self::CoderCompleted,
        Self::CriticCalled,
        Self::CriticCompleted,
        Self::MemoryWriteSuggested,
        Self::MemoryWriteDecided,
        Self::MemoryWritten,
        Self::PermissionRequested,
        Self::PermissionResolved,
        Self::CheckpointSaved,
        Self::TaskCompleted,
        Self::TaskFailed,
        Self::StatusChanged,
    ];

    /// The snake_case name (as stored and serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TaskReceived => "task_received",
            Self::ContextBuilt => "context_built",
            Self::LlmCalled => "llm_called",
            Self::LlmResultReceived => "llm_result_received",
            Self::PlanCreated => "plan_created",
            Self::StepStarted => "step_started",
            Self::ToolCalled => "tool_called",
            Self::ToolCompleted => "tool_completed",
            Self::CoderCalled => "coder_called",
            Self::CoderCompleted => "coder_completed",
            Self::CriticCalled => "critic_called",
            Self::CriticCompleted => "critic_completed",
            Self::MemoryWriteSuggested => "memory_write_suggested",
            Self::MemoryWriteDecided => "memory_write_decided",
            Self::MemoryWritten => "memory_written",
            Self::PermissionRequested => "permission_requested",
            Self::PermissionResolved => "permission_resolved",
            Self::CheckpointSaved => "checkpoint_saved",
            Self::TaskCompleted => "task_completed",
            Self::TaskFailed => "task_failed",
            Self::StatusChanged => "status_changed",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// One thing that happened in a task; the event store is the source of truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeEvent {
    /// Unique id (uuid v4).
    pub event_id: String,
    pub task_id: String,
    pub session_id: Option<String>,
    /// Per-task monotonic, gapless, starting at 1.
    pub sequence: u64,
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// RFC 3339 UTC, millisecond precision.
    pub timestamp: String,
    pub payload: serde_json::Value,
    /// The event that caused this one.
    pub causation_id: Option<String>,
    /// Groups the events of one logical operation (defaults to the task id).
    pub correlation_id: String,
}

/// The lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Received,
    RetrievingMemory,
    Orchestrating,
    Planning,
    AwaitingPermission,
    ExecutingStep,
    Testing,
    CriticEvaluating,
    StoringMemory,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    /// Every status.
    pub const ALL: [TaskStatus; 12] = [
        Self::Received,
        Self::RetrievingMemory,
        Self::Orchestrating,
        Self::Planning,
        Self::AwaitingPermission,
        Self::ExecutingStep,
        Self::Testing,
        Self::CriticEvaluating,
        Self::StoringMemory,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

    /// Completed, failed or cancelled: nothing more happens to the task.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Received => "received",
            Self::RetrievingMemory => "retrieving_memory",
            Self::Orchestrating => "orchestrating",
            Self::Planning => "planning",
            Self::AwaitingPermission => "awaiting_permission",
            Self::ExecutingStep => "executing_step",
            Self::Testing => "testing",
            Self::CriticEvaluating => "critic_evaluating",
            Self::StoringMemory => "storing_memory",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A resumable snapshot of a task, saved after critical transitions and periodically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCheckpoint {
    pub task_id: String,
    pub status: TaskStatus,
    pub active_step_id: Option<String>,
    /// The plan / task graph as JSON (whatever the runtime needs to continue).
    pub plan_snapshot: serde_json::Value,
    /// The latest context summary.
    pub context_snapshot: serde_json::Value,
    /// The last event sequence this checkpoint covers.
    pub last_sequence: u64,
    /// RFC 3339 UTC.
    pub updated_at: String,
}

/// What a memory item records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    ErrorFix,
    Decision,
    Fact,
    UserPreference,
    Summary,
}

impl MemoryKind {
    /// Every kind.
    pub const ALL: [MemoryKind; 5] = [Self::ErrorFix, Self::Decision, Self::Fact, Self::UserPreference, Self::Summary];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ErrorFix => "error_fix",
            Self::Decision => "decision",
            Self::Fact => "fact",
            Self::UserPreference => "user_preference",
            Self::Summary => "summary",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Where a memory item came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemorySource {
    Tool,
    Critic,
    User,
    System,
}

impl MemorySource {
    /// Every source.
    pub const ALL: [MemorySource; 4] = [Self::Tool, Self::Critic, Self::User, Self::System];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Critic => "critic",
            Self::User => "user",
            Self::System => "system",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// A long-term memory item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    pub id: String,
    pub text: String,
    pub kind: MemoryKind,
    pub source: MemorySource,
    /// 0..1; items below `memory.min_weight_for_context` never reach a context.
    pub weight: f32,
    pub task_id: Option<String>,
    pub session_id: Option<String>,
    pub metadata: serde_json::Value,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
    /// The embedding model of the stored vector, if any.
    pub embedding_model: Option<String>,
    pub embedding_dim: Option<u32>,
}

/// The critic's judgement of a result (all scores 0..1); a signal, not a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CriticScore {
    pub correctness: f32,
    pub usefulness: f32,
    pub safety: f32,
    pub memory_store: bool,
    pub weight: f32,
    pub explanation: String,
}

/// The write policy's decision about one memory candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum MemoryDecision {
    /// Store with the runtime's weight, unchanged (no critic adjustment).
    Store,
    /// Store with this blended weight.
    StoreWithWeight { weight: f32 },
    /// Do not store, for this reason.
    Skip { reason: String },
    /// Update the existing item `id` instead of adding one; its weight becomes `new_weight`.
    MergeWithExisting { id: String, new_weight: f32 },
}

/// A person's decision about a class of actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionChoice {
    AllowOnce,
    AllowAlways,
    Deny,
    AskAlways,
}

impl PermissionChoice {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow_once",
            Self::AllowAlways => "allow_always",
            Self::Deny => "deny",
            Self::AskAlways => "ask_always",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// All choices, in the order a UI offers them.
    pub const ALL: [PermissionChoice; 4] = [Self::AllowOnce, Self::AllowAlways, Self::Deny, Self::AskAlways];

    /// The label shown to the user (LSP MessageActionItem title, CLI choice).
    pub fn label(self) -> &'static str {
        match self {
            Self::AllowOnce => "Allow once",
            Self::AllowAlways => "Allow always",
            Self::Deny => "Deny",
            Self::AskAlways => "Ask always",
        }
    }

    /// The choice whose label is `label` (for mapping a MessageActionItem back).
    pub fn from_label(label: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.label().eq_ignore_ascii_case(label.trim()))
    }

    /// True when the command may run now.
    pub fn allows(self) -> bool {
        matches!(self, Self::AllowOnce | Self::AllowAlways)
    }
}

/// A persisted permission decision (`action` e.g. "shell_command", `pattern` e.g. "rm").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    pub action: String,
    pub pattern: String,
    pub decision: PermissionChoice,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// A stored decision for a shell command pattern (the exact command line, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredDecision {
    /// The command pattern.
    pub pattern: String,
    /// The decision.
    pub decision: PermissionChoice,
    /// The rule that made it dangerous.
    pub rule: Option<String>,
    /// Unix seconds when it was stored.
    pub decided_at: u64,
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// RFC 3339 UTC with milliseconds for `ms` since the Unix epoch (no time-zone crate needed).
pub fn format_rfc3339_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_rfc3339_ms(1_795_000_000_000), "2026-11-18T11:06:40.000Z");
    }

    #[test]
    fn enums_round_trip_through_their_names() {
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).ok(), Some(serde_json::Value::String(t.as_str().into())));
        }
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).ok(), Some(serde_json::Value::String(s.as_str().into())));
        }
        for k in MemoryKind::ALL {
            assert_eq!(MemoryKind::parse(k.as_str()), Some(k));
        }
    }
}
