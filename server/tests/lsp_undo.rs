//! `tinycoder.undo` and `tinycoder.commit` through a real LSP client over stdio.
//! The patch is written and recorded through the library call the CLI writes
//! with (no model needed); the server then sends its undo as a
//! `workspace/applyEdit`, checks the editor's buffer (not the disk) for changes
//! made since, consumes the point only when the editor applied the undo, and
//! commits exactly the patch's files with real git.

mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tinycoder::edits::{FileChange, Patch};
use tinycoder::paths::WorkspacePaths;

const CALC_BEFORE: &str = "def add(a, b):\r\n    return a - b\r\n\r\n\r\ndef sub(a, b):\r\n    return a - b\r\n";
const CALC_AFTER: &str = "def add(a, b):\r\n    return a + b\r\n\r\n\r\ndef sub(a, b):\r\n    return a - b\r\n";
const NEW_FILE: &str = "def mul(a, b):\n    return a * b\n";

/// Writes and records a patch of `calc.py` that also creates `extra/mul.py`, as `tinycoder fix --yes` does.
fn apply_the_patch(root: &Path) {
    let key = tinycoder::paths::workspace_key(root);
    let paths = WorkspacePaths {
        root: root.to_path_buf(),
        cache_dir: root.join("cache/workspaces").join(&key),
        data_dir: root.join("data/workspaces").join(&key),
    };
    let patch = Patch {
        changes: vec![
            FileChange { path: "calc.py".into(), before: CALC_BEFORE.into(), after: CALC_AFTER.into() },
            FileChange { path: "extra/mul.py".into(), before: String::new(), after: NEW_FILE.into() },
        ],
    };
    let config = tinycoder::config::LoadedConfig::load(&Default::default()).expect("defaults").config;
    let info = tinycoder::undo::PatchInfo { summary: "patched calc.py in 1 attempt(s)".into(), task_id: None };
    tinycoder::undo::apply_patch(&paths, &config.undo, &patch, &info).expect("the patch is written");
}

fn execute(client: &mut LspClient, command: &str, args: Value) -> Result<Value, Value> {
    client.request("workspace/executeCommand", json!({"command": command, "arguments": args}))
}

/// The next `workspace/applyEdit` the server sends (within `timeout`), taken out of the inbox.
fn next_apply_edit(client: &mut LspClient, timeout: Duration) -> Option<Value> {
    let found = client.wait_for("workspace/applyEdit", timeout)?;
    client.inbox.retain(|m| m != &found);
    Some(found["params"]["edit"].clone())
}

/// The next `window/showMessage` whose text contains `needle`.
fn message_with(client: &mut LspClient, needle: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(m) = client
            .inbox
            .iter()
            .find(|m| m["method"] == "window/showMessage" && m["params"]["message"].as_str().unwrap().contains(needle))
        {
            return m["params"]["message"].as_str().unwrap().to_string();
        }
        assert!(std::time::Instant::now() < deadline, "no message with {needle:?}: {:#?}", client.inbox);
        if let Some(m) = client.recv(Duration::from_millis(200)) {
            client.inbox.push_back(m);
        }
    }
}

#[test]
fn undo_goes_to_the_editor_as_an_edit_and_is_consumed_only_once_applied() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    std::fs::write(root.join("calc.py"), CALC_BEFORE).unwrap();
    apply_the_patch(&root);
    client.initialize(&["utf-16"], json!({}));

    // The editor shows the patched file, then the user types in it: undo refuses and sends nothing.
    let calc_uri = file_uri(&root, "calc.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": calc_uri, "languageId": "python", "version": 4, "text": CALC_AFTER}}),
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": calc_uri, "version": 5},
               "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# mine\r\n"}]}),
    );
    let err = execute(&mut client, "tinycoder.undo", json!([])).unwrap_err();
    let text = err["message"].as_str().unwrap();
    assert!(text.contains("calc.py changed since tinycoder applied the patch"), "{err}");
    assert!(next_apply_edit(&mut client, Duration::from_millis(500)).is_none(), "nothing sent");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": calc_uri, "version": 6}, "contentChanges": [{"text": CALC_AFTER}]}),
    );

    // The editor declines the first undo: the point stays.
    client
        .reply_queue
        .entry("workspace/applyEdit".into())
        .or_default()
        .push_back(json!({"applied": false, "failureReason": "the user said no"}));
    let answer = execute(&mut client, "tinycoder.undo", json!([])).expect("undo answers");
    assert_eq!(
        answer["files"],
        json!([{"path": "calc.py", "action": "restore"}, {"path": "extra/mul.py", "action": "delete"}])
    );
    next_apply_edit(&mut client, Duration::from_secs(30)).expect("the undo is sent");
    message_with(&mut client, "the user said no");

    // Applied the second time: the restore of the open buffer (at its version) and the delete.
    client.replies.insert("workspace/applyEdit".into(), json!({"applied": true}));
    execute(&mut client, "tinycoder.undo", json!([])).expect("undo answers");
    let edit = next_apply_edit(&mut client, Duration::from_secs(30)).expect("the undo is sent again");
    let ops = edit["documentChanges"].as_array().expect("document changes");
    assert_eq!(ops.len(), 2, "{edit:#}");
    assert_eq!(ops[0]["textDocument"], json!({"uri": calc_uri, "version": 6}), "{edit:#}");
    let restored = apply_text_edits(CALC_AFTER, ops[0]["edits"].as_array().unwrap(), "utf-16");
    assert_eq!(restored, CALC_BEFORE, "the edit gives back the old text, CRLF and all");
    assert_eq!(ops[1]["kind"], "delete");
    assert_eq!(ops[1]["uri"], file_uri(&root, "extra/mul.py"));
    message_with(&mut client, "undid `patched calc.py in 1 attempt(s)`");
    assert_eq!(std::fs::read(root.join("calc.py")).unwrap(), CALC_AFTER.as_bytes(), "the server wrote no file itself");

    let again = execute(&mut client, "tinycoder.undo", json!([])).expect("undo answers");
    assert_eq!(again["undone"], false, "{again:#}");
    assert!(again["message"].as_str().unwrap().contains("nothing to undo"), "{again:#}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn commit_takes_exactly_the_patch_files() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    std::fs::write(root.join("calc.py"), CALC_BEFORE).unwrap();
    std::fs::write(root.join("README.md"), "calc\n").unwrap();
    git(&root, &["init", "--quiet"]);
    git(&root, &["config", "user.name", "Test"]);
    git(&root, &["config", "user.email", "test@example.com"]);
    git(&root, &["config", "commit.gpgsign", "false"]);
    git(&root, &["add", "calc.py", "README.md"]);
    git(&root, &["commit", "--quiet", "-m", "base"]);
    // The user's own work in progress: staged and unstaged.
    std::fs::write(root.join("README.md"), "calc, staged\n").unwrap();
    git(&root, &["add", "README.md"]);
    std::fs::write(root.join("notes.txt"), "untracked\n").unwrap();
    apply_the_patch(&root);
    client.initialize(&["utf-16"], json!({}));

    // A buffer of a patch file with unsaved text: git would commit the disk, so it refuses.
    let calc_uri = file_uri(&root, "calc.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": calc_uri, "languageId": "python", "version": 1, "text": "unsaved"}}),
    );
    let err = execute(&mut client, "tinycoder.commit", json!([])).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("calc.py has unsaved changes"), "{err}");
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": calc_uri}}));

    let made = execute(&mut client, "tinycoder.commit", json!([])).expect("commit answers");
    assert_eq!(made["commit"].as_str().unwrap(), git(&root, &["rev-parse", "HEAD"]).trim(), "{made:#}");
    let shown = git(&root, &["show", "--name-only", "--format=%s", "HEAD"]);
    assert_eq!(shown, "patched calc.py in 1 attempt(s)\n\ncalc.py\nextra/mul.py\n");
    assert_eq!(git(&root, &["diff", "--cached", "--name-only"]), "README.md\n", "the staged change stays staged");
    let status = git(&root, &["status", "--porcelain", "--", "notes.txt"]);
    assert_eq!(status, "?? notes.txt\n", "untracked files stay out");

    let err = execute(&mut client, "tinycoder.commit", json!([])).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("nothing to commit"), "{err}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

#[test]
fn commit_without_git_says_so_and_leaves_the_files() {
    let dirs = tempfile::tempdir().unwrap();
    std::fs::write(dirs.path().join("calc.py"), CALC_BEFORE).unwrap();
    apply_the_patch(dirs.path());
    let root = dirs.path().to_path_buf();
    let no_git = vec![("PATH".to_string(), root.join("no-programs-here").display().to_string())];
    let mut client = LspClient::spawn_with_env(dirs, &no_git);
    client.initialize(&["utf-16"], json!({}));
    let err = execute(&mut client, "tinycoder.commit", json!(["my message"])).unwrap_err();
    let text = err["message"].as_str().unwrap();
    assert!(text.contains("git is not installed") && text.contains("the files stay as they are"), "{err}");
    assert_eq!(std::fs::read(root.join("calc.py")).unwrap(), CALC_AFTER.as_bytes());
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
