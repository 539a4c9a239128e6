//! The quick-fix through a real LSP client over stdio, with a REAL coder model
//! (Qwen2.5-Coder 0.5B on the test bed's llama-server): a failing test becomes
//! a diagnostic, its quick-fix becomes a `workspace/applyEdit` with versioned
//! document changes and a confirmation annotation, the edit applies cleanly,
//! parses, and turns the tests green; the diagnostic is cleared; `tinycoder.undo`
//! then sends the edit back to the text before the fix. The same runs in a
//! folder added to the workspace after start-up (its own index, store and tests).

mod common;
mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::json;
use std::time::{Duration, Instant};

/// How long the whole fix may take on a busy 2-core machine (a hang guard, not a timing assertion).
const FIX_DEADLINE: Duration = Duration::from_secs(900);

#[tokio::test(flavor = "multi_thread")]
async fn the_quick_fix_on_a_test_diagnostic_applies_a_tested_patch() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| run(&url, false));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_quick_fix_works_the_same_in_a_folder_added_to_the_workspace() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| run(&url, true));
}

/// Fixes the agent-python fixture, in the first workspace folder or in one added after start-up.
fn run(url: &str, in_added_folder: bool) {
    // The whole prompt evaluated every time: greedy replies then do not depend on what earlier
    // tests left in llama-server's cache, so the fix lands on the same attempt in every run.
    let dirs = tempfile::tempdir().expect("dirs");
    let mut client = LspClient::spawn_with_env(dirs, &[("TINYCODER_BACKEND__PROMPT_CACHE".into(), "false".into())]);
    let added = tempfile::tempdir().expect("added folder");
    let root = match in_added_folder {
        true => added.path().canonicalize().unwrap(),
        false => client.root().to_path_buf(),
    };
    common::copy_fixture("agent-python", &root);
    client.replies.insert("workspace/applyEdit".into(), json!({"applied": true}));
    client.initialize(&["utf-16"], common::agent_init_options(url));
    if in_added_folder {
        let uri = format!("file://{}", root.display());
        client.notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": uri, "name": "shop"}], "removed": []}}),
        );
    }

    let test_uri = file_uri(&root, "tests/test_prices.py");
    // List the code actions at the diagnostic, as an editor's light bulb does, and take the quick-fix.
    let (diagnostic, started) = client.start_test_quick_fix_in(&root, "tests/test_prices.py");
    assert_eq!(diagnostic["source"], "tinycoder");
    assert!(started["taskId"].is_string() && started["jobId"].is_string(), "{started:#}");

    // The patch arrives as workspace/applyEdit (auto-answered `applied: true`, as a user accepting it).
    let deadline = Instant::now() + FIX_DEADLINE;
    let edit = client.next_apply_edit(deadline);
    let annotation = &edit["changeAnnotations"]["tinycoder.patch"];
    assert_eq!(annotation["needsConfirmation"], true, "{edit:#}");
    assert!(annotation["label"].as_str().unwrap().contains("tests pass"), "{edit:#}");
    let changes = edit["documentChanges"].as_array().expect("versioned document changes");
    assert_eq!(changes.len(), 1, "{edit:#}");
    let doc = &changes[0];
    assert_eq!(doc["textDocument"]["uri"], file_uri(&root, "shop/prices.py"));
    assert!(doc["textDocument"]["version"].is_null(), "the file is not open: no version");
    let path = root.join("shop/prices.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let after = apply_text_edits(&before, doc["edits"].as_array().unwrap(), "utf-16");
    assert!(doc["edits"].as_array().unwrap().iter().all(|e| e["annotationId"] == "tinycoder.patch"));
    std::fs::write(&path, &after).unwrap();
    let compiles = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(&path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .unwrap();
    assert!(compiles.success(), "the patched file parses:\n{after}");
    assert!(common::pytest_passes(&root), "the patch turns the tests green:\n{after}");

    // The server runs the tests again and clears the diagnostic.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let m = client.next_before(deadline, "the cleared diagnostics");
        if m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == test_uri
            && m["params"]["diagnostics"] == json!([])
        {
            break;
        }
    }

    // The applied patch is an undo point: tinycoder.undo sends the edit back to the old text.
    client.inbox.clear();
    let undo = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.undo", "arguments": []}))
        .expect("tinycoder.undo answers");
    assert_eq!(undo["files"], json!([{"path": "shop/prices.py", "action": "restore"}]), "{undo:#}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let back = loop {
        let m = match client.inbox.pop_front() {
            Some(m) => m,
            None => client.next_before(deadline, "the undo's workspace/applyEdit"),
        };
        if m["method"] == "workspace/applyEdit" {
            break m["params"]["edit"].clone();
        }
    };
    let undo_edits = back["documentChanges"][0]["edits"].as_array().expect("the undo's text edits");
    assert_eq!(apply_text_edits(&after, undo_edits, "utf-16"), before, "the undo gives back the text before the fix");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
