//! A task's events as `session/update`s: each tool the runtime uses (the test
//! runs, locating the code, each coder attempt, the critic) becomes an ACP tool
//! call whose status follows its events; test failures become locations and
//! text; every other event worth a line (`describe_event`) becomes a thought.
//! A pure projection: the same events give the same updates.

use crate::agent::describe_event;
use crate::contracts::{EventType, RuntimeEvent};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use std::path::Path;

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Text content for a tool call.
pub fn text(t: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(t.into())))
}

/// A chunk of the agent's message.
pub fn message(t: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(t.into()))))
}

/// A chunk of the agent's thoughts (progress that is not a tool call).
pub fn thought(t: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(t.into()))))
}

/// A location for a workspace-relative `rel` at 1-based `line` (0 = none).
pub fn location(root: &Path, rel: &str, line: u64) -> ToolCallLocation {
    let loc = ToolCallLocation::new(root.join(rel));
    if line > 0 {
        loc.line(u32::try_from(line).unwrap_or(u32::MAX))
    } else {
        loc
    }
}

/// The id of the tool call an event belongs to (stable within a task).
fn call_id(task: &str, p: &Value, event: EventType) -> Option<String> {
    let attempt = p.get("attempt").and_then(Value::as_u64).unwrap_or(0);
    let kind = match (event, s(p, "tool")) {
        (EventType::ToolCalled | EventType::ToolCompleted, "run_tests") => format!("tests-{attempt}"),
        (EventType::ToolCalled | EventType::ToolCompleted, "locate") => "locate".into(),
        (EventType::CoderCalled | EventType::CoderCompleted, _) => format!("edit-{attempt}"),
        (EventType::CriticCalled | EventType::CriticCompleted, _) => "critic".into(),
        _ => return None,
    };
    Some(format!("{}-{kind}", task.get(..8).unwrap_or(task)))
}

/// The failures of a test run's payload: locations and one line each.
fn failures(root: &Path, p: &Value) -> (Vec<ToolCallLocation>, Vec<String>) {
    let mut locations = Vec::new();
    let mut lines = Vec::new();
    for f in p.get("failures").and_then(Value::as_array).into_iter().flatten() {
        let (file, line) = (s(f, "file"), f.get("line").and_then(Value::as_u64).unwrap_or(0));
        let place = if file.is_empty() { String::new() } else { format!("{file}:{line} ") };
        lines.push(format!("- {place}{}: {}", s(f, "test"), s(f, "message").lines().next().unwrap_or("")));
        if !file.is_empty() {
            locations.push(location(root, file, line));
        }
    }
    (locations, lines)
}

/// The updates for one event of a task whose workspace is `root`.
pub fn project(root: &Path, event: &RuntimeEvent) -> Vec<SessionUpdate> {
    let p = &event.payload;
    let line = describe_event(event);
    let Some(id) = call_id(&event.task_id, p, event.event_type) else {
        return match (event.event_type, line) {
            (EventType::TaskCompleted | EventType::TaskFailed, _) | (_, None) => Vec::new(),
            (_, Some(l)) => vec![thought(format!("{}\n", l.trim()))],
        };
    };
    let line = line.unwrap_or_default();
    let update = match event.event_type {
        EventType::ToolCalled => {
            let (kind, title) = match s(p, "tool") {
                "locate" => (ToolKind::Search, "Find the code to change".to_string()),
                _ if s(p, "purpose") == "baseline" => (ToolKind::Execute, "Run the project's tests".to_string()),
                _ => (ToolKind::Execute, format!("Attempt {}: run the tests with the edit", p["attempt"])),
            };
            SessionUpdate::ToolCall(
                ToolCall::new(id, title).kind(kind).status(ToolCallStatus::InProgress).raw_input(p.clone()),
            )
        }
        EventType::CoderCalled => SessionUpdate::ToolCall(
            ToolCall::new(id, format!("Attempt {}: edit {}", p["attempt"], s(p, "file")))
                .kind(ToolKind::Edit)
                .status(ToolCallStatus::InProgress)
                .locations(vec![location(root, s(p, "file"), 0)])
                .raw_input(p.clone()),
        ),
        EventType::CriticCalled => SessionUpdate::ToolCall(
            ToolCall::new(id, "Review the patch").kind(ToolKind::Think).status(ToolCallStatus::InProgress),
        ),
        EventType::ToolCompleted if s(p, "tool") == "run_tests" => {
            let (locations, lines) = failures(root, p);
            let mut body = line;
            if !lines.is_empty() {
                body = format!("{body}\n{}", lines.join("\n"));
            }
            let status = if p["ok"] == false { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
            let fields = ToolCallUpdateFields::new()
                .status(status)
                .content(vec![text(body)])
                .locations(locations)
                .raw_output(p.clone());
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
        }
        EventType::ToolCompleted => {
            let mut fields = ToolCallUpdateFields::new().content(vec![text(line)]).raw_output(p.clone());
            if p["ok"] == true {
                let start = p["lines"][0].as_u64().unwrap_or(0);
                fields = fields.status(ToolCallStatus::Completed).locations(vec![location(root, s(p, "path"), start)]);
            } else {
                fields = fields.status(ToolCallStatus::Failed);
            }
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
        }
        EventType::CoderCompleted => {
            let (status, body) = if p["ok"] == true {
                (ToolCallStatus::Completed, format!("{}\n```diff\n{}```", line.trim(), s(p, "diff")))
            } else {
                (ToolCallStatus::Failed, line.trim().to_string())
            };
            let fields = ToolCallUpdateFields::new().status(status).content(vec![text(body)]);
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
        }
        EventType::CriticCompleted => {
            let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Completed).content(vec![text(line)]);
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
        }
        _ => return Vec::new(),
    };
    vec![update]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(t: EventType, payload: Value) -> RuntimeEvent {
        serde_json::from_value(json!({
            "event_id": "e", "task_id": "0123456789", "session_id": null, "sequence": 1, "type": t,
            "timestamp": "2025-01-01T00:00:00Z", "payload": payload, "causation_id": null, "correlation_id": "c"
        }))
        .expect("a runtime event")
    }

    #[test]
    fn test_runs_become_tool_calls_with_failures_as_locations() {
        let root = Path::new("/w");
        let started = project(root, &event(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "baseline"})));
        let v = serde_json::to_value(&started).unwrap();
        assert_eq!(v[0]["sessionUpdate"], "tool_call");
        assert_eq!(v[0]["toolCallId"], "01234567-tests-0");
        assert_eq!(v[0]["kind"], "execute");
        assert_eq!(v[0]["status"], "in_progress");
        let done = project(
            root,
            &event(
                EventType::ToolCompleted,
                json!({"tool": "run_tests", "purpose": "baseline", "ok": true, "passed": false, "command": "pytest",
                       "why": "pyproject", "failing": ["t"], "failures": [{"file": "tests/t.py", "line": 9, "test": "t", "message": "assert 1 == 2\nmore"}]}),
            ),
        );
        let v = serde_json::to_value(&done).unwrap();
        assert_eq!(v[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(v[0]["status"], "completed");
        assert_eq!(v[0]["locations"][0], json!({"path": "/w/tests/t.py", "line": 9}));
        let body = v[0]["content"][0]["content"]["text"].as_str().unwrap();
        assert!(body.contains("1 test(s) fail") && body.contains("- tests/t.py:9 t: assert 1 == 2"), "{body}");
    }

    #[test]
    fn coder_attempts_carry_their_diff_and_other_events_are_thoughts() {
        let root = Path::new("/w");
        let done = project(
            root,
            &event(
                EventType::CoderCompleted,
                json!({"attempt": 2, "ok": true, "changed_symbols": ["f"], "diff": "-a\n+b\n"}),
            ),
        );
        let v = serde_json::to_value(&done).unwrap();
        assert_eq!(v[0]["toolCallId"], "01234567-edit-2");
        assert!(v[0]["content"][0]["content"]["text"].as_str().unwrap().contains("```diff\n-a\n+b\n```"));
        let t = project(root, &event(EventType::TaskReceived, json!({"input": "fix"})));
        assert_eq!(serde_json::to_value(&t).unwrap()[0]["sessionUpdate"], "agent_thought_chunk");
        assert!(project(root, &event(EventType::TaskCompleted, json!({"summary": "done"}))).is_empty());
    }
}
