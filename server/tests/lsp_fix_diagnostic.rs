//! The quick-fix on another tool's diagnostic through a real LSP client over
//! stdio, with a REAL coder model (Qwen2.5-Coder 0.5B on the test bed's
//! llama-server): a rustc error in the `codeAction` context, as rust-analyzer
//! publishes it, becomes a patch only after `cargo check` in the shadow stops
//! reporting it; the proposal says so, and the patched crate compiles and
//! passes its tests.

mod common;
mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::json;
use std::time::{Duration, Instant};

/// How long the fix may take on a busy 2-core machine (a hang guard, not a timing assertion).
const FIX_DEADLINE: Duration = Duration::from_secs(900);

#[tokio::test(flavor = "multi_thread")]
async fn a_rustc_error_is_fixed_and_proven_gone_with_cargo_check() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| run(&url));
}

fn run(url: &str) {
    let dirs = tempfile::tempdir().expect("dirs");
    let mut client = LspClient::spawn_with_env(dirs, &[("TINYCODER_BACKEND__PROMPT_CACHE".into(), "false".into())]);
    let root = client.root().to_path_buf();
    common::copy_fixture("rust-diagnostic", &root);
    client.replies.insert("workspace/applyEdit".into(), json!({"applied": true}));
    client.initialize(&["utf-16"], common::agent_init_options(url));

    let uri = file_uri(&root, "src/lib.rs");
    let diagnostic = json!({
        "range": {"start": {"line": 8, "character": 4}, "end": {"line": 8, "character": 8}},
        "severity": 1, "source": "rustc", "code": "E0425",
        "message": "cannot find value `totl` in this scope\na local variable with a similar name exists: `total`",
    });
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
        )
        .expect("codeAction");
    let quickfix = actions.as_array().unwrap().iter().find(|a| a["kind"] == "quickfix").cloned().expect("a quick-fix");
    client
        .request(
            "workspace/executeCommand",
            json!({"command": quickfix["command"]["command"], "arguments": quickfix["command"]["arguments"]}),
        )
        .expect("tinycoder.fix starts");

    let deadline = Instant::now() + FIX_DEADLINE;
    let edit = client.next_apply_edit(deadline);
    let label = edit["changeAnnotations"]["tinycoder.patch"]["label"].as_str().unwrap_or_default().to_string();
    assert!(label.contains("no longer reports E0425 and reports no new error"), "{label}");
    let doc = &edit["documentChanges"][0];
    assert_eq!(doc["textDocument"]["uri"], uri);
    let path = root.join("src/lib.rs");
    let before = std::fs::read_to_string(&path).unwrap();
    let after = apply_text_edits(&before, doc["edits"].as_array().unwrap(), "utf-16");
    std::fs::write(&path, &after).unwrap();
    let target = tempfile::tempdir().unwrap();
    let tests = std::process::Command::new("cargo")
        .args(["test", "--quiet", "--offline"])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .unwrap();
    assert!(tests.status.success(), "the patched crate compiles and its test passes:\n{after}\n{tests:?}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
