//! A task's events as `session/update`s: each tool the runtime uses (the test
//! runs, locating the code, each coder attempt, the critic) becomes an ACP tool
//! call whose status follows its events; test failures become locations and
//! text; every other event worth a line (`describe_event`) becomes a thought.
//! A pure projection: the same events give the same updates.
//!
//! A planned request (`PlanUpdates`) adds its own: the plan as a tool call
//! listing the steps and as an ACP plan whose entries follow the steps, each
//! step as a tool call, the baseline and whole-patch test runs; its steps' own
//! tasks are projected like any task.

use crate::agent::describe_event;
use crate::contracts::{EventType, RuntimeEvent};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

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
        EventType::ToolCompleted if s(p, "tool") == "run_tests" => tests_done(root, id, p, line),
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

/// The end of a test run as an update of tool call `id`: `line` and the failures.
fn tests_done(root: &Path, id: String, p: &Value, line: String) -> SessionUpdate {
    let (locations, lines) = failures(root, p);
    let mut body = line;
    if !lines.is_empty() {
        body = format!("{body}\n{}", lines.join("\n"));
    }
    let failed = p["ok"] == false || p["success"] == false;
    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let fields =
        ToolCallUpdateFields::new().status(status).content(vec![text(body)]).locations(locations).raw_output(p.clone());
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
}

/// One step of the plan as the ACP plan shows it.
struct Entry {
    id: String,
    content: String,
    status: PlanEntryStatus,
}

/// The updates of a planned request (`agent::plan::run_request`) and of its steps' tasks.
/// It remembers the plan's steps (to resend the ACP plan as each step moves on) and the
/// steps' task ids (named by `step_started`); events of other tasks give nothing.
pub struct PlanUpdates {
    root: PathBuf,
    task_id: String,
    steps: Vec<Entry>,
    step_tasks: HashSet<String>,
}

impl PlanUpdates {
    /// Follows task `task_id` of the workspace at `root`.
    pub fn new(root: &Path, task_id: &str) -> Self {
        Self { root: root.to_path_buf(), task_id: task_id.to_string(), steps: Vec::new(), step_tasks: HashSet::new() }
    }

    fn id(&self, what: &str) -> String {
        format!("{}-{what}", self.task_id.get(..8).unwrap_or(&self.task_id))
    }

    fn plan(&self) -> SessionUpdate {
        let entries = self
            .steps
            .iter()
            .map(|e| PlanEntry::new(e.content.clone(), PlanEntryPriority::Medium, e.status.clone()))
            .collect();
        SessionUpdate::Plan(Plan::new(entries))
    }

    fn set(&mut self, step: &str, status: PlanEntryStatus, failed: Option<&str>) {
        if let Some(e) = self.steps.iter_mut().find(|e| e.id == step) {
            e.status = status;
            if let Some(why) = failed {
                e.content = format!("{} (failed: {why})", e.content);
            }
        }
    }

    /// The updates for one event.
    pub fn project(&mut self, event: &RuntimeEvent) -> Vec<SessionUpdate> {
        if self.step_tasks.contains(&event.task_id) {
            return project(&self.root, event);
        }
        if event.task_id != self.task_id {
            return Vec::new();
        }
        let p = &event.payload;
        let line = describe_event(event).unwrap_or_default();
        let root = self.root.clone();
        match event.event_type {
            EventType::PlanCreated => {
                let steps: Vec<&Value> = p["plan"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
                self.steps = steps
                    .iter()
                    .map(|st| Entry {
                        id: s(st, "id").to_string(),
                        content: step_line(st),
                        status: PlanEntryStatus::Pending,
                    })
                    .collect();
                let list: Vec<String> = steps.iter().map(|st| format!("{}. {}", s(st, "id"), step_line(st))).collect();
                let mut files: Vec<&str> =
                    steps.iter().map(|st| s(st, "file")).filter(|f| !f.is_empty() && *f != ".").collect();
                files.dedup();
                let call = ToolCall::new(self.id("plan"), format!("Plan: {} step(s)", steps.len()))
                    .kind(ToolKind::Think)
                    .status(ToolCallStatus::Completed)
                    .content(vec![text(format!("{}\n{}", line.trim(), list.join("\n")))])
                    .locations(files.iter().map(|f| location(&root, f, 0)).collect())
                    .raw_input(p.clone());
                vec![SessionUpdate::ToolCall(call), self.plan()]
            }
            EventType::StepStarted => {
                if let Some(t) = p["task_id"].as_str() {
                    self.step_tasks.insert(t.to_string());
                }
                let step = s(p, "step_id").to_string();
                self.set(&step, PlanEntryStatus::InProgress, None);
                let kind = match s(p, "action") {
                    "query" => ToolKind::Search,
                    "command" => ToolKind::Execute,
                    _ => ToolKind::Edit,
                };
                let mut call =
                    ToolCall::new(self.id(&format!("step-{step}")), format!("Step {step}: {}", step_line(p)))
                        .kind(kind)
                        .status(ToolCallStatus::InProgress)
                        .raw_input(p.clone());
                let file = s(p, "file");
                if !file.is_empty() && file != "." {
                    call = call.locations(vec![location(&root, file, 0)]);
                }
                vec![SessionUpdate::ToolCall(call), self.plan()]
            }
            EventType::ToolCompleted if s(p, "tool") == "step" => {
                let step = s(p, "step_id").to_string();
                let ok = p["ok"] == true;
                let (status, entry) = if ok {
                    (ToolCallStatus::Completed, PlanEntryStatus::Completed)
                } else {
                    (ToolCallStatus::Failed, PlanEntryStatus::InProgress)
                };
                self.set(&step, entry, (!ok).then(|| s(p, "summary")));
                let fields = ToolCallUpdateFields::new().status(status).content(vec![text(s(p, "summary"))]);
                let update = ToolCallUpdate::new(self.id(&format!("step-{step}")), fields);
                vec![SessionUpdate::ToolCallUpdate(update), self.plan()]
            }
            EventType::ToolCalled if s(p, "tool") == "run_tests" => {
                let (id, title) = match s(p, "purpose") {
                    "whole_patch" => (self.id("tests-whole"), "Run the tests with every step's changes"),
                    _ => (self.id("tests-baseline"), "Run the project's tests"),
                };
                let call = ToolCall::new(id, title).kind(ToolKind::Execute).status(ToolCallStatus::InProgress);
                vec![SessionUpdate::ToolCall(call.raw_input(p.clone()))]
            }
            EventType::ToolCompleted if s(p, "tool") == "run_tests" => {
                let id =
                    if s(p, "purpose") == "whole_patch" { self.id("tests-whole") } else { self.id("tests-baseline") };
                vec![tests_done(&root, id, p, line)]
            }
            EventType::TaskCompleted | EventType::TaskFailed => Vec::new(),
            _ if line.is_empty() => Vec::new(),
            _ => vec![thought(format!("{}\n", line.trim()))],
        }
    }
}

/// A plan step (or a `step_started` payload) in one line: what it does, to what, and why.
fn step_line(st: &Value) -> String {
    let action = st.get("action_type").or_else(|| st.get("action")).and_then(Value::as_str).unwrap_or("edit");
    let subject = match st["command"].as_str() {
        Some(c) => format!("`{c}`"),
        None => s(st, "file").to_string(),
    };
    let after: Vec<&str> =
        st["depends_on"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let after = if after.is_empty() { String::new() } else { format!(" (after {})", after.join(", ")) };
    format!("{action} {subject}: {}{after}", s(st, "description"))
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

    #[test]
    fn a_planned_request_shows_its_plan_steps_and_whole_patch_tests() {
        let root = Path::new("/w");
        let mut view = PlanUpdates::new(root, "0123456789");
        let plan = json!({"plan": [
            {"id": "1", "kind": "coder", "action_type": "edit", "file": "shop/tax.py", "description": "add rate", "depends_on": []},
            {"id": "2", "kind": "coder", "action_type": "edit", "file": "shop/cart.py", "description": "pass rate", "depends_on": ["1"]}
        ], "route": {"route": "planned", "reason": "the request names 2 files"}});
        let v = serde_json::to_value(view.project(&event(EventType::PlanCreated, plan))).unwrap();
        assert_eq!(v[0]["sessionUpdate"], "tool_call");
        assert_eq!(v[0]["toolCallId"], "01234567-plan");
        let body = v[0]["content"][0]["content"]["text"].as_str().unwrap();
        assert!(
            body.contains("1. edit shop/tax.py: add rate")
                && body.contains("2. edit shop/cart.py: pass rate (after 1)"),
            "{body}"
        );
        assert_eq!(v[0]["locations"].as_array().unwrap().len(), 2);
        assert_eq!(v[1]["sessionUpdate"], "plan");
        assert_eq!(v[1]["entries"][1]["status"], "pending");

        let start = json!({"step_id": "1", "file": "shop/tax.py", "action": "edit", "description": "add rate", "task_id": "abcdef0123"});
        let v = serde_json::to_value(view.project(&event(EventType::StepStarted, start))).unwrap();
        assert_eq!(v[0]["toolCallId"], "01234567-step-1");
        assert_eq!(v[0]["kind"], "edit");
        assert_eq!(v[1]["entries"][0]["status"], "in_progress");
        // The step's own task is followed from its `step_started` on; other tasks are not.
        let mut coder = event(EventType::CoderCalled, json!({"attempt": 1, "file": "shop/tax.py"}));
        coder.task_id = "abcdef0123".into();
        let v = serde_json::to_value(view.project(&coder)).unwrap();
        assert_eq!(v[0]["toolCallId"], "abcdef01-edit-1");
        coder.task_id = "someone-else".into();
        assert!(view.project(&coder).is_empty());

        let done = json!({"tool": "step", "step_id": "1", "ok": false, "summary": "no attempt passed"});
        let v = serde_json::to_value(view.project(&event(EventType::ToolCompleted, done))).unwrap();
        assert_eq!(v[0]["status"], "failed");
        assert!(v[1]["entries"][0]["content"].as_str().unwrap().ends_with("(failed: no attempt passed)"), "{v:#}");

        let whole = json!({"tool": "run_tests", "purpose": "whole_patch"});
        let v = serde_json::to_value(view.project(&event(EventType::ToolCalled, whole))).unwrap();
        assert_eq!(v[0]["toolCallId"], "01234567-tests-whole");
        let whole = json!({"tool": "run_tests", "purpose": "whole_patch", "success": false, "why": "1 test fails"});
        let v = serde_json::to_value(view.project(&event(EventType::ToolCompleted, whole))).unwrap();
        assert_eq!(
            (v[0]["toolCallId"].as_str(), v[0]["status"].as_str()),
            (Some("01234567-tests-whole"), Some("failed"))
        );
        assert!(view.project(&event(EventType::TaskFailed, json!({"reason": "x"}))).is_empty());
    }
}
