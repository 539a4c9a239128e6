//! `tinycoder acp` under bad input, driven over stdio like a real client: each
//! mistake gets a clear JSON-RPC error and the agent stays up. Then a real turn
//! that needs no model (`/test`: the project's tests in the sandbox) streams
//! its tool call with the parsed failures, and a stored session loads back.

mod acp_client;
mod common;

use acp_client::AcpClient;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

#[test]
fn bad_messages_get_clear_errors_and_the_agent_stays_up() {
    let mut c = AcpClient::spawn(&[]);
    // Not JSON at all, then JSON that is not JSON-RPC.
    c.send_raw("{not json");
    c.send_raw("[]");
    // A request before `initialize` is refused, saying why.
    let err = c.request("session/new", json!({"cwd": c.home, "mcpServers": []}), T).unwrap_err();
    assert_eq!(err["code"], json!(-32600), "{err}");
    assert!(err.to_string().contains("initialization must complete"), "{err}");
    let uncorrelated: Vec<Value> =
        c.inbox.iter().filter(|m| m["id"].is_null() && m.get("error").is_some()).map(|m| m["error"].clone()).collect();
    assert!(
        uncorrelated.iter().any(|e| e["code"] == json!(-32700)),
        "malformed JSON gets a parse error: {uncorrelated:?}"
    );
    assert!(c.is_running());
    let init = c.initialize();
    assert_eq!(init["protocolVersion"], json!(1));
    assert_eq!(init["agentCapabilities"]["loadSession"], json!(true));
    assert_eq!(init["agentInfo"]["name"], json!("tinycoder"));
    // An unknown method.
    let err = c.request("tinycoder/noSuchMethod", json!({}), T).unwrap_err();
    assert_eq!(err["code"], json!(-32601), "{err}");
    // A prompt before any session/new.
    let err = c
        .request("session/prompt", json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}), T)
        .unwrap_err();
    assert_eq!(err["code"], json!(-32002), "{err}");
    let msg = err["message"].as_str().unwrap_or("");
    assert!(msg.contains("unknown session `nope`") && msg.contains("session/new"), "{msg}");
    // A cancel of an unknown session: a notification has no answer; the agent logs it and stays up.
    c.notify("session/cancel", json!({"sessionId": "nope"}));
    // Parameters of the wrong shape.
    let err = c.request("session/new", json!({"cwd": 5}), T).unwrap_err();
    assert_eq!(err["code"], json!(-32602), "{err}");
    // A relative workspace.
    let err = c.request("session/new", json!({"cwd": "relative/dir", "mcpServers": []}), T).unwrap_err();
    assert!(err.to_string().contains("not an absolute path"), "{err}");
    assert!(c.is_running());
    let err = c
        .request("session/load", json!({"sessionId": "never-stored", "cwd": c.home, "mcpServers": []}), T)
        .unwrap_err();
    assert_eq!(err["code"], json!(-32002), "{err}");
    assert!(c.is_running());
    assert!(c.close().success(), "the agent ends cleanly when the client closes the connection");
}

#[test]
fn a_test_turn_streams_its_failures_and_the_session_loads_back() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("agent-python", &ws);
    let mut c = AcpClient::spawn_in(home.path(), &[]);
    c.initialize();
    let session = c.request("session/new", json!({"cwd": ws, "mcpServers": []}), T).expect("session/new");
    let id = session["sessionId"].as_str().expect("a session id").to_string();
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "/test"}]});
    let end = c.request("session/prompt", prompt, Duration::from_secs(300)).expect("a /test turn");
    assert_eq!(end["stopReason"], json!("end_turn"));
    let of_session: Vec<Value> =
        c.updates.iter().filter(|u| u["sessionId"] == json!(id)).map(|u| u["update"].clone()).collect();
    assert!(
        of_session.iter().any(|u| u["sessionUpdate"] == "available_commands_update"
            && u["availableCommands"].as_array().is_some_and(|a| a.iter().any(|c| c["name"] == "fix"))),
        "the slash commands are offered: {of_session:#?}"
    );
    let call = of_session.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("a tool call");
    assert_eq!(call["kind"], json!("execute"));
    let done = of_session
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call["toolCallId"])
        .expect("the tool call's result");
    assert_eq!(done["status"], json!("completed"), "{done:#}");
    let test_file = ws.join("tests/test_prices.py").display().to_string();
    assert!(
        done["locations"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["path"] == json!(test_file) && l["line"].as_u64() > Some(0))),
        "the failing test is a location: {done:#}"
    );
    let body = done["content"][0]["content"]["text"].as_str().unwrap_or("");
    assert!(body.contains("test_total_of_several_items"), "{body}");
    // Cancelling when no turn runs is harmless.
    c.notify("session/cancel", json!({"sessionId": id}));
    assert!(c.close().success());

    // A new connection with the same data directory loads the session and replays its turns.
    let mut again = AcpClient::spawn_in(home.path(), &[]);
    again.initialize();
    again.request("session/load", json!({"sessionId": id, "cwd": ws, "mcpServers": []}), T).expect("session/load");
    let replayed: Vec<&Value> =
        again.updates.iter().filter(|u| u["sessionId"] == json!(id)).map(|u| &u["update"]).collect();
    let user = replayed.iter().find(|u| u["sessionUpdate"] == "user_message_chunk").expect("the user's turn");
    assert_eq!(user["content"]["text"], json!("/test"));
    assert!(replayed.iter().any(|u| u["sessionUpdate"] == "agent_message_chunk"), "{replayed:#?}");
    // Prompts work in the loaded session.
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "/test"}]});
    let end = again.request("session/prompt", prompt, Duration::from_secs(300)).expect("a turn after loading");
    assert_eq!(end["stopReason"], json!("end_turn"));
    assert!(again.close().success());
}

#[test]
fn a_client_that_leaves_mid_turn_ends_the_agent_cleanly() {
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("agent-python", &ws);
    let before = common::snapshot(&ws);
    // No model answers: the turn runs the tests, then reads the sources through the client,
    // by then gone, and fails at the model call.
    let env = [("TINYCODER_BACKEND__URL".to_string(), common::closed_port_url())];
    let mut c = AcpClient::spawn_in(home.path(), &env);
    c.initialize();
    let session = c.request("session/new", json!({"cwd": ws, "mcpServers": []}), T).expect("session/new");
    let id = session["sessionId"].as_str().expect("a session id").to_string();
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "fix the failing test"}]});
    c.send_request("session/prompt", prompt);
    // Leave as soon as the tests start, without waiting for the turn's answer.
    let deadline = std::time::Instant::now() + T;
    while !c.updates.iter().any(|u| u["update"]["sessionUpdate"] == "tool_call") {
        assert!(std::time::Instant::now() < deadline, "the test run never started: {:#?}", c.updates);
        c.recv(Duration::from_millis(100));
    }
    let status = c.close();
    assert!(status.success(), "a client leaving mid-turn is the normal end of a session, not an error: {status}");
    assert_eq!(common::snapshot(&ws), before, "the workspace is untouched");
}

#[test]
fn a_client_that_leaves_right_after_opening_a_session_ends_the_agent_cleanly() {
    // The agent offers its slash commands just after answering `session/new`; a client that
    // closes at once races that notification. Several rounds, since the race is timing-bound.
    let home = tempfile::tempdir().expect("home");
    let ws = home.path().join("ws");
    common::copy_fixture("agent-python", &ws);
    for round in 0..8 {
        let mut c = AcpClient::spawn_in(home.path(), &[]);
        c.initialize();
        c.request("session/new", json!({"cwd": ws, "mcpServers": []}), T).expect("session/new");
        let status = c.close();
        assert!(status.success(), "round {round}: the agent failed when its client closed: {status}");
    }
}

#[test]
fn a_client_that_stops_reading_before_the_agent_answers_ends_the_agent_cleanly() {
    // A client that exits closes the agent's stdout, possibly before the agent has read the
    // end of its stdin: the next write fails with a broken pipe, which is the client leaving.
    let home = tempfile::tempdir().expect("home");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .arg("acp")
        .env("TINYCODER_CACHE_DIR", home.path().join("cache"))
        .env("TINYCODER_DATA_DIR", home.path().join("data"))
        .env("TINYCODER_CONFIG", home.path().join("no-user-config.toml"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("spawn tinycoder acp");
    drop(child.stdout.take()); // nobody reads the answers any more
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    writeln!(stdin, "{init}").expect("write initialize");
    stdin.flush().expect("flush");
    // stdin stays open: only the broken pipe tells the agent that its client is gone.
    let deadline = std::time::Instant::now() + T;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "the agent kept running with nobody reading");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    assert!(status.success(), "the agent failed when its client stopped reading: {status}");
}
