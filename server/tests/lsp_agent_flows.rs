//! Every agent flow through a real LSP client over stdio, with a REAL coder
//! model (Qwen2.5-Coder 0.5B on the test bed's llama-server): `tinycoder.edit`,
//! `tinycoder.document`, `tinycoder.generateTests`, `tinycoder.explain`,
//! `tinycoder.ask`, the refusal (and recompute) of a patch whose buffer changed,
//! "Apply / Show diff / Discard" for a client without change annotations, the
//! edit presets offered when no instruction is given, and cancelling a fix.
//! Checks are on what the editor receives: the edits apply, the result parses
//! and the project's tests say what they said before (plus the new tests).

mod common;
mod lsp_client;

use lsp_client::{apply_text_edits, file_uri, LspClient};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one flow may take on a busy 2-core machine (a hang guard, not a timing assertion).
const FLOW_DEADLINE: Duration = Duration::from_secs(1500);

use common::{DISCOUNT, DISCOUNT_TESTS};

/// A server over a copy of the agent fixture (plus an undocumented module and its test file).
fn setup(edit_previews: bool, show_document: bool) -> LspClient {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    common::copy_fixture("agent-python", &root);
    std::fs::write(root.join("shop/discount.py"), DISCOUNT).unwrap();
    std::fs::write(root.join("tests/test_discount.py"), DISCOUNT_TESTS).unwrap();
    client.replies.insert("workspace/applyEdit".into(), json!({"applied": true}));
    client.replies.insert("window/showDocument".into(), json!({"success": true}));
    let mut options = common::agent_init_options(&common::openai_url());
    options["runtime"] = json!({"max_retries": 2, "critic": false});
    client.initialize_full(&["utf-16"], options, edit_previews, show_document);
    client
}

fn open(client: &mut LspClient, rel: &str) -> String {
    let text = std::fs::read_to_string(client.root().join(rel)).unwrap();
    let uri = file_uri(client.root(), rel);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    uri
}

fn exec(client: &mut LspClient, command: &str, args: Value) -> Value {
    client
        .request("workspace/executeCommand", json!({"command": command, "arguments": [args]}))
        .unwrap_or_else(|e| panic!("{command} failed: {e:#}"))
}

fn range(l0: u32, l1: u32) -> Value {
    json!({"start": {"line": l0, "character": 0}, "end": {"line": l1, "character": 0}})
}

/// The next message matching `want`; a warning or error message fails the test
/// (unless `want` takes it), and so does the deadline.
fn wait_for(client: &mut LspClient, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + FLOW_DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "timed out waiting for {what}");
        let Some(m) = client.recv(left.min(Duration::from_secs(5))) else { continue };
        if want(&m) {
            return m;
        }
        if m["method"] == "window/showMessage" && m["params"]["type"].as_u64() <= Some(2) {
            panic!("waiting for {what}, the server said: {m:#}");
        }
        client.inbox.push_back(m);
    }
}

fn is_request(m: &Value, method: &str) -> bool {
    m["method"] == method && m.get("id").is_some()
}

/// The patched text of `rel` from a versioned, annotated `workspace/applyEdit`; checks the review parts.
fn annotated_patch(edit: &Value, root: &Path, rel: &str, text: &str, version: Option<i64>) -> String {
    let annotation = &edit["changeAnnotations"]["tinycoder.patch"];
    assert_eq!(annotation["needsConfirmation"], true, "{edit:#}");
    assert!(annotation["label"].as_str().unwrap().starts_with("tinycoder"), "{edit:#}");
    let changes = edit["documentChanges"].as_array().expect("versioned document changes");
    let doc = changes.iter().find(|d| d["textDocument"]["uri"] == file_uri(root, rel)).expect("an edit of the file");
    assert_eq!(doc["textDocument"]["version"].as_i64(), version, "{edit:#}");
    let edits = doc["edits"].as_array().unwrap();
    assert!(edits.iter().all(|e| e["annotationId"] == "tinycoder.patch"), "{edit:#}");
    apply_text_edits(text, edits, "utf-16")
}

/// Runs python3 with `code` (reading the file at argv[1]); true on exit 0.
fn python_check(code: &str, file: &Path) -> bool {
    std::process::Command::new("python3")
        .args(["-c", code])
        .arg(file)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs pytest in `root`, past the client's `cache/` and `data/` (see `common::pytest_passes`).
fn pytest(root: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=cache", "--ignore=data"])
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(root)
        .output()
        .expect("pytest runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn flow(test: fn(&mut LspClient), edit_previews: bool, show_document: bool) {
    let url = common::openai_url();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(common::require_server(&url, "/health"));
    let mut client = setup(edit_previews, show_document);
    test(&mut client);
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

#[test]
fn edit_with_an_instruction_proposes_a_tested_patch() {
    flow(
        |client| {
            let root = client.root().to_path_buf();
            let uri = open(client, "shop/prices.py");
            let before = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
            let started = exec(
                client,
                "tinycoder.edit",
                json!({"uri": uri, "range": range(3, 6), "instruction": "Rename the parameter `quantity` to `count`."}),
            );
            assert!(started["taskId"].is_string() && started["jobId"].is_string(), "{started:#}");
            let m = wait_for(client, "workspace/applyEdit", |m| is_request(m, "workspace/applyEdit"));
            let after = annotated_patch(&m["params"]["edit"], &root, "shop/prices.py", &before, Some(1));
            assert_ne!(after, before);
            std::fs::write(root.join("shop/prices.py"), &after).unwrap();
            assert!(python_check("import ast,sys; ast.parse(open(sys.argv[1]).read())", &root.join("shop/prices.py")));
            let (ok, out) = pytest(&root, &["tests/test_prices.py::test_item_price"]);
            assert!(ok, "the edit keeps item_price working:\n{after}\n{out}");
        },
        true,
        true,
    );
}

#[test]
fn document_adds_a_docstring_and_changes_no_code() {
    flow(
        |client| {
            let root = client.root().to_path_buf();
            let uri = open(client, "shop/discount.py");
            let cursor = json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}});
            exec(client, "tinycoder.document", json!({"uri": uri, "range": cursor}));
            let m = wait_for(client, "workspace/applyEdit", |m| is_request(m, "workspace/applyEdit"));
            let after = annotated_patch(&m["params"]["edit"], &root, "shop/discount.py", DISCOUNT, Some(1));
            let file = root.join("shop/discount.py");
            std::fs::write(&file, &after).unwrap();
            // A docstring now, and the same code otherwise (the syntax trees without docstrings match).
            assert!(
                common::docstring_added_and_code_unchanged(&file, DISCOUNT),
                "a docstring and the same code:\n{after}"
            );
        },
        true,
        true,
    );
}

#[test]
fn generate_tests_adds_passing_tests_to_the_test_file() {
    flow(
        |client| {
            let root = client.root().to_path_buf();
            let uri = open(client, "shop/discount.py");
            let cursor = json!({"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 4}});
            exec(client, "tinycoder.generateTests", json!({"uri": uri, "range": cursor}));
            let m = wait_for(client, "workspace/applyEdit", |m| is_request(m, "workspace/applyEdit"));
            let after = annotated_patch(&m["params"]["edit"], &root, "tests/test_discount.py", DISCOUNT_TESTS, None);
            assert!(
                after.starts_with(DISCOUNT_TESTS.trim_end())
                    || after.contains("def test_no_discount():\n    assert discounted(50, 0) == 50"),
                "the existing test stays:\n{after}"
            );
            let added = after.matches("def test_").count();
            assert!(added >= 2, "at least one new test:\n{after}");
            std::fs::write(root.join("tests/test_discount.py"), &after).unwrap();
            let (ok, out) = pytest(&root, &["tests/test_discount.py"]);
            assert!(ok, "the new tests pass:\n{after}\n{out}");
        },
        true,
        true,
    );
}

/// Waits for the answer document; checks that its reply streamed and that nothing was written.
fn answer_document(client: &mut LspClient, started: &Value) -> String {
    let session = started["sessionId"].as_str().expect("a session id").to_string();
    let m = wait_for(client, "window/showDocument", |m| {
        assert!(!is_request(m, "workspace/applyEdit"), "an answer never edits: {m:#}");
        is_request(m, "window/showDocument")
    });
    let streamed: String = client
        .inbox
        .iter()
        .filter(|m| m["method"] == "tinycoder/chatDelta" && m["params"]["sessionId"] == session.as_str())
        .map(|m| m["params"]["delta"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(!streamed.trim().is_empty(), "the reply streams as tinycoder/chatDelta");
    let uri = m["params"]["uri"].as_str().unwrap();
    let path = uri.strip_prefix("file://").expect("a file URI");
    assert!(path.ends_with(".md"), "{uri}");
    let doc = std::fs::read_to_string(path).expect("the answer document exists");
    assert!(doc.contains(streamed.trim()), "the document holds the streamed reply:\n{doc}");
    doc
}

#[test]
fn explain_opens_a_markdown_answer_and_writes_nothing() {
    flow(
        |client| {
            let uri = open(client, "shop/prices.py");
            let cursor = json!({"start": {"line": 11, "character": 4}, "end": {"line": 11, "character": 4}});
            let started = exec(client, "tinycoder.explain", json!({"uri": uri, "range": cursor}));
            let doc = answer_document(client, &started);
            assert!(doc.starts_with("# Explanation of shop/prices.py:9-14\n"), "{doc}");
            assert!(doc.contains("## Sources") && doc.contains("(file://"), "{doc}");
        },
        true,
        true,
    );
}

#[test]
fn ask_answers_from_a_file_that_is_not_open() {
    flow(
        |client| {
            let started = exec(
                client,
                "tinycoder.ask",
                json!({"question": "What does discounted do when percent is above 100?"}),
            );
            let doc = answer_document(client, &started);
            assert!(doc.contains("[shop/discount.py:1-4"), "the answer cites the unopened file:\n{doc}");
        },
        true,
        true,
    );
}

#[test]
fn a_patch_for_a_buffer_typed_in_meanwhile_is_refused_then_recomputed() {
    flow(
        |client| {
            let root = client.root().to_path_buf();
            let uri = open(client, "shop/prices.py");
            let before = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
            client.reply_queue.insert("window/showMessageRequest".into(), [json!({"title": "Recompute"})].into());
            exec(
                client,
                "tinycoder.edit",
                json!({"uri": uri, "range": range(3, 6), "instruction": "Rename the parameter `quantity` to `count`."}),
            );
            // The user types while the task runs: a comment at the end.
            let end = before.lines().count() as u32;
            let typed = format!("{before}# typed meanwhile\n");
            client.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
                    {"range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}}, "text": "# typed meanwhile\n"}
                ]}),
            );
            let refusal = wait_for(client, "the stale refusal", |m| {
                assert!(!is_request(m, "workspace/applyEdit"), "a stale patch is never sent: {m:#}");
                is_request(m, "window/showMessageRequest")
            });
            let message = refusal["params"]["message"].as_str().unwrap();
            assert!(message.contains("shop/prices.py changed while the patch was made"), "{message}");
            let titles: Vec<&str> =
                refusal["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
            assert_eq!(titles, ["Recompute", "Discard"]);
            // "Recompute" (queued above) runs the edit again on the new text.
            let m = wait_for(client, "the recomputed workspace/applyEdit", |m| is_request(m, "workspace/applyEdit"));
            let after = annotated_patch(&m["params"]["edit"], &root, "shop/prices.py", &typed, Some(2));
            assert!(after.contains("# typed meanwhile"), "the typing survives:\n{after}");
        },
        true,
        true,
    );
}

#[test]
fn without_annotation_support_the_user_sees_the_diff_then_applies() {
    flow(
        |client| {
            let root = client.root().to_path_buf();
            let uri = open(client, "shop/prices.py");
            let before = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
            client.reply_queue.insert(
                "window/showMessageRequest".into(),
                [json!({"title": "Show diff"}), json!({"title": "Apply"})].into(),
            );
            exec(
                client,
                "tinycoder.edit",
                json!({"uri": uri, "range": range(3, 6), "instruction": "Rename the parameter `quantity` to `count`."}),
            );
            let ask = wait_for(client, "Apply / Show diff / Discard", |m| is_request(m, "window/showMessageRequest"));
            let titles: Vec<&str> =
                ask["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
            assert_eq!(titles, ["Apply", "Show diff", "Discard"]);
            let shown = wait_for(client, "the diff document", |m| is_request(m, "window/showDocument"));
            let diff_path = shown["params"]["uri"].as_str().unwrap().strip_prefix("file://").unwrap().to_string();
            let diff = std::fs::read_to_string(&diff_path).unwrap();
            assert!(diff.contains("--- a/shop/prices.py") || diff.contains("shop/prices.py"), "{diff}");
            assert!(diff.contains("@@"), "a unified diff:\n{diff}");
            wait_for(client, "the question again", |m| is_request(m, "window/showMessageRequest"));
            let m = wait_for(client, "workspace/applyEdit", |m| is_request(m, "workspace/applyEdit"));
            let edit = &m["params"]["edit"];
            assert!(edit.get("documentChanges").is_none() && edit.get("changeAnnotations").is_none(), "{edit:#}");
            let edits = edit["changes"][&uri].as_array().expect("plain changes for the file");
            let after = apply_text_edits(&before, edits, "utf-16");
            let (lines_removed, lines_added): (Vec<&str>, Vec<&str>) = (
                diff.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).collect(),
                diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).collect(),
            );
            for l in lines_added {
                assert!(after.contains(&l[1..]), "the applied edit is the diff shown ({l}):\n{after}");
            }
            assert!(!lines_removed.is_empty() || after != before);
        },
        false,
        true,
    );
}

#[test]
fn cancelling_a_fix_ends_its_progress_marks_the_task_cancelled_and_proposes_nothing() {
    let mut client = setup(true, true);
    let root = client.root().to_path_buf();
    let before = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
    let (_, started) = client.start_test_quick_fix("tests/test_prices.py");
    let (job, task) = (started["jobId"].clone(), started["taskId"].as_str().unwrap().to_string());
    // Once the task reports what it is doing, the user cancels it (the editor's progress button).
    let progress_of = |m: &Value, kind: &str| {
        m["method"] == "$/progress" && m["params"]["token"] == job && m["params"]["value"]["kind"] == kind
    };
    wait_for(&mut client, "a progress report of the fix", |m| progress_of(m, "report"));
    let cancelled = exec(&mut client, "tinycoder.cancel", job.clone());
    assert_eq!(cancelled["cancelled"], json!(true), "{cancelled:#}");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut ended = false;
    let mut status = String::new();
    while Instant::now() < deadline && !(ended && status == "cancelled") {
        if let Some(m) = client.recv(Duration::from_millis(500)) {
            assert!(!is_request(&m, "workspace/applyEdit"), "a cancelled fix proposed a patch: {m:#}");
            ended |= progress_of(&m, "end");
            continue;
        }
        let tasks = exec(&mut client, "tinycoder.tasks", json!({"limit": 5}));
        let this = tasks.as_array().unwrap().iter().find(|t| t["task_id"] == task.as_str()).cloned();
        status = this.and_then(|t| t["status"].as_str().map(str::to_string)).unwrap_or_default();
    }
    assert!(ended, "the fix's progress ended");
    assert_eq!(status, "cancelled", "the task is recorded as cancelled");
    // Nothing arrives later either, and the file is as it was.
    let quiet_until = Instant::now() + Duration::from_secs(5);
    while let Some(m) = client.recv(quiet_until.saturating_duration_since(Instant::now())) {
        assert!(!is_request(&m, "workspace/applyEdit"), "a cancelled fix proposed a patch: {m:#}");
    }
    assert_eq!(std::fs::read_to_string(root.join("shop/prices.py")).unwrap(), before);
    assert!(client.is_running());
}

#[test]
fn edit_without_an_instruction_offers_the_presets_and_starts_the_chosen_one() {
    let mut client = setup(true, true);
    let uri = open(&mut client, "shop/discount.py");
    let chosen = "Make the names clearer";
    client.replies.insert("window/showMessageRequest".into(), json!({"title": chosen}));
    let answer = exec(&mut client, "tinycoder.edit", json!({"uri": uri, "range": range(0, 4)}));
    assert_eq!(answer, json!({"asking": "instruction"}));
    // The question may have come (and been answered) while the command's answer was awaited.
    let is_question = |m: &Value| is_request(m, "window/showMessageRequest");
    let asked = match client.inbox.iter().find(|m| is_question(m)).cloned() {
        Some(m) => m,
        None => wait_for(&mut client, "the question with the presets", is_question),
    };
    let titles: Vec<&str> =
        asked["params"]["actions"].as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
    let presets =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../prompts/edit_presets.md")).unwrap();
    let expected: Vec<&str> = presets.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    assert_eq!(titles, expected, "every preset of prompts/edit_presets.md is offered");
    assert!(asked["params"]["message"].as_str().unwrap().contains("shop/discount.py:1-4"), "{asked:#}");
    // The chosen preset starts an edit task with that instruction (cancelled here: the patch is not the point).
    let is_begin = |m: &Value| m["method"] == "$/progress" && m["params"]["value"]["title"] == "tinycoder: edit";
    let begun = match client.inbox.iter().find(|m| is_begin(m)).cloned() {
        Some(m) => m,
        None => wait_for(&mut client, "the edit's progress", is_begin),
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let inputs = loop {
        let tasks = exec(&mut client, "tinycoder.tasks", json!({"limit": 5}));
        let inputs: Vec<String> =
            tasks.as_array().unwrap().iter().filter_map(|t| t["input"].as_str().map(str::to_string)).collect();
        if !inputs.is_empty() || Instant::now() > deadline {
            break inputs;
        }
        if let Some(m) = client.recv(Duration::from_millis(300)) {
            client.inbox.push_back(m);
        }
    };
    exec(&mut client, "tinycoder.cancel", begun["params"]["token"].clone());
    assert!(inputs.iter().any(|i| i.contains(chosen)), "the task runs the chosen preset: {inputs:?}");
    assert!(client.is_running());
}
