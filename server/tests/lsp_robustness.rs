//! Bad input over the wire: the server answers or ignores it and stays up.

mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::json;

#[test]
fn requests_before_initialize_get_an_error() {
    let mut client = LspClient::spawn();
    let err =
        client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": "file:///x.py"}})).unwrap_err();
    assert_eq!(err["code"], json!(-32002), "{err}");
    client.initialize(&[], json!({}));
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn malformed_and_unknown_messages_leave_the_server_up() {
    let mut client = LspClient::spawn();
    client.initialize(&[], json!({}));
    // Not JSON at all, with a valid frame.
    client.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    // JSON, but not JSON-RPC.
    client.send_raw(b"Content-Length: 2\r\n\r\n[]");
    let err = client.request("tinycoder/noSuchMethod", json!({})).unwrap_err();
    assert_eq!(err["code"], json!(-32601));
    let codes: Vec<_> = client.inbox.iter().filter(|m| m["id"].is_null()).map(|m| m["error"]["code"].clone()).collect();
    assert_eq!(codes, vec![json!(-32700), json!(-32600)], "each malformed message gets its JSON-RPC error");
    client.notify("tinycoder/noSuchNotification", json!({}));
    // Params of the wrong shape.
    let err = client.request("textDocument/codeAction", json!({"textDocument": 5})).unwrap_err();
    assert_eq!(err["code"], json!(-32602));
    // Edits to a document that is not open, and a symbol request for it.
    let uri = file_uri(client.root(), "ghost.py");
    client.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}));
    let err = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("not open"));
    // Positions far outside the document are clamped.
    let real = file_uri(client.root(), "real.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": real, "languageId": "python", "version": 1, "text": "ab\n"}}),
    );
    client.notify("textDocument/didChange", json!({"textDocument": {"uri": real, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 99}, "end": {"line": 40, "character": 7}}, "text": "!"}]}));
    let doc = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": real}})).unwrap();
    assert_eq!(doc["text"], json!("ab!"));
    // Binary content (NUL bytes) is kept as text without a tree.
    let bin = file_uri(client.root(), "blob.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": bin, "languageId": "python", "version": 1, "text": "a\u{0}b\u{0}"}}),
    );
    let doc = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": bin}})).unwrap();
    assert_eq!(doc["hasSyntaxTree"], json!(false));
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": bin}})).unwrap();
    assert_eq!(symbols, json!([]));
    assert!(client.is_running());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn a_ten_megabyte_buffer_is_handled() {
    let mut client = LspClient::spawn();
    client.initialize(&[], json!({}));
    let uri = file_uri(client.root(), "big.py");
    let line = "def f(a):  # ünïcödé 😀 padding padding padding padding\n    return a\n";
    let text = line.repeat(10 * 1024 * 1024 / line.len() + 1);
    assert!(text.len() >= 10 * 1024 * 1024);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    client.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 10}}, "text": "yield"}]}));
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).unwrap();
    assert_eq!(symbols.as_array().unwrap().len(), text.len() / line.len());
    let doc = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": uri}})).unwrap();
    assert!(doc["text"]
        .as_str()
        .unwrap()
        .starts_with("def f(a):  # ünïcödé 😀 padding padding padding padding\n    yield a\n"));
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn exit_without_shutdown_exits_with_1() {
    let mut client = LspClient::spawn();
    client.initialize(&[], json!({}));
    client.notify("exit", json!(null));
    assert_eq!(client.wait_exit().code(), Some(1));
}

#[test]
fn bad_configuration_is_reported_and_the_old_one_kept() {
    let mut client = LspClient::spawn();
    client.initialize(&[], json!({"models": {"coder": {"num_ctx": 4096}}}));
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"models": {"coder": {"num_ctx": "lots"}}}}));
    // The error arrives as window/showMessage naming the key.
    let deadline = std::time::Instant::now() + lsp_client::ANSWER_TIMEOUT;
    loop {
        let msg = client.recv(std::time::Duration::from_secs(5));
        if let Some(m) = msg {
            if m["method"] == json!("window/showMessage") {
                let text = m["params"]["message"].as_str().unwrap().to_string();
                assert!(text.contains("models.coder.num_ctx") && text.contains("keeping the previous"), "{text}");
                assert_eq!(m["params"]["type"], json!(1));
                break;
            }
        }
        assert!(std::time::Instant::now() < deadline, "no showMessage for the bad configuration");
    }
    // The old configuration is still in force, value and origin.
    let config = client.request("tinycoder/configuration", json!({})).expect("configuration answers");
    let entry =
        config["entries"].as_array().unwrap().iter().find(|e| e["key"] == "models.coder.num_ctx").unwrap().clone();
    assert_eq!((entry["value"].as_str(), entry["origin"].as_str()), (Some("4096"), Some("LSP initializationOptions")));
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"tinycoder": {"models": {"coder": {"num_ctx": 6144}}}}}),
    );
    // A good one replaces it.
    let deadline = std::time::Instant::now() + lsp_client::ANSWER_TIMEOUT;
    loop {
        let config = client.request("tinycoder/configuration", json!({})).expect("configuration answers");
        let entry =
            config["entries"].as_array().unwrap().iter().find(|e| e["key"] == "models.coder.num_ctx").unwrap().clone();
        if entry["value"] == "6144" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the good configuration was not applied: {entry}");
    }
    assert!(client.shutdown_and_exit().success());
}
