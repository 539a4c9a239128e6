//! Rebuilding a task's state from its events alone: a pure reducer.

use super::{Store, StoreError};
use crate::contracts::{EventType, RuntimeEvent, TaskStatus};
use serde::{Deserialize, Serialize};

/// A task's state as its events describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    pub task_id: String,
    pub status: TaskStatus,
    /// The highest sequence applied (the idempotency guard).
    pub last_sequence: u64,
    pub events_applied: u64,
    /// The user's request (from `task_received`).
    pub input: Option<String>,
    /// The plan (from the latest `plan_created`).
    pub plan: Option<serde_json::Value>,
    /// The step being worked on.
    pub active_step_id: Option<String>,
    /// Steps whose tool/coder work completed, in completion order, without repeats.
    pub completed_steps: Vec<String>,
    pub llm_calls: u32,
    pub tool_calls: u32,
    pub coder_calls: u32,
    pub checkpoints: u32,
    pub memory_written: u32,
    /// The permission request waiting for the user, if any.
    pub pending_permission: Option<serde_json::Value>,
    /// The result (from `task_completed`).
    pub result: Option<serde_json::Value>,
    /// Why the task failed (from `task_failed`).
    pub failure_reason: Option<String>,
}

impl TaskState {
    /// The state before any event.
    pub fn new(task_id: &str) -> Self {
        Self {
            task_id: task_id.to_string(),
            status: TaskStatus::Received,
            last_sequence: 0,
            events_applied: 0,
            input: None,
            plan: None,
            active_step_id: None,
            completed_steps: Vec::new(),
            llm_calls: 0,
            tool_calls: 0,
            coder_calls: 0,
            checkpoints: 0,
            memory_written: 0,
            pending_permission: None,
            result: None,
            failure_reason: None,
        }
    }

    /// Applies `event`; returns false (and changes nothing) for another task's
    /// event or one already applied (sequence ≤ `last_sequence`).
    pub fn apply(&mut self, event: &RuntimeEvent) -> bool {
        if event.task_id != self.task_id || event.sequence <= self.last_sequence {
            return false;
        }
        self.last_sequence = event.sequence;
        self.events_applied += 1;
        self.status = next_status(self.status, event);
        let p = &event.payload;
        let text = |key: &str| p.get(key).and_then(|v| v.as_str()).map(str::to_string);
        match event.event_type {
            EventType::TaskReceived => self.input = text("input"),
            EventType::PlanCreated => self.plan = Some(p.get("plan").cloned().unwrap_or_else(|| p.clone())),
            EventType::StepStarted => self.active_step_id = text("step_id"),
            EventType::LlmCalled => self.llm_calls += 1,
            EventType::ToolCalled => self.tool_calls += 1,
            EventType::CoderCalled => self.coder_calls += 1,
            EventType::ToolCompleted | EventType::CoderCompleted => {
                if let Some(step) = text("step_id") {
                    if !self.completed_steps.contains(&step) {
                        self.completed_steps.push(step);
                    }
                }
            }
            EventType::CheckpointSaved => self.checkpoints += 1,
            EventType::MemoryWritten => self.memory_written += 1,
            EventType::PermissionRequested => self.pending_permission = Some(p.clone()),
            EventType::PermissionResolved => self.pending_permission = None,
            EventType::TaskCompleted => {
                self.result = Some(p.clone());
                self.active_step_id = None;
            }
            EventType::TaskFailed => {
                self.failure_reason = Some(text("reason").unwrap_or_else(|| "no reason recorded".into()));
                self.active_step_id = None;
            }
            _ => {}
        }
        true
    }
}

/// The status after `event`, given the status before it. Terminal statuses are final.
pub fn next_status(current: TaskStatus, event: &RuntimeEvent) -> TaskStatus {
    if current.is_terminal() {
        return current;
    }
    match event.event_type {
        EventType::TaskReceived => TaskStatus::Received,
        EventType::ContextBuilt => TaskStatus::Orchestrating,
        EventType::PlanCreated => TaskStatus::Planning,
        EventType::ToolCalled if event.payload.get("tool").and_then(|t| t.as_str()) == Some("run_tests") => {
            TaskStatus::Testing
        }
        EventType::StepStarted | EventType::ToolCalled | EventType::CoderCalled | EventType::PermissionResolved => {
            TaskStatus::ExecutingStep
        }
        EventType::CriticCalled => TaskStatus::CriticEvaluating,
        EventType::MemoryWriteSuggested | EventType::MemoryWriteDecided | EventType::MemoryWritten => {
            TaskStatus::StoringMemory
        }
        EventType::PermissionRequested => TaskStatus::AwaitingPermission,
        EventType::TaskCompleted => TaskStatus::Completed,
        EventType::TaskFailed => TaskStatus::Failed,
        EventType::StatusChanged => {
            event.payload.get("status").and_then(|s| s.as_str()).and_then(TaskStatus::parse).unwrap_or(current)
        }
        EventType::LlmCalled
        | EventType::LlmResultReceived
        | EventType::ToolCompleted
        | EventType::CoderCompleted
        | EventType::CriticCompleted
        | EventType::CheckpointSaved => current,
    }
}

/// Rebuilds `task_id`'s state from its stored events, returning each event with the state after it.
pub async fn replay(store: &Store, task_id: &str) -> Result<Vec<(RuntimeEvent, TaskState)>, StoreError> {
    let id = task_id.to_string();
    let events = store.call(move |c| super::events::list(c, &id, 0)).await?;
    if events.is_empty() {
        return Err(StoreError::NotFound { what: format!("events of task {task_id}") });
    }
    let mut state = TaskState::new(task_id);
    Ok(events
        .into_iter()
        .map(|e| {
            state.apply(&e);
            (e, state.clone())
        })
        .collect())
}

/// The final state of `task_id`, folded from its stored events (no per-step copies: for status views).
pub async fn replay_state(store: &Store, task_id: &str) -> Result<TaskState, StoreError> {
    let id = task_id.to_string();
    let events = store.call(move |c| super::events::list(c, &id, 0)).await?;
    if events.is_empty() {
        return Err(StoreError::NotFound { what: format!("events of task {task_id}") });
    }
    let mut state = TaskState::new(task_id);
    for e in &events {
        state.apply(e);
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(seq: u64, t: EventType, payload: serde_json::Value) -> RuntimeEvent {
        RuntimeEvent {
            event_id: format!("e{seq}"),
            task_id: "t".into(),
            session_id: None,
            sequence: seq,
            event_type: t,
            timestamp: String::new(),
            payload,
            causation_id: None,
            correlation_id: "t".into(),
        }
    }

    #[test]
    fn applying_an_event_twice_changes_nothing() {
        let events = [
            ev(1, EventType::TaskReceived, json!({"input": "fix it"})),
            ev(2, EventType::PlanCreated, json!({"plan": ["a", "b"]})),
            ev(3, EventType::StepStarted, json!({"step_id": "a"})),
            ev(4, EventType::ToolCalled, json!({"step_id": "a"})),
            ev(5, EventType::ToolCompleted, json!({"step_id": "a"})),
            ev(6, EventType::PermissionRequested, json!({"command": "rm x"})),
            ev(7, EventType::PermissionResolved, json!({"decision": "deny"})),
            ev(8, EventType::TaskFailed, json!({"reason": "denied"})),
            ev(9, EventType::StepStarted, json!({"step_id": "late"})),
        ];
        let mut once = TaskState::new("t");
        for e in &events {
            assert!(once.apply(e));
        }
        let mut twice = TaskState::new("t");
        for e in &events {
            twice.apply(e);
            let before = twice.clone();
            assert!(!twice.apply(e), "re-applying {} must be refused", e.sequence);
            assert_eq!(twice, before);
        }
        assert_eq!(once, twice);
        assert_eq!(once.status, TaskStatus::Failed, "terminal status is final");
        assert_eq!(once.failure_reason.as_deref(), Some("denied"));
        assert_eq!(once.completed_steps, vec!["a".to_string()]);
        assert_eq!(once.pending_permission, None);
        // An older event arriving late is ignored too.
        assert!(!once.apply(&events[2]));
    }

    #[test]
    fn status_changed_sets_statuses_no_other_event_implies() {
        let s = next_status(TaskStatus::Received, &ev(2, EventType::StatusChanged, json!({"status": "testing"})));
        assert_eq!(s, TaskStatus::Testing);
        let s = next_status(TaskStatus::Testing, &ev(3, EventType::StatusChanged, json!({"status": "bogus"})));
        assert_eq!(s, TaskStatus::Testing);
    }
}
