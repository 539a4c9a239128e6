//! Requests that span files, end to end with REAL models on the test bed's
//! llama-server: Qwen2.5-Coder 1.5B plans (the 0.5B model does not split a
//! two-file request into two steps), 0.5B writes each step's edit. Through the
//! CLI (`plan`, `run`) and through the language server (`tinycoder.run`), the
//! task reaches a terminal state with the right events, and a patch is only
//! ever applied when the tests pass with it.

mod common;
mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PLANNER: &str = "qwen2.5-coder:1.5b";
const REQUEST: &str = "Add a `rate` parameter with default 0.2 to `with_tax` in shop/tax.py, and make `cart_total` in shop/cart.py take a `rate` parameter (default 0.2) that it passes to `with_tax`.";
/// A hang guard for a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(1200);

fn env(url: &str, home: &Path) -> Vec<(String, String)> {
    let mut env = common::agent_env(url, home);
    env.push(("TINYCODER_MODELS__PLANNER__NAME".into(), PLANNER.into()));
    env.push(("TINYCODER_RUNTIME__CRITIC".into(), "false".into()));
    env.push(("TINYCODER_RUNTIME__MAX_RETRIES".into(), "1".into()));
    env
}

fn tinycoder(project: &Path, home: &Path, url: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .args(args)
        .current_dir(project)
        .envs(env(url, home))
        .output()
        .expect("run tinycoder")
}

fn event_types(project: &Path, home: &Path, url: &str, task: &str) -> Vec<(String, Value)> {
    let ev = tinycoder(project, home, url, &["events", task, "--json"]);
    String::from_utf8_lossy(&ev.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| (e["type"].as_str().unwrap_or("").to_string(), e["payload"].clone()))
        .collect()
}

fn in_order(types: &[&str], wanted: &[&str]) -> bool {
    let mut at = 0;
    for t in types {
        if at < wanted.len() && *t == wanted[at] {
            at += 1;
        }
    }
    at == wanted.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_prints_a_validated_graph_and_run_reaches_a_terminal_state_through_the_cli() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("shop");
    common::copy_fixture("plan-python", &project);
    assert!(common::pytest_passes(&project), "the fixture starts green");
    let before = common::snapshot(&project);

    // `plan`: a graph with a step for each file the request names; nothing is written.
    let out = tokio::task::block_in_place(|| tinycoder(&project, home.path(), &url, &["plan", REQUEST, "--json"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let plan: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json prints one object ({e}); stderr:\n{stderr}"));
    let files: Vec<&str> = plan["steps"].as_array().unwrap().iter().filter_map(|s| s["file"].as_str()).collect();
    assert!(files.contains(&"shop/tax.py") && files.contains(&"shop/cart.py"), "{plan:#}");
    assert_eq!(plan["route"]["route"], "planned", "{plan:#}");
    assert!(plan["model_calls"].as_u64().unwrap() >= 1);
    assert_eq!(common::snapshot(&project), before, "`plan` writes nothing");

    // `run --yes`: a terminal state; a written patch leaves the tests green, a failure writes nothing.
    let out =
        tokio::task::block_in_place(|| tinycoder(&project, home.path(), &url, &["run", REQUEST, "--yes", "--json"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json prints one object ({e}); stderr:\n{stderr}"));
    let status = report["status"].as_str().unwrap_or("");
    assert!(matches!(status, "patched" | "failed"), "{report:#}\n{stderr}");
    assert_eq!(report["route"]["route"], "planned");
    let steps = report["steps"].as_array().expect("steps in the summary");
    assert!(steps.len() >= 2, "{report:#}");
    if report["applied"] == true {
        assert_eq!(status, "patched");
        assert!(common::pytest_passes(&project), "an applied patch leaves the tests green");
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(report["files_changed"].as_array().unwrap().len() >= 2, "{report:#}");
    } else {
        assert_eq!(common::snapshot(&project), before, "nothing written when the task fails:\n{report:#}");
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(report["failure_reason"].as_str().is_some_and(|r| r.starts_with("step ")), "{report:#}");
    }

    // The events tell the story: planned, baseline, steps, end.
    let task = report["task_id"].as_str().unwrap();
    let events = tokio::task::block_in_place(|| event_types(&project, home.path(), &url, task));
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    let wanted = [
        "task_received",
        "status_changed",
        "llm_called",
        "llm_result_received",
        "plan_created",
        "tool_called",
        "tool_completed",
        "step_started",
        "tool_completed",
    ];
    assert!(in_order(&types, &wanted), "events in order {wanted:?}, got {types:?}");
    let last = *types.last().unwrap();
    assert_eq!(last, if status == "patched" { "task_completed" } else { "task_failed" }, "{types:?}");
    // The first step's own task has its coder events.
    let step_task = events
        .iter()
        .find(|(t, p)| t == "step_started" && p["task_id"].is_string())
        .map(|(_, p)| p["task_id"].as_str().unwrap().to_string())
        .expect("a step with its own task");
    let step_events = tokio::task::block_in_place(|| event_types(&project, home.path(), &url, &step_task));
    assert!(step_events.iter().any(|(t, _)| t == "coder_called"), "{step_events:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tinycoder_run_in_the_editor_ends_in_a_tested_edit_or_a_clear_message() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| lsp_run(&url));
}

fn lsp_run(url: &str) {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    common::copy_fixture("plan-python", &root);
    client.replies.insert("workspace/applyEdit".into(), json!({"applied": true}));
    let mut init = common::agent_init_options(url);
    init["models"]["planner"] = json!({"name": PLANNER});
    init["runtime"] = json!({"critic": false, "max_retries": 1});
    client.initialize(&["utf-16"], init);

    let bad = client.request("workspace/executeCommand", json!({"command": "tinycoder.run", "arguments": []}));
    assert!(bad.is_err(), "a run without a request is refused: {bad:?}");

    let started = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.run", "arguments": [REQUEST]}))
        .expect("tinycoder.run starts");
    assert!(started["taskId"].is_string() && started["jobId"].is_string(), "{started:#}");
    let deadline = Instant::now() + DEADLINE;
    let mut progress = Vec::new();
    let outcome = loop {
        let m = client.next_before(deadline, "the run's outcome");
        if m["method"] == "$/progress" {
            if let Some(text) = m["params"]["value"]["message"].as_str() {
                progress.push(text.to_string());
            }
        }
        let message = m["params"]["message"].as_str().unwrap_or("");
        let ends_it = m["method"] == "window/showMessage"
            && (m["params"]["type"] == 1 || message.starts_with("tinycoder could not do it"));
        if m["method"] == "workspace/applyEdit" || ends_it {
            break m;
        }
    };
    assert!(progress.iter().any(|p| p.starts_with("plan: ")), "the plan is reported: {progress:#?}");
    assert!(progress.iter().any(|p| p.starts_with("step 1")), "steps are reported: {progress:#?}");
    if outcome["method"] == "workspace/applyEdit" {
        let edit = &outcome["params"]["edit"];
        assert_eq!(edit["changeAnnotations"]["tinycoder.patch"]["needsConfirmation"], true, "{edit:#}");
        for change in edit["documentChanges"].as_array().expect("document changes") {
            let uri = change["textDocument"]["uri"].as_str().expect("text edits only: the plan creates no file");
            let rel = uri.strip_prefix(&file_uri(&root, "")).unwrap_or(uri).to_string();
            let path = root.join(&rel);
            let before = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, apply_text_edits(&before, change["edits"].as_array().unwrap(), "utf-16")).unwrap();
        }
        assert!(common::pytest_passes(&root), "the applied edit leaves the tests green");
    } else {
        let text = outcome["params"]["message"].as_str().unwrap_or("");
        assert!(text.starts_with("tinycoder could not do it: "), "a failure says why: {outcome:#}");
        assert!(common::pytest_passes(&root), "nothing was applied");
    }
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
