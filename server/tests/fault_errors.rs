//! Errors a user can act on. Every CLI command and the language server's
//! requests under five faults: the model server down (a closed port), a model
//! the server does not have, a data directory that cannot be created (under a
//! regular file, so even root gets ENOTDIR), a store file overwritten with
//! garbage, and an index whose `meta.json` is garbage.
//!
//! A fault that concerns a command ends it with ONE message naming the problem
//! and the fix: one `error:` line on stderr and exit code 1 (CLI), an error
//! answer or a `window/showMessage` with the server still up (LSP); never a
//! panic or a hang (every run has a deadline). A fault that does not concern a
//! command leaves it working. The index is a cache: a corrupt one is rebuilt
//! with a warning. The store holds the user's data: it is never deleted, the
//! message names the file and what to do.
//!
//! The cells that reach a model use the test bed's Ollama (`scripts/testbed.sh
//! up`) with replies capped at a few tokens.
//! Run: cargo test --release --test fault_errors

mod common;
mod lsp_client;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one command may take before the test calls it hung.
const DEADLINE: Duration = Duration::from_secs(90);
/// A model server that is down must be reported at once, not after a timeout.
const FAST: Duration = Duration::from_secs(15);
const MISSING_MODEL: &str = "no-such-model-tinycoder";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    ModelDown,
    ModelMissing,
    DataDirUnwritable,
    StoreCorrupt,
    IndexCorrupt,
}

impl Fault {
    /// What the one message must say: the problem, where, and the fix.
    fn needles(self) -> &'static [&'static str] {
        match self {
            Fault::ModelDown => &["is not reachable", "ollama serve", "backend.url"],
            Fault::ModelMissing => &["is not on the server", MISSING_MODEL, "ollama pull no-such-model-tinycoder"],
            Fault::DataDirUnwritable => &["cannot create the data directory", "file.txt/data", "TINYCODER_DATA_DIR"],
            Fault::StoreCorrupt => &["tinycoder.sqlite3", "not a tinycoder database", "move it away or delete it"],
            Fault::IndexCorrupt => &["it is a cache: rebuilding"],
        }
    }
}

/// A workspace with a failing test, private cache, data and config, and `fault` in place.
struct Home {
    dir: tempfile::TempDir,
    ws: PathBuf,
    env: Vec<(String, String)>,
}

fn set(env: &mut Vec<(String, String)>, key: &str, value: impl Into<String>) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_string(), value.into()));
}

/// The model settings every run gets: the test bed's Ollama, its 0.5B coder, short replies.
fn model_env(env: &mut Vec<(String, String)>, url: &str, model: &str) {
    set(env, "TINYCODER_BACKEND__KIND", "ollama");
    set(env, "TINYCODER_BACKEND__URL", url);
    for role in ["PLANNER", "CODER", "CRITIC", "SUMMARIZER"] {
        set(env, &format!("TINYCODER_MODELS__{role}__NAME"), model);
        set(env, &format!("TINYCODER_MODELS__{role}__MAX_OUTPUT_TOKENS"), "8");
    }
}

/// Puts `fault` in place for the workspace `ws` whose cache and data roots are `cache` and `data`.
fn break_it(fault: Fault, home: &Path, ws: &Path, env: &mut Vec<(String, String)>) {
    let key = tinycoder::paths::workspace_key(ws);
    match fault {
        Fault::ModelDown => set(env, "TINYCODER_BACKEND__URL", common::closed_port_url()),
        Fault::ModelMissing => model_env(env, &common::ollama_url(), MISSING_MODEL),
        Fault::DataDirUnwritable => {
            std::fs::write(home.join("file.txt"), "a regular file").expect("file");
            set(env, "TINYCODER_DATA_DIR", home.join("file.txt/data").display().to_string());
        }
        Fault::StoreCorrupt => {
            // A real store first (as tinycoder made it), then garbage over it.
            let db = home.join("data/workspaces").join(&key).join(tinycoder::store::DB_FILE_NAME);
            let settings = tinycoder::store::StoreSettings::default();
            drop(tinycoder::store::Store::open(&db, settings).expect("a real store"));
            let garbage: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
            std::fs::write(&db, garbage).expect("garbage over the store");
            for suffix in ["-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
        }
        Fault::IndexCorrupt => {
            let dir = home.join("cache/workspaces").join(&key).join("index");
            let mut cfg = tinycoder::config::LoadedConfig::load(&tinycoder::config::ConfigInputs::default())
                .expect("defaults")
                .config
                .index;
            cfg.watch = false;
            {
                let index = tinycoder::index::WorkspaceIndex::open(ws, &dir, &cfg).expect("a real index");
                index.index_all(|_| {}, &tokio_util::sync::CancellationToken::new()).expect("indexed");
            }
            std::fs::write(dir.join("meta.json"), "{ this is not the index's meta.json").expect("garbage");
        }
    }
}

fn home(fault: Fault) -> Home {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    common::copy_fixture("python-failing", &ws);
    let mut env = Vec::new();
    set(&mut env, "TINYCODER_CACHE_DIR", dir.path().join("cache").display().to_string());
    set(&mut env, "TINYCODER_DATA_DIR", dir.path().join("data").display().to_string());
    set(&mut env, "TINYCODER_CONFIG", dir.path().join("no-user-config.toml").display().to_string());
    set(&mut env, "RUST_LOG", "warn");
    model_env(&mut env, &common::ollama_url(), common::AGENT_MODEL);
    break_it(fault, dir.path(), &ws, &mut env);
    Home { dir, ws, env }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `tinycoder ARGS` in the workspace; panics if it outlives [`DEADLINE`].
fn tinycoder(home: &Home, args: &[&str]) -> Run {
    let started = Instant::now();
    let out_path = home.dir.path().join("stdout");
    let err_path = home.dir.path().join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .arg("--workspace")
        .arg(&home.ws)
        .args(args)
        .envs(home.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(&home.ws)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("spawn tinycoder");
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`tinycoder {}` hung for {DEADLINE:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Run { code: status.code(), stdout: read(&out_path), stderr: read(&err_path), took: started.elapsed() }
}

/// What a command does under a fault.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exit 1 with exactly one stderr line, `error: …`, holding the fault's needles.
    Fails,
    /// Unaffected: the exit code, and this text in stdout or stderr; no `error:` line.
    Works(i32, &'static str),
    /// Unaffected, and the index it opened was rebuilt with the warning (index fault only).
    Rebuilds(i32, &'static str),
    /// Not run: the cell needs a long model run, or setup the fault makes moot (said per row).
    Skip,
}

use Expect::{Fails as F, Rebuilds as R, Skip as S, Works as W};

/// Checks one cell; returns what is wrong, if anything.
fn check(fault: Fault, args: &[&str], expect: Expect, run: &Run) -> Option<String> {
    let all = format!("{}\n{}", run.stdout, run.stderr);
    let cell = format!("{fault:?} × `tinycoder {}`", args.join(" "));
    if all.contains("panicked") || run.code == Some(101) {
        return Some(format!("{cell}: panicked:\n{all}"));
    }
    if matches!(fault, Fault::ModelDown | Fault::ModelMissing) && run.took > FAST {
        return Some(format!("{cell}: took {:?}; a model fault must be reported at once", run.took));
    }
    match expect {
        Expect::Fails => {
            let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let one = lines.len() == 1 && lines[0].starts_with("error: ");
            let says = fault.needles().iter().all(|n| run.stderr.contains(n));
            let once = run.stderr.matches(fault.needles()[0]).count() == 1;
            (run.code != Some(1) || !one || !says || !once).then(|| {
                format!(
                    "{cell}: expected exit 1 and one `error:` line with {:?}, got {:?}:\n{all}",
                    fault.needles(),
                    run.code
                )
            })
        }
        Expect::Works(code, needle) | Expect::Rebuilds(code, needle) => {
            let rebuilt = !matches!(expect, Expect::Rebuilds(..)) || run.stderr.contains(fault.needles()[0]);
            let clean = !run.stderr.lines().any(|l| l.starts_with("error:"));
            (run.code != Some(code) || !all.contains(needle) || !rebuilt || !clean)
                .then(|| format!("{cell}: expected it to work (exit {code}, `{needle}`), got {:?}:\n{all}", run.code))
        }
        Expect::Skip => None,
    }
}

/// Every command × (model down, model missing, data dir, store, index).
#[rustfmt::skip]
const TABLE: &[(&[&str], [Expect; 5])] = &[
    // fix and edit under a corrupt index would run the whole agent with the model; `ask` opens the same environment.
    (&["fix"], [F, F, F, F, S]),
    (&["edit", "calc/__init__.py:4-5", "--instruction", "rename the arguments"], [F, F, F, F, S]),
    (&["resume"], [W(0, "no unfinished tasks"), W(0, "no unfinished tasks"), F, F, R(0, "no unfinished tasks")]),
    (&["ask", "what", "does", "add", "return"], [F, F, F, F, R(0, "calc/__init__.py")]),
    (&["chat", "--max-tokens", "4", "hi"], [F, F, W(0, ""), W(0, ""), W(0, "")]),
    (&["index"], [W(0, "files ("), W(0, "files ("), W(0, "files ("), W(0, "files ("), R(0, "files (")]),
    (&["search", "add"], [W(0, "calc/__init__.py"), W(0, "calc/__init__.py"), W(0, "calc/__init__.py"), W(0, "calc/__init__.py"), R(0, "calc/__init__.py")]),
    (&["context", "--at", "calc/__init__.py:4"], [W(0, "budget:"), W(0, "budget:"), W(0, "budget:"), W(0, "budget:"), R(0, "budget:")]),
    // The fixture's tests fail on purpose: exit 1 with the report is `test` working.
    (&["test"], [W(1, "FAILED"), W(1, "FAILED"), W(1, "FAILED"), W(1, "FAILED"), W(1, "FAILED")]),
    // No task exists to show without the store; with a working store an unknown id is a different error.
    (&["events", "some-task"], [S, S, F, F, S]),
    (&["replay", "some-task"], [S, S, F, F, S]),
    (&["memory", "list"], [W(0, ""), W(0, ""), F, F, W(0, "")]),
    (&["memory", "search", "add"], [W(0, ""), W(0, ""), F, F, W(0, "")]),
    (&["memory", "delete", "some-id"], [S, S, F, F, S]),
    (&["permissions", "list"], [W(0, ""), W(0, ""), F, F, W(0, "")]),
    (&["permissions", "check", "ls -la"], [W(0, "allow"), W(0, "allow"), F, F, W(0, "allow")]),
    (&["permissions", "reset"], [W(0, ""), W(0, ""), F, F, W(0, "")]),
    (&["config"], [W(0, "backend.url"), W(0, "backend.url"), W(0, "backend.url"), W(0, "backend.url"), W(0, "backend.url")]),
    (&["trust"], [W(0, ""), W(0, ""), W(0, ""), W(0, ""), W(0, "")]),
    // The undo history is plain files in the data directory: neither the model, the store nor the index matters.
    (&["undo", "--yes"], [W(0, "nothing to undo"), W(0, "nothing to undo"), W(0, "nothing to undo"), W(0, "nothing to undo"), W(0, "nothing to undo")]),
    // bench copies every task into its own temp store and index: only model faults reach it.
    (&["bench", "fix", "../../../tests/bench/fix", "--only", "py-config-env-flag"], [F, F, S, S, S]),
];

fn cli_under(fault: Fault) {
    let col = fault as usize;
    let mut wrong = Vec::new();
    for (args, expects) in TABLE {
        if matches!(expects[col], Expect::Skip) {
            continue;
        }
        let home = home(fault);
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if args[0] == "bench" {
            // The corpus, by absolute path (the run's working directory is the workspace copy).
            args[2] = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bench/fix").display().to_string();
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = tinycoder(&home, &args);
        wrong.extend(check(fault, &args, expects[col], &run));
    }
    wrong.extend(doctor_under(fault));
    assert!(wrong.is_empty(), "{} cell(s) wrong:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

/// `tinycoder doctor` reports the fault as a FAIL line with its fix (exit 1), or nothing about it.
fn doctor_under(fault: Fault) -> Option<String> {
    let run = tinycoder(&home(fault), &["doctor"]);
    let want: &[&str] = match fault {
        Fault::ModelDown => &["FAIL backend", "is not reachable", "fix: start Ollama"],
        Fault::ModelMissing => &["FAIL model", MISSING_MODEL, "ollama pull no-such-model-tinycoder"],
        Fault::DataDirUnwritable => &["FAIL storage", "file.txt/data", "TINYCODER_DATA_DIR"],
        Fault::StoreCorrupt => &["FAIL store", "not a tinycoder database", "fix: move the file away or delete it"],
        Fault::IndexCorrupt => &[],
    };
    let ok = if want.is_empty() {
        !run.stdout.lines().any(|l| l.starts_with("FAIL store") || l.starts_with("FAIL storage"))
    } else {
        run.code == Some(1) && want.iter().all(|w| run.stdout.contains(w))
    };
    (!ok || run.stderr.contains("panicked")).then(|| {
        format!("{fault:?} × `tinycoder doctor`: expected {want:?}, got {:?}:\n{}{}", run.code, run.stdout, run.stderr)
    })
}

/// One fault at a time: the cells share the test bed's one model and two CPU cores.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn testbed() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(common::require_server(&common::ollama_url(), "/api/version"));
}

#[test]
fn cli_with_the_model_server_down() {
    let _g = serial();
    cli_under(Fault::ModelDown);
}

#[test]
fn cli_with_a_missing_model() {
    let _g = serial();
    testbed();
    cli_under(Fault::ModelMissing);
}

#[test]
fn cli_with_an_unwritable_data_directory() {
    let _g = serial();
    testbed();
    cli_under(Fault::DataDirUnwritable);
}

#[test]
fn cli_with_a_corrupt_store() {
    let _g = serial();
    testbed();
    cli_under(Fault::StoreCorrupt);
    // The user's file is reported, never replaced.
    let home = home(Fault::StoreCorrupt);
    let db = home.dir.path().join("data/workspaces").join(tinycoder::paths::workspace_key(&home.ws));
    let db = db.join(tinycoder::store::DB_FILE_NAME);
    let before = std::fs::read(&db).expect("the garbage file");
    tinycoder(&home, &["memory", "list"]);
    assert_eq!(std::fs::read(&db).expect("still there"), before, "the store file was changed");
}

#[test]
fn cli_with_a_corrupt_index() {
    let _g = serial();
    testbed();
    cli_under(Fault::IndexCorrupt);
}

#[test]
fn bench_without_task_folders_says_what_a_task_folder_is() {
    let home = home(Fault::ModelDown);
    let run = tinycoder(&home, &["bench", "fix", "no-such-folder"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.starts_with("error: no task folders in no-such-folder") && run.stderr.contains("task.toml"));
}

/// Waits for a `window/showMessage` whose text contains `marker`; returns its text.
fn message_with(client: &mut lsp_client::LspClient, marker: &str, timeout: Duration) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let found = client.inbox.iter().position(|m| {
            m["method"] == "window/showMessage" && m["params"]["message"].as_str().is_some_and(|t| t.contains(marker))
        });
        if let Some(i) = found {
            let m = client.inbox.remove(i).expect("present");
            return m["params"]["message"].as_str().map(str::to_string);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        if let Some(msg) = client.recv(left.min(Duration::from_millis(200))) {
            client.inbox.push_back(msg);
        }
    }
}

fn says_all(fault: Fault, text: &str) -> bool {
    fault.needles().iter().all(|n| text.contains(n)) && text.matches(fault.needles()[0]).count() == 1
}

/// The language server under `fault`: flows that need the broken part answer with
/// (or show) the one message; the rest keep working; the server stays up.
fn lsp_under(fault: Fault) {
    let dirs = tempfile::tempdir().expect("tempdir");
    let root = dirs.path().to_path_buf();
    common::copy_fixture("python-failing", &root);
    let mut env = Vec::new();
    model_env(&mut env, &common::ollama_url(), common::AGENT_MODEL);
    break_it(fault, &root, &root, &mut env);
    let mut client = lsp_client::LspClient::spawn_with_env(dirs, &env);
    client.initialize(&["utf-16"], json!({}));
    let store_fault = matches!(fault, Fault::DataDirUnwritable | Fault::StoreCorrupt);
    if store_fault {
        let text = message_with(&mut client, fault.needles()[0], lsp_client::ANSWER_TIMEOUT)
            .unwrap_or_else(|| panic!("{fault:?}: no start-up message about the store"));
        assert!(says_all(fault, &text) && text.contains("still work"), "{fault:?}: {text}");
    }
    let uri = lsp_client::file_uri(&root, "calc/__init__.py");
    let text = std::fs::read_to_string(root.join("calc/__init__.py")).expect("fixture");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    // The keystroke path never depends on the broken part.
    let symbols =
        client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).expect("symbols");
    assert!(symbols.as_array().is_some_and(|s| !s.is_empty()), "{fault:?}: {symbols}");
    let range = json!({"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}});
    let diagnostic = json!({"range": range, "message": "assert 3 == 4", "source": "tinycoder"});
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": [diagnostic]}}),
        )
        .expect("code actions");
    let fix_args = actions[0]["command"]["arguments"].clone();
    assert!(fix_args.is_array(), "{fault:?}: {actions}");

    if fault != Fault::IndexCorrupt {
        // A flow that starts in the background answers at once, then shows the one message.
        let started =
            client.request("workspace/executeCommand", json!({"command": "tinycoder.fix", "arguments": fix_args}));
        assert!(started.is_ok_and(|v: Value| v["taskId"].is_string()), "{fault:?}: tinycoder.fix did not start");
        let text = message_with(&mut client, "could not start", Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{fault:?}: tinycoder.fix showed no message"));
        assert!(says_all(fault, &text), "{fault:?}: tinycoder.fix: {text}");
        let asked = client.request(
            "workspace/executeCommand",
            json!({"command": "tinycoder.ask", "arguments": ["what does add return"]}),
        );
        assert!(asked.is_ok(), "{fault:?}: {asked:?}");
        let text = message_with(&mut client, "no answer", Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{fault:?}: tinycoder.ask showed no message"));
        assert!(says_all(fault, &text), "{fault:?}: tinycoder.ask: {text}");
    }
    // Requests that need the store answer with its error; the others work.
    for command in ["tinycoder.tasks", "tinycoder.memory.search"] {
        let answer = client.request("workspace/executeCommand", json!({"command": command, "arguments": ["add"]}));
        match (store_fault, answer) {
            (true, Err(e)) => {
                assert!(says_all(fault, e["message"].as_str().unwrap_or("")), "{fault:?}: {command}: {e}")
            }
            (false, Ok(v)) => assert!(v.is_array(), "{fault:?}: {command}: {v}"),
            (_, other) => panic!("{fault:?}: {command}: {other:?}"),
        }
    }
    let indexed = client.request("workspace/executeCommand", json!({"command": "tinycoder.index", "arguments": []}));
    assert!(indexed.as_ref().is_ok_and(|v| v["total_files"].as_u64() >= Some(4)), "{fault:?}: {indexed:?}");
    // The chat needs the model only.
    let chat = client.request("tinycoder/chat", json!({"message": "hi", "textDocument": {"uri": uri}}));
    match (fault, chat) {
        (Fault::ModelDown | Fault::ModelMissing, Err(e)) => {
            assert!(says_all(fault, e["message"].as_str().unwrap_or("")), "{fault:?}: chat: {e}")
        }
        (Fault::ModelDown | Fault::ModelMissing, Ok(v)) => panic!("{fault:?}: chat answered {v}"),
        (_, answer) => assert!(answer.is_ok_and(|v| v["sessionId"].is_string()), "{fault:?}: chat failed"),
    }
    assert!(client.is_running(), "{fault:?}: the server went down");
    assert!(client.shutdown_and_exit().success(), "{fault:?}");
}

#[test]
fn lsp_with_the_model_server_down() {
    let _g = serial();
    lsp_under(Fault::ModelDown);
}

#[test]
fn lsp_with_a_missing_model() {
    let _g = serial();
    testbed();
    lsp_under(Fault::ModelMissing);
}

#[test]
fn lsp_with_an_unwritable_data_directory() {
    let _g = serial();
    testbed();
    lsp_under(Fault::DataDirUnwritable);
}

#[test]
fn lsp_with_a_corrupt_store() {
    let _g = serial();
    testbed();
    lsp_under(Fault::StoreCorrupt);
}

#[test]
fn lsp_with_a_corrupt_index() {
    let _g = serial();
    testbed();
    lsp_under(Fault::IndexCorrupt);
}
