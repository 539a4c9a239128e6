//! Two tinycoder processes on one folder: the language server holds the
//! workspace index, and a CLI command run at the same time opens the next
//! copy of it instead of failing. Real processes over stdio, real tantivy.
//! Run: cargo test --release --test index_copies

mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs the CLI on the server's workspace with the server's cache, data and config.
fn cli(root: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .arg("--workspace")
        .arg(root)
        .args(args)
        .env("TINYCODER_CACHE_DIR", root.join("cache"))
        .env("TINYCODER_DATA_DIR", root.join("data"))
        .env("TINYCODER_CONFIG", root.join("no-user-config.toml"))
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .output()
        .expect("run tinycoder");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The index folders of the one workspace under `cache/workspaces/`.
fn index_dirs(root: &Path) -> Vec<String> {
    let ws = std::fs::read_dir(root.join("cache/workspaces")).expect("workspaces").flatten().next().expect("one");
    let mut names: Vec<String> = std::fs::read_dir(ws.path())
        .expect("workspace cache")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_cli_command_beside_a_running_server_uses_its_own_copy_of_the_index() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    std::fs::write(root.join("zoo.py"), "def giraffe_unique_handler(neck):\n    return neck * 2\n").unwrap();
    std::fs::write(root.join("farm.py"), "def cow_other_helper():\n    return 1\n").unwrap();
    client.initialize(&["utf-8"], json!({}));
    // The server has opened (and so locked) the index once its first indexing ends.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let msg = client.next_before(deadline, "the end of the first indexing");
        if msg["method"] == "$/progress" && msg["params"]["value"]["kind"] == "end" {
            break;
        }
    }
    assert_eq!(index_dirs(&root), ["index"]);

    // With a single copy allowed, the CLI cannot share the server's: it says why.
    let (ok, _, err) = cli(&root, &["search", "giraffe_unique_handler"], &[("TINYCODER_INDEX__MAX_COPIES", "1")]);
    assert!(!ok, "the index was opened twice");
    assert!(err.contains("in use by another tinycoder") && err.contains("index.max_copies"), "{err}");

    // By default it opens the next copy, indexes it and answers.
    let (ok, out, err) = cli(&root, &["search", "giraffe_unique_handler", "--json"], &[]);
    assert!(ok, "search failed beside a running server: {err}");
    let hits: Vec<Value> = serde_json::from_str(&out).expect("json");
    assert_eq!(hits[0]["path"], "zoo.py", "{out}");
    assert!(err.contains("keeps its own copy"), "the fallback is not logged: {err}");
    assert_eq!(index_dirs(&root), ["index", "index-2"]);

    // The copy is reused, warm, by the next command; the server still searches its own.
    let (ok, out, err) = cli(&root, &["index"], &[]);
    assert!(ok, "{err}");
    assert!(out.contains("(0 indexed, 2 unchanged"), "the second copy was not reused: {out}");
    assert_eq!(index_dirs(&root), ["index", "index-2"]);
    assert!(client.is_running());
    assert!(client.shutdown_and_exit().success());
}
