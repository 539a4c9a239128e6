//! Unit tests of the tool registry with `ScriptedModel` (a scripted model
//! double, never called here); everything else is real: files on disk, the
//! sandbox, SQLite and tantivy.

use super::*;
use crate::agent::tests::{config, workspace_with, Workspace};
use crate::store::NewTask;

const CALC: &str = "def add(a, b):\n    return a - b\n";

fn project(tool_timeout_s: u64) -> Workspace {
    let mut c = config();
    c.runtime.tool_timeout_s = tool_timeout_s;
    workspace_with(&[("calc.py", CALC)], c, vec![], None)
}

/// A task to record the calls' events on.
async fn task_log(ws: &Workspace) -> (String, tokio::sync::Mutex<TaskLog>) {
    let id = uuid::Uuid::new_v4().to_string();
    let task = NewTask { task_id: Some(id.clone()), session_id: None, input: "tools".into(), context: json!({}) };
    let (_, received) = ws.env.bus.create_task(task).await.expect("task");
    (id.clone(), tokio::sync::Mutex::new(TaskLog::new(&id, Some(received.event_id))))
}

fn call(tool: &str, arguments: Value) -> ToolCall {
    ToolCall { tool: tool.into(), arguments }
}

#[tokio::test]
async fn scripted_model_file_read_refuses_paths_outside_the_workspace_and_records_each_call() {
    let ws = project(30);
    let (id, log) = task_log(&ws).await;
    let registry = ToolRegistry::new(ws.env.clone());
    let ctx = ToolContext { log: &log, layer: None, step_id: Some("s1") };
    let cancel = CancellationToken::new();
    for bad in ["../x", "/etc/passwd", "a/../../x"] {
        let r = registry.call(&call("file_read", json!({"path": bad})), &ctx, &cancel).await;
        assert!(!r.ok, "{bad}: {r:?}");
        let error = r.error.unwrap_or_default();
        assert!(error.contains(&format!("`{bad}` is outside the workspace")), "{error}");
    }
    let r = registry.call(&call("file_read", json!({"path": "./calc.py"})), &ctx, &cancel).await;
    assert!(r.ok && r.output == CALC, "{r:?}");
    let r = registry.call(&call("file_read", json!({"path": "nope.py"})), &ctx, &cancel).await;
    assert!(r.error.unwrap_or_default().contains("`nope.py` is not a readable text file"));
    let r = registry.call(&call("file_read", json!({})), &ctx, &cancel).await;
    assert!(r.error.unwrap_or_default().contains("`path` (a string) is missing"));
    let r = registry.call(&call("rm_rf", json!({})), &ctx, &cancel).await;
    assert!(r.error.unwrap_or_default().contains("there is no tool `rm_rf`; the tools are file_read,"));

    let events = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let called = events.iter().filter(|e| e.event_type == EventType::ToolCalled).count();
    let done: Vec<&Value> =
        events.iter().filter(|e| e.event_type == EventType::ToolCompleted).map(|e| &e.payload).collect();
    assert_eq!((called, done.len()), (7, 7), "one pair per call, the unknown tool's too");
    assert!(done.iter().all(|p| p["registry"] == true && p["step_id"] == "s1"), "{done:?}");
    assert_eq!(done[3]["ok"], true);
}

#[tokio::test]
async fn scripted_model_file_write_needs_the_plans_layer_and_never_touches_the_disk() {
    let ws = project(30);
    let (_, log) = task_log(&ws).await;
    let registry = ToolRegistry::new(ws.env.clone());
    let cancel = CancellationToken::new();
    let write = call("file_write", json!({"path": "calc.py", "text": "x = 1\n"}));
    let bare = ToolContext { log: &log, layer: None, step_id: None };
    let r = registry.call(&write, &bare, &cancel).await;
    assert!(!r.ok && r.error.unwrap_or_default().contains("never written by a tool"));
    let layer = Mutex::new(BTreeMap::new());
    let ctx = ToolContext { log: &log, layer: Some(&layer), step_id: None };
    assert!(registry.call(&write, &ctx, &cancel).await.ok);
    let r = registry.call(&call("file_write", json!({"path": "../calc.py", "text": ""})), &ctx, &cancel).await;
    assert!(!r.ok, "a write outside the workspace is refused too");
    assert_eq!(layer.lock().unwrap().get("calc.py").map(String::as_str), Some("x = 1\n"));
    let r = registry.call(&call("file_read", json!({"path": "calc.py"})), &ctx, &cancel).await;
    assert_eq!(r.output, "x = 1\n", "a read sees the plan's pending change");
    assert_eq!(std::fs::read_to_string(ws.root.join("calc.py")).unwrap(), CALC, "the disk is untouched");
}

#[tokio::test]
async fn scripted_model_a_tool_call_past_its_timeout_is_stopped_with_a_timeout_error() {
    let ws = project(1);
    let (id, log) = task_log(&ws).await;
    let registry = ToolRegistry::new(ws.env.clone());
    let ctx = ToolContext { log: &log, layer: None, step_id: None };
    let started = Instant::now();
    let r = registry.call(&call("shell_exec", json!({"command": "sleep 30"})), &ctx, &CancellationToken::new()).await;
    assert!(!r.ok, "{r:?}");
    let error = r.error.unwrap_or_default();
    assert!(error.contains("runtime.tool_timeout_s (1 s)") && error.contains("timeout"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(15), "stopped near the timeout: {:?}", started.elapsed());
    let events = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let done = events.iter().find(|e| e.event_type == EventType::ToolCompleted).expect("completed");
    assert_eq!(done.payload["outcome"], "timed_out");
}

#[tokio::test]
async fn scripted_model_search_and_shell_exec_answer_through_the_registry() {
    let ws = project(60);
    let (_, log) = task_log(&ws).await;
    let registry = ToolRegistry::new(ws.env.clone());
    let layer = Mutex::new(BTreeMap::from([("calc.py".to_string(), "PENDING = 1\n".to_string())]));
    let ctx = ToolContext { log: &log, layer: Some(&layer), step_id: None };
    let cancel = CancellationToken::new();
    let r = registry.call(&call("search", json!({"query": "add"})), &ctx, &cancel).await;
    assert!(r.ok && r.output.contains("calc.py:1-2"), "{r:?}");
    let r = registry.call(&call("shell_exec", json!({"command": "cat calc.py; exit 3"})), &ctx, &cancel).await;
    assert_eq!((r.ok, r.exit_code), (false, Some(3)), "{r:?}");
    assert!(r.output.contains("PENDING = 1"), "the command saw the pending change: {r:?}");
    assert!(r.error.unwrap_or_default().contains("exited with code 3"));
    assert_eq!(std::fs::read_to_string(ws.root.join("calc.py")).unwrap(), CALC);
}
