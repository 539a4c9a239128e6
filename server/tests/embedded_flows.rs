//! The embedded backend reached the way users reach it: `tinycoder models list`,
//! `tinycoder doctor` and `tinycoder chat` from the command line, and a chat
//! through the language server over stdio, and inline completion (ghost text
//! from the model's FIM tokens) through it, with no model server anywhere (the
//! configured URL is a closed port); and recorded agent calls replayed with
//! prompt-lookup drafts (`bench fix --record-calls`, `bench lookup`). Models: the test bed's GGUF files
//! (`scripts/testbed.sh models`; folder from TINYCODER_TEST_MODELS_DIR).
#![cfg(feature = "embedded")]

mod common;
mod lsp_client;

use common::{closed_port_url, CliHome};
use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::path::PathBuf;

const QWEN: &str = "qwen2.5-coder:0.5b";

fn models_dir() -> PathBuf {
    let dir = std::env::var("TINYCODER_TEST_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/tinycoder/testbed/models")
    });
    assert!(
        dir.join(format!("{QWEN}.gguf")).is_file(),
        "no {QWEN}.gguf in {}: run `scripts/testbed.sh models` (repo root) and retry",
        dir.display()
    );
    dir
}

/// The environment of a user with no server and the models in a folder: `auto` must find them.
fn embedded_env() -> Vec<(String, String)> {
    let mut env = vec![
        ("TINYCODER_BACKEND__URL".to_string(), closed_port_url()),
        ("TINYCODER_BACKEND__MODELS_DIR".to_string(), models_dir().display().to_string()),
        ("TINYCODER_BACKEND__OLLAMA_MODELS".to_string(), "/nonexistent".to_string()),
    ];
    for role in ["PLANNER", "CODER", "CRITIC", "SUMMARIZER"] {
        env.push((format!("TINYCODER_MODELS__{role}__NAME"), QWEN.to_string()));
        env.push((format!("TINYCODER_MODELS__{role}__NUM_CTX"), "4096".to_string()));
    }
    env
}

fn run(home: &CliHome, args: &[&str]) -> (i32, String, String) {
    let out = home.command(args).envs(embedded_env()).output().expect("run tinycoder");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn models_list_shows_the_files_on_disk_with_their_roles_and_context() {
    let home = CliHome::new();
    let (code, out, err) = run(&home, &["models", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["backend"], json!("embedded"), "no server answers and the models are on disk: {v}");
    let rows = v["models"].as_array().expect("models");
    let qwen = rows.iter().find(|r| r["name"] == json!(QWEN)).unwrap_or_else(|| panic!("{QWEN} listed: {v}"));
    assert_eq!(qwen["from"], json!("disk"));
    assert_eq!(qwen["context_length"], json!(32768), "read from the GGUF header");
    assert_eq!(qwen["roles"], json!(["planner", "coder", "critic", "summarizer"]));
    assert!(qwen["location"].as_str().unwrap().ends_with(&format!("{QWEN}.gguf")));
}

#[test]
fn doctor_checks_that_each_roles_model_is_found_and_loads() {
    let home = CliHome::new();
    // The exit code also reflects the sandbox's checks on this machine; the model checks are what matter here.
    let (_, out, err) = run(&home, &["doctor", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let checks = v.as_array().or_else(|| v["checks"].as_array()).expect("checks").clone();
    let model_checks: Vec<&Value> =
        checks.iter().filter(|c| c["area"] == json!("model") || c["area"] == json!("backend")).collect();
    assert_eq!(model_checks.len(), 5, "{model_checks:?}");
    for c in &model_checks {
        assert_eq!(c["status"], json!("ok"), "{c}");
    }
    let text = serde_json::to_string(&model_checks).unwrap();
    assert!(text.contains("embedded llama.cpp, no server"), "{text}");
    assert!(text.contains("loads from") && text.contains("context length 32768"), "{text}");
    // A missing model fails with the fix.
    let out = home
        .command(&["doctor", "--json"])
        .envs(embedded_env())
        .env("TINYCODER_BACKEND__KIND", "embedded")
        .env("TINYCODER_MODELS__CRITIC__NAME", "not-pulled:1b")
        .output()
        .expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("ollama pull not-pulled:1b"), "{text}");
}

#[test]
fn chat_from_the_command_line_streams_a_reply_with_no_server() {
    let home = CliHome::new();
    let (code, out, err) = run(&home, &["chat", "Write a Python function named add that adds two numbers."]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("def add"), "{out}");
}

#[test]
fn a_chat_through_the_language_server_runs_on_the_embedded_model() {
    let dirs = tempfile::tempdir().expect("tempdir");
    let mut client = LspClient::spawn_with_env(dirs, &embedded_env());
    client.initialize(&["utf-8"], json!({"models": {"coder": {"max_output_tokens": 120, "temperature": 0.0}}}));
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
    let text = reply["reply"].as_str().unwrap_or("").to_lowercase();
    assert!(text.contains("area") || text.contains("product") || text.contains("multipl"), "{text}");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn an_inline_completion_through_the_language_server_runs_on_the_embedded_model() {
    let dirs = tempfile::tempdir().expect("tempdir");
    let mut client = LspClient::spawn_with_env(dirs, &embedded_env());
    // The time cap is a hang guard on a busy 2-core machine (the model's load included), not a target.
    client.initialize(&["utf-16"], json!({"completion": {"timeout_ms": 120000}}));
    let text = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return \n\n\nprint(add(2, 3))\n";
    let uri = file_uri(client.root(), "calc.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    let cursor = json!({"line": 2, "character": 11});
    let result = client
        .request(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": uri}, "position": cursor, "context": {"triggerKind": 2}}),
        )
        .unwrap_or_else(|e| panic!("inline completion failed: {e}"));
    let items = result.get("items").unwrap_or(&result).as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "one suggestion: {result:#}");
    assert_eq!(items[0]["range"]["start"], cursor, "inserted at the cursor: {result:#}");
    let suggestion = items[0]["insertText"].as_str().expect("insertText");
    assert!(!suggestion.trim().is_empty() && !suggestion.contains('\n'), "one line: {suggestion:?}");
    // The completed file runs and prints the sum.
    let completed = text.replacen("    return \n", &format!("    return {suggestion}\n"), 1);
    let path = client.root().join("completed.py");
    std::fs::write(&path, &completed).expect("write");
    let out = std::process::Command::new("python3").arg(&path).output().expect("python3");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "5",
        "{completed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(client.shutdown_and_exit().success());
}

/// The agent's own prompts, recorded by `bench fix --record-calls`, replayed by `bench lookup`
/// without and with prompt-lookup drafts, both timed and compared.
#[test]
fn recorded_fix_calls_replay_with_and_without_prompt_lookup_drafts() {
    let home = CliHome::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bench/fix");
    std::fs::create_dir_all(&home.data).expect("data folder");
    let calls = home.data.join("calls.jsonl");
    let (corpus, calls_arg) = (corpus.display().to_string(), calls.display().to_string());
    let (code, _, err) =
        run(&home, &["bench", "fix", &corpus, "--only", "py-config-env-flag", "--record-calls", &calls_arg]);
    assert_eq!(code, 0, "{err}");
    let recorded = std::fs::read_to_string(&calls).expect("the calls were recorded");
    let first: Value = serde_json::from_str(recorded.lines().next().expect("one call at least")).expect("json line");
    assert_eq!(first["role"], json!("coder"), "{first}");
    assert!(first["messages"].to_string().contains("to_bool"), "the coder saw the code to fix: {first}");

    let (code, out, err) = run(&home, &["bench", "lookup", &calls_arg, "--limit", "1", "--max-tokens", "80", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(v["calls"], json!(1), "{v}");
    let r = &v["results"][0];
    assert!(r["plain"]["tokens"].as_u64().unwrap_or(0) > 0, "{r}");
    assert!(r["drafted"]["tokens"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(r["plain"]["drafted"], json!(0), "no drafts without them: {r}");
    // Same reply or not (a near-tie can round the other way in a batch), it is counted.
    assert!(v["same_replies"].as_u64().is_some() && v["share_from_drafts"].as_f64().is_some(), "{v}");
}
