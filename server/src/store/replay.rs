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

    #[test]
    fn every_event_sets_its_own_field_and_nothing_else() {
        let mut state = TaskState::new("t");
        let mut expected = TaskState::new("t");
        let step = |state: &mut TaskState, seq: u64, t: EventType, payload: serde_json::Value| {
            assert!(state.apply(&ev(seq, t, payload)), "event {seq} applies");
        };
        step(&mut state, 1, EventType::TaskReceived, json!({"input": "fix it"}));
        expected.input = Some("fix it".into());
        step(&mut state, 2, EventType::PlanCreated, json!({"plan": ["a"]}));
        expected.plan = Some(json!(["a"]));
        expected.status = TaskStatus::Planning;
        // A plan event without a `plan` key stores its whole payload.
        step(&mut state, 3, EventType::PlanCreated, json!({"steps": 2}));
        expected.plan = Some(json!({"steps": 2}));
        step(&mut state, 4, EventType::StepStarted, json!({"step_id": "a"}));
        expected.active_step_id = Some("a".into());
        expected.status = TaskStatus::ExecutingStep;
        for seq in 5..=6 {
            step(&mut state, seq, EventType::LlmCalled, json!({}));
        }
        expected.llm_calls = 2;
        for seq in 7..=9 {
            step(&mut state, seq, EventType::ToolCalled, json!({"tool": "search"}));
        }
        expected.tool_calls = 3;
        for seq in 10..=13 {
            step(&mut state, seq, EventType::CoderCalled, json!({}));
        }
        expected.coder_calls = 4;
        step(&mut state, 14, EventType::CoderCompleted, json!({"step_id": "a"}));
        step(&mut state, 15, EventType::ToolCompleted, json!({"step_id": "b"}));
        step(&mut state, 16, EventType::ToolCompleted, json!({"step_id": "a"}));
        step(&mut state, 17, EventType::ToolCompleted, json!({}));
        expected.completed_steps = vec!["a".into(), "b".into()];
        for seq in 18..=19 {
            step(&mut state, seq, EventType::CheckpointSaved, json!({}));
        }
        expected.checkpoints = 2;
        for seq in 20..=22 {
            step(&mut state, seq, EventType::MemoryWritten, json!({}));
        }
        expected.memory_written = 3;
        expected.status = TaskStatus::StoringMemory;
        step(&mut state, 23, EventType::PermissionRequested, json!({"command": "rm x"}));
        expected.pending_permission = Some(json!({"command": "rm x"}));
        expected.status = TaskStatus::AwaitingPermission;
        expected.last_sequence = 23;
        expected.events_applied = 23;
        assert_eq!(state, expected);
        step(&mut state, 24, EventType::PermissionResolved, json!({"decision": "allow"}));
        step(&mut state, 25, EventType::TaskCompleted, json!({"patch": "diff"}));
        expected.pending_permission = None;
        expected.result = Some(json!({"patch": "diff"}));
        expected.active_step_id = None;
        expected.status = TaskStatus::Completed;
        expected.last_sequence = 25;
        expected.events_applied = 25;
        assert_eq!(state, expected);
        // Another task's event is refused.
        let mut other = ev(26, EventType::TaskFailed, json!({"reason": "x"}));
        other.task_id = "other".into();
        assert!(!state.apply(&other));
        assert_eq!(state, expected);
    }

    #[test]
    fn a_failure_without_a_reason_says_so() {
        let mut state = TaskState::new("t");
        state.apply(&ev(1, EventType::StepStarted, json!({"step_id": "a"})));
        state.apply(&ev(2, EventType::TaskFailed, json!({})));
        assert_eq!(state.failure_reason.as_deref(), Some("no reason recorded"));
        assert_eq!(state.active_step_id, None);
        assert_eq!(state.status, TaskStatus::Failed);
    }

    #[test]
    fn each_event_type_moves_the_status_as_documented() {
        use EventType as E;
        use TaskStatus as S;
        let from = S::Planning;
        let cases = [
            (E::TaskReceived, json!({}), S::Received),
            (E::ContextBuilt, json!({}), S::Orchestrating),
            (E::PlanCreated, json!({}), S::Planning),
            (E::ToolCalled, json!({"tool": "run_tests"}), S::Testing),
            (E::ToolCalled, json!({"tool": "search"}), S::ExecutingStep),
            (E::StepStarted, json!({}), S::ExecutingStep),
            (E::CoderCalled, json!({}), S::ExecutingStep),
            (E::PermissionResolved, json!({}), S::ExecutingStep),
            (E::CriticCalled, json!({}), S::CriticEvaluating),
            (E::MemoryWriteSuggested, json!({}), S::StoringMemory),
            (E::MemoryWriteDecided, json!({}), S::StoringMemory),
            (E::MemoryWritten, json!({}), S::StoringMemory),
            (E::PermissionRequested, json!({}), S::AwaitingPermission),
            (E::TaskCompleted, json!({}), S::Completed),
            (E::TaskFailed, json!({}), S::Failed),
            (E::StatusChanged, json!({"status": "testing"}), S::Testing),
            (E::LlmCalled, json!({}), from),
            (E::LlmResultReceived, json!({}), from),
            (E::ToolCompleted, json!({}), from),
            (E::CoderCompleted, json!({}), from),
            (E::CriticCompleted, json!({}), from),
            (E::CheckpointSaved, json!({}), from),
        ];
        for (t, payload, want) in cases {
            assert_eq!(next_status(from, &ev(1, t, payload.clone())), want, "{t:?} {payload}");
        }
        for terminal in [S::Completed, S::Failed, S::Cancelled] {
            assert_eq!(next_status(terminal, &ev(1, E::StepStarted, json!({}))), terminal);
        }
    }
}
