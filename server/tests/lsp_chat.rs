//! `tinycoder/chat` through a real client against a REAL model server
//! (the test bed's Ollama, TINYCODER_TEST_OLLAMA_URL, with `smollm2`; start it with `scripts/testbed.sh up`).

mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::time::Duration;

/// The test bed's Ollama: `TINYCODER_TEST_OLLAMA_URL`, default the address `scripts/testbed.sh up` uses.
fn ollama_url() -> String {
    std::env::var("TINYCODER_TEST_OLLAMA_URL").unwrap_or_else(|_| "http://127.0.0.1:11434".into())
}

fn require_ollama() {
    let url = ollama_url();
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let reachable = std::net::ToSocketAddrs::to_socket_addrs(addr)
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(3)).is_ok());
    assert!(
        reachable,
        "Ollama is not reachable at {url}; this test needs the real model server: run `scripts/testbed.sh up`"
    );
}

fn chat_options() -> Value {
    json!({
        "backend": {"kind": "ollama", "url": ollama_url(), "background_idle_ms": 500},
        "budget": {"reserved_output_tokens": 256},
        "models": {"coder": {"name": "smollm2", "num_ctx": 2048, "max_output_tokens": 200, "temperature": 0.0}}
    })
}

/// The workspace's SQLite store of the server `client` runs (under its private data dir).
fn workspace_db(client: &LspClient) -> std::path::PathBuf {
    std::fs::read_dir(client.root().join("data").join("workspaces"))
        .expect("the data dir exists")
        .flatten()
        .map(|e| e.path().join("tinycoder.sqlite3"))
        .find(|p| p.exists())
        .expect("the workspace store exists")
}

/// Whether `m` is the response to the client's request `id` (not a server request that shares the number).
fn is_response(m: &Value, id: i64) -> bool {
    m.get("method").is_none() && m.get("id") == Some(&json!(id))
}

/// The deltas of `request_id` once they add up to `reply`: the server writes its last
/// notification and the response on separate channels, so the response may come first.
fn deltas_of(client: &mut LspClient, request_id: &str, reply: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let got = deltas(client, request_id);
        if got.concat() == reply || std::time::Instant::now() > deadline {
            return got;
        }
        if let Some(m) = client.recv(std::time::Duration::from_millis(200)) {
            client.inbox.push_back(m);
        }
    }
}

fn deltas(client: &mut LspClient, request_id: &str) -> Vec<String> {
    client
        .inbox
        .iter()
        .filter(|m| m["method"] == json!("tinycoder/chatDelta") && m["params"]["requestId"] == json!(request_id))
        .map(|m| m["params"]["delta"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn chat_streams_deltas_from_the_model_and_keeps_the_session() {
    require_ollama();
    let mut client = LspClient::spawn();
    client.initialize(&["utf-8"], chat_options());
    let uri = file_uri(client.root(), "area.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
        "text": "def area(w, h):\n    return w * h\n"}}),
    );
    let reply = client
        .request(
            "tinycoder/chat",
            json!({"requestId": "r1", "message": "What does the function area return? One sentence.",
            "textDocument": {"uri": uri}}),
        )
        .unwrap_or_else(|e| panic!("chat failed: {e}"));
    let streamed = deltas_of(&mut client, "r1", reply["reply"].as_str().unwrap_or(""));
    assert!(!streamed.is_empty(), "no tinycoder/chatDelta notifications arrived");
    assert_eq!(streamed.concat(), reply["reply"].as_str().unwrap());
    assert!(!reply["reply"].as_str().unwrap().trim().is_empty());
    let session = reply["sessionId"].as_str().unwrap().to_string();
    assert!(client
        .inbox
        .iter()
        .all(|m| m["method"] != json!("tinycoder/chatDelta") || m["params"]["sessionId"] == json!(session)));

    let second = client
        .request("tinycoder/chat", json!({"sessionId": session, "requestId": "r2", "message": "Say it shorter."}))
        .unwrap();
    assert_eq!(second["sessionId"], json!(session));
    assert_eq!(
        deltas_of(&mut client, "r2", second["reply"].as_str().unwrap_or("")).concat(),
        second["reply"].as_str().unwrap()
    );

    // The session's turns persist in the workspace's SQLite store.
    let db = workspace_db(&client);
    let conn = rusqlite::Connection::open(db).unwrap();
    let turns: i64 =
        conn.query_row("SELECT COUNT(*) FROM messages WHERE session_id = ?1", [&session], |r| r.get(0)).unwrap();
    assert_eq!(turns, 4, "two exchanges = four stored turns");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn cancel_request_stops_a_chat_mid_stream() {
    require_ollama();
    let mut client = LspClient::spawn();
    client.initialize(&[], chat_options());
    let id = client.request_async(
        "tinycoder/chat",
        json!({"requestId": "long",
        "message": "Write a long story about a robot who learns to paint. At least 500 words."}),
    );
    // Wait for the first delta, then cancel.
    let deadline = std::time::Instant::now() + lsp_client::ANSWER_TIMEOUT;
    loop {
        let msg = client.recv(Duration::from_secs(5));
        if let Some(m) = msg {
            let first_delta = m["method"] == json!("tinycoder/chatDelta");
            assert!(!is_response(&m, id), "chat finished before it could be cancelled: {m}");
            client.inbox.push_back(m);
            if first_delta {
                break;
            }
        }
        assert!(std::time::Instant::now() < deadline, "no delta arrived");
    }
    client.notify("$/cancelRequest", json!({"id": id}));
    let err = client.wait_response(id).unwrap_err();
    assert_eq!(err["code"], json!(-32800), "expected RequestCancelled: {err}");
    // No more deltas of that request after the cancellation was answered.
    let before = deltas(&mut client, "long").len();
    std::thread::sleep(Duration::from_millis(500));
    while let Some(m) = client.recv(Duration::from_millis(200)) {
        client.inbox.push_back(m);
    }
    assert_eq!(deltas(&mut client, "long").len(), before, "deltas kept coming after cancel");
    // The server is still up and answers.
    let uri = file_uri(client.root(), "x.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}),
    );
    client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": uri}})).unwrap();
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn model_server_down_is_a_clear_error_and_the_server_stays_up() {
    let mut client = LspClient::spawn();
    let mut options = chat_options();
    options["backend"]["url"] = json!("http://127.0.0.1:9");
    client.initialize(&[], options);
    let err = client.request("tinycoder/chat", json!({"message": "hello"})).unwrap_err();
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("127.0.0.1:9") && message.contains("not reachable"), "{message}");
    let err = client
        .request("tinycoder/chat", json!({"message": "hi", "textDocument": {"uri": "file:///nope.py"}}))
        .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("not open"));
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn cancelling_the_progress_stops_the_chat() {
    require_ollama();
    let mut client = LspClient::spawn();
    client.initialize(&[], chat_options());
    let id = client.request_async(
        "tinycoder/chat",
        json!({"requestId": "p",
        "message": "Write a long story about a robot who learns to paint. At least 500 words."}),
    );
    // The server creates a progress (answered by the client helper) and reports as deltas arrive.
    let deadline = std::time::Instant::now() + lsp_client::ANSWER_TIMEOUT;
    let mut chat_token = None;
    let token = loop {
        let m = client.recv(Duration::from_secs(5));
        if let Some(m) = m {
            assert!(!is_response(&m, id), "chat finished before it could be cancelled: {m}");
            // The chat's own progress (indexing may report under another token first).
            if m["method"] == json!("$/progress") && m["params"]["value"]["title"] == json!("tinycoder: chat") {
                chat_token = Some(m["params"]["token"].clone());
            }
            let report = m["method"] == json!("$/progress") && m["params"]["value"]["kind"] == json!("report");
            if report && chat_token.as_ref() == Some(&m["params"]["token"]) {
                break m["params"]["token"].clone();
            }
            client.inbox.push_back(m);
        }
        assert!(std::time::Instant::now() < deadline, "no progress report arrived");
    };
    assert!(client.inbox.iter().any(|m| m["method"] == json!("window/workDoneProgress/create")));
    assert!(client
        .inbox
        .iter()
        .any(|m| m["method"] == json!("$/progress") && m["params"]["value"]["kind"] == json!("begin")));
    client.notify("window/workDoneProgress/cancel", json!({"token": token}));
    let err = client.wait_response(id).unwrap_err();
    assert_eq!(err["code"], json!(-32800), "expected RequestCancelled: {err}");
    // The progress ends.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !client.inbox.iter().any(|m| {
        m["method"] == json!("$/progress")
            && m["params"]["token"] == token
            && m["params"]["value"]["kind"] == json!("end")
    }) {
        if let Some(m) = client.recv(Duration::from_millis(200)) {
            client.inbox.push_back(m);
        }
        assert!(std::time::Instant::now() < deadline, "progress did not end");
    }
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn long_sessions_are_summarized_by_the_summarizer_model_and_reused() {
    require_ollama();
    let mut client = LspClient::spawn();
    let mut options = chat_options();
    // A tiny history budget, so the second exchange already triggers a summary.
    options["store"] =
        json!({"session_history_tokens": 40, "session_keep_recent_turns": 1, "session_summary_tokens": 30});
    options["models"]["summarizer"] =
        json!({"name": "smollm2", "num_ctx": 2048, "max_output_tokens": 80, "temperature": 0.0});
    client.initialize(&["utf-8"], options);
    let first = client
        .request("tinycoder/chat", json!({"requestId": "s1", "message": "My function total() adds an int and a str and fails with TypeError."}))
        .unwrap_or_else(|e| panic!("chat failed: {e}"));
    let session = first["sessionId"].as_str().unwrap().to_string();
    client
        .request(
            "tinycoder/chat",
            json!({"sessionId": session, "requestId": "s2", "message": "How do I convert the str first?"}),
        )
        .unwrap_or_else(|e| panic!("chat failed: {e}"));
    let db = workspace_db(&client);
    // The summary is written in the background by the real summarizer model.
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    let (summary, through) = loop {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let row: (String, i64) = conn
            .query_row("SELECT summary, summarized_through FROM sessions WHERE session_id = ?1", [&session], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        if row.1 > 0 || std::time::Instant::now() > deadline {
            break row;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(through > 0, "no summary was written within 300 s");
    assert!(!summary.trim().is_empty());
    // The next turn is built from the summary plus the recent turns, and still answers.
    let third = client
        .request(
            "tinycoder/chat",
            json!({"sessionId": session, "requestId": "s3", "message": "Thanks. Anything else?"}),
        )
        .unwrap_or_else(|e| panic!("chat after a summary failed: {e}"));
    assert!(!third["reply"].as_str().unwrap().trim().is_empty());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn chat_answers_from_the_project_and_cites_a_file_that_is_not_open() {
    require_ollama();
    let mut client = LspClient::spawn();
    std::fs::create_dir_all(client.root().join("shop")).unwrap();
    std::fs::write(
        client.root().join("shop/shipping.py"),
        "def shipping_cost(weight_kg, express=False):\n    \"\"\"Cost in cents: 500 base plus 120 per started kilogram.\"\"\"\n    cost = 500 + 120 * int(weight_kg)\n    return cost * 2 if express else cost\n",
    )
    .unwrap();
    std::fs::write(client.root().join("notes.py"), "def greet(name):\n    return 'hi ' + name\n").unwrap();
    client.initialize(&["utf-8"], chat_options());
    let reply = client
        .request(
            "tinycoder/chat",
            json!({"requestId": "p1", "message": "How much does shipping_cost charge per kilogram?"}),
        )
        .unwrap_or_else(|e| panic!("chat failed: {e}"));
    let text = reply["reply"].as_str().unwrap();
    assert_eq!(deltas_of(&mut client, "p1", text).concat(), text);
    // The index found the unopened file; the reply cites it as a file:line link.
    let sources = text.rsplit_once("Sources: ").map(|(_, s)| s).unwrap_or_else(|| panic!("no sources: {text}"));
    assert!(sources.contains("[shop/shipping.py:1](file://"), "{sources}");
    assert!(!sources.contains("notes.py"), "an unrelated file is not cited: {sources}");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn a_chat_sent_while_the_workspace_is_first_indexed_waits_for_the_index() {
    require_ollama();
    let mut client = LspClient::spawn();
    // Enough code (2,000 files, 16 MB) that the first indexing takes seconds.
    for d in 0..20 {
        let dir = client.root().join(format!("pkg{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let body: String = (0..60)
                .map(|k| format!("def helper_{d}_{f}_{k}(value):\n    \"\"\"Returns value plus {k}.\"\"\"\n    total = value + {k}\n    return total\n\n"))
                .collect();
            std::fs::write(dir.join(format!("mod{f:02}.py")), body).unwrap();
        }
    }
    std::fs::create_dir_all(client.root().join("zz_shop")).unwrap();
    std::fs::write(
        client.root().join("zz_shop/shipping.py"),
        "def shipping_cost(weight_kg, express=False):\n    \"\"\"Cost in cents: 500 base plus 120 per started kilogram.\"\"\"\n    return 500 + 120 * int(weight_kg)\n",
    )
    .unwrap();
    client.initialize(&["utf-8"], chat_options());
    // Ask once the indexing reported its first files: the index is open but not complete.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let msg = client.next_before(deadline, "the indexing's first progress report");
        let report = &msg["params"]["value"];
        if msg["method"] == "$/progress" && report["kind"] == "report" {
            assert!(report["message"].as_str().is_some_and(|m| m.ends_with("files")), "{msg}");
            break;
        }
    }
    let reply = client
        .request(
            "tinycoder/chat",
            json!({"requestId": "w1", "message": "How much does shipping_cost charge per kilogram?"}),
        )
        .unwrap_or_else(|e| panic!("chat failed: {e}"));
    let text = reply["reply"].as_str().unwrap();
    let sources = text.rsplit_once("Sources: ").map(|(_, s)| s).unwrap_or_else(|| panic!("no sources: {text}"));
    assert!(sources.contains("[zz_shop/shipping.py:1](file://"), "{sources}");
    assert!(client.shutdown_and_exit().success());
}
