//! A repository that commits a symbolic link out of itself (`helper.py -> ~/…`) cannot
//! get the agent to write through it: the LSP never offers the edit and the ACP agent
//! writes nothing, saying which link it refused. The models are a scripted server (a
//! double: this tests where writes go, not a model); the CLI and undo paths are covered at
//! their write layer (`undo::tests`), the edit builder in `lsp::patch_edit`.

mod acp_client;
mod common;
mod lsp_client;

use serde_json::{json, Value};
use std::time::{Duration, Instant};

const OUTSIDE_TEXT: &str = "X = 1\n";

/// The planner (its prompt names `depends_on`) gets one step editing `shop/helper.py`;
/// any coder request gets the whole new file.
fn planner(body: &str) -> String {
    if !body.contains("depends_on") {
        return "```python\nX = 2\n```".into();
    }
    json!({"steps": [
        {"id": "1", "kind": "coder", "action_type": "edit", "file": "shop/helper.py", "description": "STEPHELPER set X to 2",
         "depends_on": []}
    ]})
    .to_string()
}

fn scripted_env() -> Vec<(String, String)> {
    vec![
        ("TINYCODER_BACKEND__KIND".to_string(), "openai".to_string()),
        ("TINYCODER_BACKEND__URL".to_string(), common::scripted_model_server(planner)),
        ("TINYCODER_RUNTIME__CRITIC".to_string(), "false".to_string()),
        ("TINYCODER_RUNTIME__MAX_RETRIES".to_string(), "0".to_string()),
        ("TINYCODER_RUNTIME__EDIT_FORMAT".to_string(), "whole_file".to_string()),
    ]
}

/// The plan-python project in `ws` with `shop/helper.py` a link to a file in `outside`.
fn linked_project(ws: &std::path::Path, outside: &std::path::Path) -> std::path::PathBuf {
    common::copy_fixture("plan-python", ws);
    let target = outside.join("helper.py");
    std::fs::write(&target, OUTSIDE_TEXT).unwrap();
    std::os::unix::fs::symlink(&target, ws.join("shop/helper.py")).unwrap();
    target
}

#[test]
fn the_lsp_never_offers_an_edit_through_a_link_out_of_the_workspace() {
    let dirs = tempfile::tempdir().expect("dirs");
    let outside = tempfile::tempdir().expect("outside");
    let target = linked_project(dirs.path(), outside.path());
    let mut client = lsp_client::LspClient::spawn_with_env(dirs, &scripted_env());
    client.initialize(&["utf-16"], json!({}));
    let answer = client
        .request(
            "workspace/executeCommand",
            json!({"command": "tinycoder.run", "arguments": ["set X to 2 in shop/helper.py"]}),
        )
        .expect("tinycoder.run answers at once");
    assert!(answer["taskId"].is_string(), "{answer}");
    let deadline = Instant::now() + Duration::from_secs(600);
    let told = loop {
        let m = client.next_before(deadline, "the request's end");
        let text = m["params"]["message"].as_str().unwrap_or_default().to_string();
        match m["method"].as_str() {
            Some("workspace/applyEdit") => panic!("an edit through the link was offered: {m}"),
            Some("window/showMessage") if text.contains("symbolic link") => break text,
            Some("window/showMessage") if text.contains("could not do it") => panic!("no patch was made: {text}"),
            _ => {}
        }
    };
    assert!(told.contains("`shop/helper.py`") && told.contains("outside the workspace"), "{told}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), OUTSIDE_TEXT, "nothing written outside");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn the_acp_agent_writes_nothing_through_a_link_out_of_the_workspace() {
    let home = tempfile::tempdir().expect("home");
    let outside = tempfile::tempdir().expect("outside");
    let ws = home.path().join("ws");
    let target = linked_project(&ws, outside.path());
    let mut c = acp_client::AcpClient::spawn_in(home.path(), &scripted_env());
    c.initialize();
    let t = Duration::from_secs(60);
    let session = c.request("session/new", json!({"cwd": ws, "mcpServers": []}), t).expect("session/new");
    let id = session["sessionId"].as_str().expect("a session id").to_string();
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "/run set X to 2 in shop/helper.py"}]});
    let end = c.request("session/prompt", prompt, Duration::from_secs(600)).expect("the turn ends");
    assert_eq!(end["stopReason"], json!("end_turn"));
    let said: String = c
        .updates
        .iter()
        .filter(|u| u["sessionId"] == json!(id) && u["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect();
    assert!(said.contains("nothing written") && said.contains("symbolic link `shop/helper.py`"), "{said}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), OUTSIDE_TEXT, "nothing written outside");
    let offered: Vec<&Value> = c
        .updates
        .iter()
        .filter(|u| u["update"]["toolCallId"].as_str().is_some_and(|i| i.contains("-write-")))
        .collect();
    assert!(offered.is_empty(), "no write was offered: {offered:#?}");
    assert!(c.close().success());
}
