//! Inline completion through a real LSP client over stdio, with a REAL model
//! (Qwen2.5-Coder 0.5B on the test bed's llama-server): a half-typed line gets a
//! one-line suggestion inserted at the cursor, and the completed file compiles;
//! typing through it answers the rest from the cache; a client without inline
//! completion gets the same suggestion as a completion item; a position past the
//! end is an error and the server answers the next request; a newer request and
//! a `$/cancelRequest` end a request with no suggestion, and `didChange` never
//! waits for a generation; a chat asked meanwhile takes the model from a
//! suggestion under way; a model server that is down is an error naming it.

mod common;
mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The time cap of one suggestion in these tests: a hang guard on a busy 2-core machine
/// (loading the model included), not a latency target.
const TIMEOUT_MS: u64 = 120_000;

/// The test bed's agent settings, with `completion` settings on top.
fn options(url: &str, completion: Value) -> Value {
    let mut o = common::agent_init_options(url);
    let mut c = json!({"timeout_ms": TIMEOUT_MS});
    c.as_object_mut().unwrap().extend(completion.as_object().cloned().unwrap_or_default());
    o["completion"] = c;
    o
}

/// Opens `text` as `name` (Python) in a server started with `init_options`.
fn open(client: &mut LspClient, init_options: Value, name: &str, text: &str) -> String {
    client.initialize(&["utf-16"], init_options);
    open_doc(client, name, text)
}

fn open_doc(client: &mut LspClient, name: &str, text: &str) -> String {
    let uri = file_uri(client.root(), name);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    uri
}

fn at(uri: &str, (line, character): (u32, u32)) -> Value {
    json!({
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character},
        "context": {"triggerKind": 2}
    })
}

/// The items of a completion result (`{items: [...]}` or a bare array).
fn items(result: &Value) -> Vec<Value> {
    result.get("items").unwrap_or(result).as_array().cloned().unwrap_or_default()
}

/// `text` without its `|` cursor marker, and the marker's byte offset and LSP position (UTF-16).
fn cursor(text_with_marker: &str) -> (String, usize, (u32, u32)) {
    let marker = text_with_marker.find('|').expect("cursor marker");
    let before = &text_with_marker[..marker];
    let line = before.matches('\n').count() as u32;
    let character = before.rsplit('\n').next().unwrap().encode_utf16().count() as u32;
    (text_with_marker.replacen('|', "", 1), marker, (line, character))
}

/// Panics unless `text` is Python that compiles (`python3 -m py_compile`).
fn assert_compiles(dir: &std::path::Path, text: &str) {
    let path = dir.join("completed.py");
    std::fs::write(&path, text).expect("write the completed file");
    let out = std::process::Command::new("python3").arg("-m").arg("py_compile").arg(&path).output().expect("python3");
    assert!(
        out.status.success(),
        "the completed file does not compile: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The one inline suggestion at `pos`, checked to be an insertion at the cursor.
fn inline_suggestion(client: &mut LspClient, uri: &str, pos: (u32, u32)) -> String {
    let started = Instant::now();
    let result = client.request("textDocument/inlineCompletion", at(uri, pos)).expect("answer");
    eprintln!("inline completion answered in {} ms: {result}", started.elapsed().as_millis());
    let items = items(&result);
    assert_eq!(items.len(), 1, "one suggestion: {result:#}");
    let range = &items[0]["range"];
    assert_eq!(range["start"], json!({"line": pos.0, "character": pos.1}), "inserted at the cursor: {result:#}");
    assert_eq!(range["end"], range["start"], "an insertion, not a replacement: {result:#}");
    items[0]["insertText"].as_str().expect("insertText").to_string()
}

/// Completes `text_with_marker` at its `|`; returns the suggestion and the completed text, which compiles.
fn complete_at_marker(url: &str, text_with_marker: &str) -> (String, String) {
    let (text, marker, pos) = cursor(text_with_marker);
    let mut client = LspClient::spawn();
    let uri = open(&mut client, options(url, json!({})), "calc.py", &text);
    let suggestion = inline_suggestion(&mut client, &uri, pos);
    let completed = format!("{}{}{}", &text[..marker], suggestion, &text[marker..]);
    assert_compiles(client.root(), &completed);
    client.shutdown_and_exit();
    (suggestion, completed)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_half_typed_return_gets_a_one_line_suggestion_that_compiles() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    let text = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return |\n";
    let (suggestion, _) = tokio::task::block_in_place(|| complete_at_marker(&url, text));
    assert!(!suggestion.trim().is_empty(), "non-empty: {suggestion:?}");
    assert!(!suggestion.contains('\n'), "mid-line: one line: {suggestion:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suggestion_before_a_closing_bracket_does_not_repeat_it() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    let text = "def greet(name):\n    print(\"Hello, \" + |)\n";
    let (suggestion, _) = tokio::task::block_in_place(|| complete_at_marker(&url, text));
    assert!(!suggestion.contains('\n'), "one line: {suggestion:?}");
    assert!(!suggestion.trim_end().ends_with(')'), "the suffix's `)` is not repeated: {suggestion:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_through_a_suggestion_answers_its_rest_from_the_cache() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| {
        // A long debounce: an answer faster than it cannot have asked the model.
        let debounce = Duration::from_millis(3000);
        let (text, marker, pos) = cursor("def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return |\n");
        let mut client = LspClient::spawn();
        let init = options(&url, json!({"debounce_ms": debounce.as_millis() as u64}));
        let uri = open(&mut client, init, "calc.py", &text);
        let suggestion = inline_suggestion(&mut client, &uri, pos);
        let first: String = suggestion.chars().take(1).collect();
        assert!(suggestion.chars().count() > 1, "a suggestion to type through: {suggestion:?}");
        // The user types the suggestion's first character.
        let range = json!({"start": {"line": pos.0, "character": pos.1}, "end": {"line": pos.0, "character": pos.1}});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": range, "text": first}]}),
        );
        let next = (pos.0, pos.1 + first.encode_utf16().count() as u32);
        let started = Instant::now();
        let rest = inline_suggestion(&mut client, &uri, next);
        let took = started.elapsed();
        assert_eq!(format!("{first}{rest}"), suggestion, "the rest of the same suggestion");
        assert!(took < debounce, "answered without the model (took {took:?}, the debounce is {debounce:?})");
        let completed = format!("{}{}{}", &text[..marker], suggestion, &text[marker..]);
        assert_compiles(client.root(), &completed);
        client.shutdown_and_exit();
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_inline_completion_gets_the_suggestion_as_a_completion_item() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| {
        // Half a word typed: the item replaces it with the whole word and the rest (as Helix filters by it).
        let (text, _, pos) = cursor("def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a|\n");
        let mut client = LspClient::spawn();
        let uri = open(&mut client, options(&url, json!({})), "calc.py", &text);
        let result = client.request("textDocument/completion", at(&uri, pos)).expect("answer");
        let items = items(&result);
        assert_eq!(items.len(), 1, "one item: {result:#}");
        assert_eq!(result["isIncomplete"], json!(true), "asked again as the user types: {result:#}");
        let edit = &items[0]["textEdit"];
        assert_eq!(edit["range"]["start"], json!({"line": pos.0, "character": pos.1 - 1}), "{result:#}");
        assert_eq!(edit["range"]["end"], json!({"line": pos.0, "character": pos.1}), "{result:#}");
        let new_text = edit["newText"].as_str().unwrap();
        assert!(new_text.starts_with('a') && new_text.len() > 1, "the word and more: {result:#}");
        assert_eq!(items[0]["filterText"], json!(new_text), "{result:#}");
        let completed = apply_text_edits(&text, std::slice::from_ref(edit), "utf-16");
        assert_compiles(client.root(), &completed);
        client.shutdown_and_exit();
    });
}

#[test]
fn a_client_with_inline_completion_gets_no_completion_items_and_the_server_advertises_both() {
    let mut client = LspClient::spawn();
    let root_uri = format!("file://{}", client.root().display());
    let init = client
        .request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                // Nothing listens here: an item that asked the model would fail.
                "initializationOptions": options(&common::closed_port_url(), json!({})),
                "capabilities": {"textDocument": {"inlineCompletion": {}}}
            }),
        )
        .expect("initialize");
    client.notify("initialized", json!({}));
    let caps = &init["capabilities"];
    assert_eq!(caps["inlineCompletionProvider"], json!({}), "{caps:#}");
    assert!(caps["completionProvider"].is_object(), "{caps:#}");
    let uri = open_doc(&mut client, "calc.py", "x = \n");
    let result = client.request("textDocument/completion", at(&uri, (0, 4))).expect("answer");
    assert!(items(&result).is_empty(), "the ghost text is the client's inline completion: {result:#}");
    client.shutdown_and_exit();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_position_past_the_end_is_an_error_and_the_server_answers_the_next_request() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| {
        let mut client = LspClient::spawn();
        let uri = open(&mut client, options(&url, json!({})), "calc.py", "x = 1\ny = \n");
        for method in ["textDocument/inlineCompletion", "textDocument/completion"] {
            for pos in [(7, 0), (0, 40)] {
                let err = client.request(method, at(&uri, pos)).expect_err("past the end");
                assert_eq!(err["code"], -32602, "{err:#}");
                let message = err["message"].as_str().unwrap();
                assert!(message.contains("past the end of the document"), "{err:#}");
            }
        }
        let ok = client.request("textDocument/inlineCompletion", at(&uri, (1, 4))).expect("answered");
        assert!(ok.get("items").is_some(), "{ok:#}");
        assert!(client.is_running());
        client.shutdown_and_exit();
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_newer_request_or_a_cancel_ends_a_request_with_no_suggestion_and_edits_never_wait() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| {
        let mut client = LspClient::spawn();
        let text = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return \n";
        // No debounce: each request goes to the model at once, so the newer request and the
        // cancel below land while a generation is under way.
        let init = options(&url, json!({"debounce_ms": 0}));
        let uri = open(&mut client, init, "calc.py", text);
        // Two requests in a row (typing): the first is superseded and answers with no items.
        let first = client.request_async("textDocument/inlineCompletion", at(&uri, (2, 11)));
        let second = client.request_async("textDocument/inlineCompletion", at(&uri, (2, 11)));
        let first = client.wait_response(first).expect("the first answers");
        assert!(items(&first).is_empty(), "superseded: {first:#}");
        let second = client.wait_response(second).expect("the second answers");
        assert_eq!(items(&second).len(), 1, "the newest request gets the suggestion: {second:#}");

        // Another document (not in the cache): while its generation runs, an edit and a
        // request about the document are answered at once.
        let other = open_doc(&mut client, "other.py", "import os\n\n\ndef list_files(path):\n    \n");
        let third = client.request_async("textDocument/inlineCompletion", at(&other, (4, 4)));
        let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": other, "version": 2}, "contentChanges": [{"range": range, "text": "# files\n"}]}),
        );
        let started = Instant::now();
        let doc = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": other}})).expect("answer");
        assert_eq!(doc["version"], 2, "{doc:#}");
        let edit_took = started.elapsed();
        // The cancel: an answer at once, no suggestion.
        let started = Instant::now();
        client.notify("$/cancelRequest", json!({"id": third}));
        let cancelled = client.wait_response(third);
        let cancel_took = started.elapsed();
        match cancelled {
            Err(e) => assert_eq!(e["code"], -32800, "cancelled: {e:#}"),
            Ok(r) => assert!(items(&r).is_empty(), "cancelled: {r:#}"),
        }
        eprintln!("edit answered in {edit_took:?}, cancel in {cancel_took:?}");
        assert!(edit_took < Duration::from_secs(2), "didChange and requests never wait for a suggestion");
        assert!(cancel_took < Duration::from_secs(2), "a cancel answers at once");
        // The server goes on: a new request there gets a suggestion.
        let fourth = client.request("textDocument/inlineCompletion", at(&other, (5, 4))).expect("answered");
        assert_eq!(items(&fourth).len(), 1, "{fourth:#}");
        client.shutdown_and_exit();
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_asked_while_a_suggestion_is_generated_takes_the_model_first() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| {
        let mut client = LspClient::spawn();
        // A long block (primes, one per line, no blank line) so the generation is still
        // under way when the chat arrives.
        let text = "# The first 300 prime numbers.\nPRIMES = [\n    2,\n    3,\n    5,\n    \n";
        let init = options(&url, json!({"debounce_ms": 0, "max_tokens": 1500, "stop": "block"}));
        let uri = open(&mut client, init, "primes.py", text);
        let completion = client.request_async("textDocument/inlineCompletion", at(&uri, (5, 4)));
        // Long enough for the prompt, far too short for the block.
        std::thread::sleep(Duration::from_millis(1500));
        let started = Instant::now();
        let chat = client
            .request(
                "tinycoder/chat",
                json!({"requestId": "c1", "message": "What does PRIMES hold? One sentence.", "textDocument": {"uri": uri}}),
            )
            .expect("the chat answers");
        eprintln!("the chat answered in {:?}", started.elapsed());
        assert!(!chat["reply"].as_str().unwrap_or_default().trim().is_empty(), "{chat:#}");
        // The suggestion gave the model up: it ends with no items (1,500 tokens were not written).
        let answer = client.wait_response(completion).expect("the completion answers");
        assert!(items(&answer).is_empty(), "the chat cancelled the generation: {answer:#}");
        client.shutdown_and_exit();
    });
}

#[test]
fn a_model_server_that_is_down_is_an_error_naming_it() {
    let url = common::closed_port_url();
    let mut client = LspClient::spawn();
    let uri = open(&mut client, options(&url, json!({})), "calc.py", "x = \n");
    for method in ["textDocument/inlineCompletion", "textDocument/completion"] {
        let err = client.request(method, at(&uri, (0, 4))).expect_err("no server");
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("not reachable") && message.contains(&url), "{err:#}");
    }
    let doc = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": uri}}));
    assert!(doc.is_ok(), "the server stays up: {doc:?}");
    client.shutdown_and_exit();
}
