//! Requests that span files from an ACP agent panel: `tinycoder acp` routes
//! them through the planner path of `tinycoder run`. Driven over stdio by the
//! test client (it answers file requests from the disk and allows every write).
//! - Without a model: `/run` is offered, a plan request while the model server
//!   is down ends the turn saying so and writes nothing, and a cancel while the
//!   planner waits for its reply ends the turn as `cancelled`; with a scripted
//!   model server, a plan that edits two files and creates a third is written
//!   file by file after permission (the new file too) and the tests pass; a
//!   step the planner marks `requires_confirmation` is put to the user, and
//!   skipping it ends the turn saying so, with nothing written.
//! - With the test bed's models (Qwen2.5-Coder 1.5B plans, 0.5B writes each
//!   step, as in `plan_e2e.rs`): the two-file request of `tests/fixtures/plan-python`
//!   streams its plan and steps and reaches a terminal state: the patch written
//!   after permission with the tests green, or a clear reason and nothing written.

mod acp_client;
mod common;

use acp_client::AcpClient;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);
const PLANNER: &str = "qwen2.5-coder:1.5b";
const REQUEST: &str = "Add a `rate` parameter with default 0.2 to `with_tax` in shop/tax.py, and make `cart_total` in shop/cart.py take a `rate` parameter (default 0.2) that it passes to `with_tax`.";
/// A hang guard for a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(1500);

/// Opens a session on `ws` and returns its id.
fn open(c: &mut AcpClient, ws: &Path) -> String {
    c.initialize();
    let session = c.request("session/new", json!({"cwd": ws, "mcpServers": []}), T).expect("session/new");
    session["sessionId"].as_str().expect("a session id").to_string()
}

fn updates_of(c: &AcpClient, id: &str) -> Vec<Value> {
    c.updates.iter().filter(|u| u["sessionId"] == json!(id)).map(|u| u["update"].clone()).collect()
}

/// The agent's reply: its message chunks, joined.
fn reply(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

fn prompt(id: &str, text: &str) -> Value {
    json!({"sessionId": id, "prompt": [{"type": "text", "text": text}]})
}

#[test]
fn a_plan_request_while_the_model_server_is_down_ends_the_turn_with_a_clear_message() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("plan-python", &ws);
    let before = common::snapshot(&ws);
    let env = [("TINYCODER_BACKEND__URL".to_string(), common::closed_port_url())];
    let mut c = AcpClient::spawn_in(home.path(), &env);
    let id = open(&mut c, &ws);
    let end = c.request("session/prompt", prompt(&id, REQUEST), T).expect("a turn");
    assert_eq!(end["stopReason"], json!("end_turn"));
    let updates = updates_of(&c, &id);
    assert!(
        updates.iter().any(|u| u["sessionUpdate"] == "available_commands_update"
            && u["availableCommands"].as_array().is_some_and(|a| a.iter().any(|c| c["name"] == "run"))),
        "`/run` is offered: {updates:#?}"
    );
    let said = reply(&updates);
    assert!(said.starts_with("The request was not carried out: the model server is not ready"), "{said}");
    assert!(!updates.iter().any(|u| u["sessionUpdate"] == "tool_call"), "nothing ran: {updates:#?}");
    // `/run` without words says what it needs.
    let end = c.request("session/prompt", prompt(&id, "/run"), T).expect("a turn");
    assert_eq!(end["stopReason"], json!("end_turn"));
    assert!(reply(&updates_of(&c, &id)).contains("`/run` needs the request in words"));
    assert_eq!(common::snapshot(&ws), before, "nothing written");
    assert!(c.close().success());
}

/// A model server that lists its models, has no other endpoint (404), and takes chat
/// requests without ever answering them.
fn silent_model_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            if first.contains("/chat/completions") {
                held.push(stream);
                continue;
            }
            let (status, body) = if first.contains("/v1/models") {
                ("200 OK", r#"{"object":"list","data":[]}"#)
            } else {
                ("404 Not Found", r#"{"error":{"message":"not here"}}"#)
            };
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn a_cancel_while_the_planner_thinks_ends_the_turn_as_cancelled() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("plan-python", &ws);
    let before = common::snapshot(&ws);
    let env = [
        ("TINYCODER_BACKEND__KIND".to_string(), "openai".to_string()),
        ("TINYCODER_BACKEND__URL".to_string(), silent_model_server()),
    ];
    let mut c = AcpClient::spawn_in(home.path(), &env);
    let id = open(&mut c, &ws);
    let turn = c.send_request("session/prompt", prompt(&id, REQUEST));
    let deadline = Instant::now() + T;
    let planning = |u: &Value| {
        u["update"]["sessionUpdate"] == "agent_thought_chunk"
            && u["update"]["content"]["text"].as_str().is_some_and(|t| t.contains("the planner splits the request"))
    };
    while !c.updates.iter().any(planning) {
        assert!(Instant::now() < deadline, "the planner was never called: {:#?}", c.updates);
        if let Some(m) = c.recv(Duration::from_millis(100)) {
            c.inbox.push_back(m);
        }
    }
    c.notify("session/cancel", json!({"sessionId": id}));
    let end = c.wait(turn, T).expect("the turn's answer");
    assert_eq!(end["stopReason"], json!("cancelled"));
    assert_eq!(common::snapshot(&ws), before, "nothing written");
    assert!(c.close().success());
}

const TAX: &str = "\"\"\"Sales tax.\"\"\"\n\n\ndef with_tax(amount, rate=0.2):\n    \"\"\"`amount` with `rate` tax added, rounded to cents.\"\"\"\n    return round(amount * (1 + rate), 2)\n";
const CART: &str = "\"\"\"A shopping cart's total.\"\"\"\n\nfrom shop.tax import with_tax\n\n\ndef cart_total(prices, rate=0.2):\n    \"\"\"The total of `prices` with tax.\"\"\"\n    return with_tax(sum(prices), rate)\n";
const DISCOUNT: &str = "\"\"\"Discounts.\"\"\"\n\n\ndef discounted(amount, percent):\n    return round(amount * (100 - percent) / 100, 2)\n";

/// The planner gets a three-step plan; each step's coder, told by its step's marker word,
/// the whole new file.
fn scripted_reply(body: &str) -> String {
    let file = |text: &str| format!("```python\n{text}```");
    if body.contains("STEPTAX") {
        file(TAX)
    } else if body.contains("STEPCART") {
        file(CART)
    } else if body.contains("STEPNEW") {
        file(DISCOUNT)
    } else {
        json!({"steps": [
            {"id": "1", "kind": "coder", "action_type": "edit", "file": "shop/tax.py", "description": "STEPTAX add rate", "depends_on": []},
            {"id": "2", "kind": "coder", "action_type": "edit", "file": "shop/cart.py", "description": "STEPCART pass rate", "depends_on": ["1"]},
            {"id": "3", "kind": "coder", "action_type": "create", "file": "shop/discount.py", "description": "STEPNEW discounts", "depends_on": []}
        ]})
        .to_string()
    }
}

/// The agent's settings over a scripted model server answering from `reply`: no critic,
/// no retries, whole-file edits.
fn scripted_env(reply: fn(&str) -> String) -> [(String, String); 5] {
    [
        ("TINYCODER_BACKEND__KIND".to_string(), "openai".to_string()),
        ("TINYCODER_BACKEND__URL".to_string(), common::scripted_model_server(reply)),
        ("TINYCODER_RUNTIME__CRITIC".to_string(), "false".to_string()),
        ("TINYCODER_RUNTIME__MAX_RETRIES".to_string(), "0".to_string()),
        ("TINYCODER_RUNTIME__EDIT_FORMAT".to_string(), "whole_file".to_string()),
    ]
}

#[test]
fn a_planned_patch_is_written_file_by_file_after_permission_new_files_too() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("plan-python", &ws);
    let mut c = AcpClient::spawn_in(home.path(), &scripted_env(scripted_reply));
    let id = open(&mut c, &ws);
    let request = "/run add a rate to shop/tax.py and shop/cart.py, and a new file shop/discount.py";
    let end = c.request("session/prompt", prompt(&id, request), Duration::from_secs(600)).expect("the turn ends");
    assert_eq!(end["stopReason"], json!("end_turn"));
    let updates = updates_of(&c, &id);
    let said = reply(&updates);
    assert!(said.contains("written: "), "{said}\n{updates:#?}");
    assert_eq!(std::fs::read_to_string(ws.join("shop/tax.py")).unwrap(), TAX);
    assert_eq!(std::fs::read_to_string(ws.join("shop/cart.py")).unwrap(), CART);
    assert_eq!(std::fs::read_to_string(ws.join("shop/discount.py")).unwrap(), DISCOUNT);
    assert!(common::pytest_passes(&ws), "{said}");
    // One edit tool call per file, the new file shown as one (a diff without old text).
    let writes: Vec<&Value> = updates
        .iter()
        .filter(|u| {
            u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().is_some_and(|i| i.contains("-write-"))
        })
        .collect();
    assert_eq!(writes.len(), 3, "{writes:#?}");
    let created = writes.iter().find(|w| w["title"].as_str().is_some_and(|t| t.starts_with("Create shop/discount.py")));
    let created = created.unwrap_or_else(|| panic!("the new file is a Create: {writes:#?}"));
    assert!(created["content"][0]["oldText"].is_null(), "{created:#}");
    assert_eq!(created["kind"], "edit");
    // The steps and the whole patch's tests were shown.
    for id in ["-plan", "-step-1", "-step-2", "-step-3", "-tests-whole"] {
        assert!(
            updates.iter().any(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().is_some_and(|i| i.ends_with(id))),
            "a tool call {id}: {updates:#?}"
        );
    }
    assert!(c.close().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_that_spans_files_is_planned_and_ends_written_and_green_or_says_why() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| run_with_models(&url));
}

fn run_with_models(url: &str) {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("shop");
    common::copy_fixture("plan-python", &ws);
    assert!(common::pytest_passes(&ws), "the fixture starts green");
    let before = common::snapshot(&ws);
    let mut env = common::agent_env(url, home.path());
    env.push(("TINYCODER_MODELS__PLANNER__NAME".into(), PLANNER.into()));
    env.push(("TINYCODER_RUNTIME__CRITIC".into(), "false".into()));
    env.push(("TINYCODER_RUNTIME__MAX_RETRIES".into(), "1".into()));
    let mut c = AcpClient::spawn_in(home.path(), &env);
    let id = open(&mut c, &ws);
    let started = Instant::now();
    let end = c.request("session/prompt", prompt(&id, REQUEST), DEADLINE).expect("the turn ends");
    eprintln!("the planned turn took {:.0} s", started.elapsed().as_secs_f64());
    assert_eq!(end["stopReason"], json!("end_turn"));
    let updates = updates_of(&c, &id);
    let said = reply(&updates);

    // The plan is shown as a tool call listing a step for each file, and as an ACP plan.
    let plan = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().is_some_and(|i| i.ends_with("-plan")))
        .unwrap_or_else(|| panic!("a plan tool call: {said}\n{updates:#?}"));
    let steps = plan["content"][0]["content"]["text"].as_str().unwrap_or("");
    assert!(steps.contains("shop/tax.py") && steps.contains("shop/cart.py"), "{plan:#}");
    assert!(updates.iter().any(|u| u["sessionUpdate"] == "plan"), "an ACP plan: {updates:#?}");
    let step_calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().is_some_and(|i| i.contains("-step-")))
        .collect();
    assert!(!step_calls.is_empty(), "each step is a tool call: {updates:#?}");

    let written: Vec<&Value> = updates
        .iter()
        .filter(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && u["status"] == "completed"
                && u["content"][0]["content"]["text"].as_str().is_some_and(|t| t.starts_with("written: "))
        })
        .collect();
    if written.is_empty() {
        assert!(said.starts_with("The request was not carried out: "), "a failure says why: {said}");
        assert_eq!(common::snapshot(&ws), before, "nothing written when the request fails:\n{said}");
    } else {
        // The whole patch was tested before it was offered; written, the project's tests pass.
        assert!(
            updates.iter().any(|u| u["toolCallId"].as_str().is_some_and(|i| i.ends_with("-tests-whole"))),
            "the whole patch's test run is shown: {updates:#?}"
        );
        assert!(said.contains("written: "), "{said}");
        assert!(common::pytest_passes(&ws), "the written patch leaves the tests green:\n{said}");
        assert_ne!(common::snapshot(&ws), before);
    }
    eprintln!("the turn said:\n{said}");
    assert!(c.close().success());
}

/// The planner marks the first step `requires_confirmation`; the coders answer as in `scripted_reply`.
fn scripted_reply_confirming(body: &str) -> String {
    if body.contains("STEPTAX") || body.contains("STEPCART") || body.contains("STEPNEW") {
        return scripted_reply(body);
    }
    json!({"steps": [
        {"id": "1", "kind": "coder", "action_type": "edit", "file": "shop/tax.py", "description": "STEPTAX add rate", "depends_on": [], "requires_confirmation": true},
        {"id": "2", "kind": "coder", "action_type": "edit", "file": "shop/cart.py", "description": "STEPCART pass rate", "depends_on": ["1"]}
    ]})
    .to_string()
}

#[test]
fn a_step_the_planner_marks_for_confirmation_is_asked_about_and_skipping_it_writes_nothing() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("plan-python", &ws);
    let before = common::snapshot(&ws);
    let mut c = AcpClient::spawn_in(home.path(), &scripted_env(scripted_reply_confirming));
    c.permission_answer = "skip_step".into();
    let id = open(&mut c, &ws);
    let request = "/run add a rate to shop/tax.py and pass it from shop/cart.py";
    let end = c.request("session/prompt", prompt(&id, request), Duration::from_secs(600)).expect("the turn ends");
    assert_eq!(end["stopReason"], json!("end_turn"));
    let updates = updates_of(&c, &id);
    let asked = updates.iter().find(|u| {
        u["sessionUpdate"] == "tool_call" && u["toolCallId"].as_str().is_some_and(|i| i.starts_with("step-"))
    });
    let asked = asked.unwrap_or_else(|| panic!("the step was not put to the user: {updates:#?}"));
    assert!(
        asked["title"].as_str().is_some_and(|t| t.starts_with("Run step 1 of the plan (shop/tax.py)")),
        "{asked:#}"
    );
    let said = reply(&updates);
    assert!(said.contains("the user did not confirm this step"), "{said}");
    assert_eq!(common::snapshot(&ws), before, "nothing written");
    assert!(c.close().success());
}
