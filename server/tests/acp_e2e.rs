//! `tinycoder acp` end to end with real ACP clients from the ecosystem, the
//! real binary and the test bed's coder model (Qwen2.5-Coder 0.5B):
//! - the official TypeScript SDK (`@agentclientprotocol/sdk`, npm) asks about a
//!   file that is not open (the streamed answer cites it, the file read through
//!   `fs/read_text_file`), fixes the failing test of `tests/fixtures/agent-python`
//!   (tool calls for the test runs and attempts, a diff, a permission request
//!   answered, the patch written through `fs/write_text_file`, the tests green),
//!   cancels an answer and a test run (the test run ends within a second) and
//!   loads the session back;
//! - the Python SDK (`agent-client-protocol`, PyPI) asks about an unsaved
//!   buffer: the answer cites the buffer, not the disk's file.
//!
//! The clients live under `~/.cache/tinycoder/` (`scripts/test.sh` installs
//! them; a missing one is installed here). Model calls are slow on a loaded
//! machine: the limits below are hang guards, and the only timed assertion is
//! the cancel of the test run.

mod common;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SDK_VERSION: &str = "2.4.0";
const PY_SDK_VERSION: &str = "0.12.1";
const HANG_GUARD: Duration = Duration::from_secs(1800);

fn cache() -> PathBuf {
    let home = std::env::var("HOME").expect("HOME");
    PathBuf::from(home).join(".cache/tinycoder")
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The TypeScript SDK in `~/.cache/tinycoder/acp-node` (installed from npm when missing).
fn node_sdk() -> PathBuf {
    let dir = std::env::var("TINYCODER_ACP_NODE").map(PathBuf::from).unwrap_or_else(|_| cache().join("acp-node"));
    if !dir.join("node_modules/@agentclientprotocol/sdk/package.json").is_file() {
        std::fs::create_dir_all(&dir).expect("node cache dir");
        let spec = format!("@agentclientprotocol/sdk@{SDK_VERSION}");
        run_ok(
            Command::new("npm").args(["install", "--no-audit", "--no-fund", "--prefix"]).arg(&dir).arg(spec),
            "npm install of the ACP TypeScript SDK",
        );
    }
    dir
}

/// A virtual environment with the Python SDK in `~/.cache/tinycoder/acp-venv` (from PyPI when missing).
fn python_sdk() -> PathBuf {
    let dir = std::env::var("TINYCODER_ACP_VENV").map(PathBuf::from).unwrap_or_else(|_| cache().join("acp-venv"));
    let python = dir.join("bin/python");
    let ok = Command::new(&python).args(["-c", "import acp"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        run_ok(Command::new("python3").args(["-m", "venv"]).arg(&dir), "python3 -m venv");
        run_ok(
            Command::new(&python)
                .args(["-m", "pip", "install", "-q"])
                .arg(format!("agent-client-protocol=={PY_SDK_VERSION}")),
            "pip install of the ACP Python SDK",
        );
    }
    python
}

/// The environment of the agent: every role on the test bed's coder model, on llama-server
/// when it answers, else on Ollama (both serve the same GGUF); cache and data inside `home`.
async fn model_env(home: &Path) -> Vec<(String, String)> {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().expect("http client");
    let up = |url: String| {
        let client = client.clone();
        async move { matches!(client.get(url).send().await, Ok(r) if r.status().is_success()) }
    };
    let openai = common::openai_url();
    if up(format!("{openai}/health")).await {
        return common::agent_env(&openai, home);
    }
    let ollama = common::ollama_url();
    common::require_server(&ollama, "/api/tags").await;
    eprintln!("llama-server at {openai} does not answer; using Ollama at {ollama}");
    let mut env = common::agent_env(&ollama, home);
    for (k, v) in env.iter_mut() {
        if k == "TINYCODER_BACKEND__KIND" {
            *v = "ollama".into();
        }
    }
    env
}

/// Runs `cmd` to its end (killed past the hang guard); returns the JSON report it printed last.
fn run_client(mut cmd: Command, what: &str) -> Value {
    let out_path = tempfile::NamedTempFile::new().expect("report file");
    let out = std::fs::File::create(out_path.path()).expect("report file");
    let mut child = cmd.stdout(out).stderr(Stdio::inherit()).spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    let deadline = Instant::now() + HANG_GUARD;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} hung for {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let printed = std::fs::read_to_string(out_path.path()).unwrap_or_default();
    assert!(status.success(), "{what} failed ({status}); stdout:\n{printed}");
    let last = printed.lines().rev().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("{what} printed no report"));
    serde_json::from_str(last).expect("a JSON report")
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_asks_cancels_and_loads() {
    let home = tempfile::tempdir().expect("home");
    let mut env = model_env(home.path()).await;
    // Replies depend on what the model server's prompt cache holds from earlier tests; with the
    // cache off, greedy replies to the same prompt are the same, and so is the fix.
    env.push(("TINYCODER_BACKEND__PROMPT_CACHE".into(), "false".into()));
    let _one_at_a_time = serial();
    let ws = home.path().join("ws");
    common::copy_fixture("agent-python", &ws);
    let slow = home.path().join("slow");
    common::copy_fixture("agent-python", &slow);
    std::fs::write(
        slow.join("tests/test_slow.py"),
        "import time\n\n\ndef test_takes_a_minute():\n    time.sleep(60)\n",
    )
    .expect("a slow test");
    assert!(!common::pytest_passes(&ws), "the fixture starts red");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/ts_client.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(node_sdk()).arg(env!("CARGO_BIN_EXE_tinycoder")).arg(&ws).arg(&slow).envs(env);
    let r = tokio::task::block_in_place(|| run_client(cmd, "the TypeScript ACP client"));

    assert_eq!(r["initialize"]["protocolVersion"], 1);
    assert_eq!(r["initialize"]["agentCapabilities"]["loadSession"], true);

    let ask = &r["ask"];
    assert_eq!(ask["stopReason"], "end_turn", "{ask:#}");
    let answer = ask["text"].as_str().unwrap_or("");
    assert!(answer.contains("shop/prices.py"), "the streamed answer cites the file: {answer}");
    assert!(
        ask["reads"].as_array().is_some_and(|a| a.iter().any(|p| p == "shop/prices.py")),
        "the file was read through fs/read_text_file: {ask:#}"
    );

    // The fix: the coder's patch is shown as a diff, written through fs/write_text_file
    // after the permission request is answered, and the project's tests pass.
    let fix = &r["fix"];
    assert_eq!(fix["stopReason"], "end_turn", "{fix:#}");
    let diffs = fix["diffs"].as_array().expect("diffs");
    assert!(diffs.iter().any(|d| d["path"] == "shop/prices.py"), "no diff of shop/prices.py: {fix:#}");
    assert!(!fix["permissions"].as_array().expect("permissions").is_empty(), "no permission asked: {fix:#}");
    assert_eq!(fix["writes"], json!(["shop/prices.py"]), "{fix:#}");
    assert!(
        fix["toolCalls"].as_array().expect("tool calls").iter().any(|t| t["kind"] == "execute"),
        "the tests ran as a tool call: {fix:#}"
    );
    assert!(common::pytest_passes(&ws), "the tests are green after the fix: {fix:#}");

    // A cancel sent on the answer's first chunk races the answer's end (a short answer from a
    // fast model can finish first), so either stop reason is accepted; the turn must end soon
    // after the cancel either way (measured from 30 ms to 8 s on a machine shared with builds:
    // the model stream is not yet stopped within a second).
    let t = &r["cancelAsk"];
    assert!(t["stopReason"] == "cancelled" || t["stopReason"] == "end_turn", "{t:#}");
    let ms = t["cancelToResponseMs"].as_u64().unwrap_or(u64::MAX);
    assert!(ms < 30_000, "the answer ended {ms} ms after session/cancel");
    // A cancel while the tests run ends the turn within a second.
    let t = &r["cancelTests"];
    assert_eq!(t["stopReason"], "cancelled", "{t:#}");
    let ms = t["cancelToResponseMs"].as_u64().unwrap_or(u64::MAX);
    assert!(ms < 1000, "the test run ended {ms} ms after session/cancel");
    let loaded: Vec<&str> = r["loaded"].as_array().expect("loaded").iter().filter_map(Value::as_str).collect();
    assert!(loaded.contains(&"user_message_chunk") && loaded.contains(&"agent_message_chunk"), "{loaded:?}");
    assert_eq!(r["agentExit"], 0, "the agent ends cleanly when the client closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_answers_from_an_unsaved_buffer() {
    let home = tempfile::tempdir().expect("home");
    let env = model_env(home.path()).await;
    let _one_at_a_time = serial();
    let ws = home.path().join("ws");
    common::copy_fixture("agent-python", &ws);
    let disk_lines = std::fs::read_to_string(ws.join("shop/prices.py")).expect("prices").lines().count();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/py_client.py");
    let mut cmd = Command::new(python_sdk());
    cmd.arg(script).arg(env!("CARGO_BIN_EXE_tinycoder")).arg(&ws).envs(env);
    let r = tokio::task::block_in_place(|| run_client(cmd, "the Python ACP client"));

    assert_eq!(r["agent"], "tinycoder");
    let ask = &r["ask"];
    assert_eq!(ask["stopReason"], "end_turn");
    let answer = ask["text"].as_str().unwrap_or("");
    // The code section shown to the model is the buffer (3 lines longer than the disk's file).
    let cited = format!("shop/prices.py:1-{}", disk_lines + 3);
    assert!(answer.contains(&cited), "the answer cites the unsaved buffer ({cited}): {answer}");

    assert!(
        ask["reads"].as_array().is_some_and(|a| a.iter().any(|p| p == "shop/prices.py")),
        "the buffer was read through fs/read_text_file: {ask:#}"
    );
    assert!(r["writes"].as_array().is_some_and(Vec::is_empty), "a question writes nothing");
    assert!(r["permissions"].as_array().is_some_and(Vec::is_empty), "a question asks no permission");
}
