//! Commands wired to core flows, through a real client: `tinycoder.runTests`
//! runs real pytest in the sandbox and publishes/clears diagnostics;
//! `tinycoder.tasks` and `tinycoder.memory.*` answer from the real SQLite store.

mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

/// The diagnostics published for `uri` so far, waiting a little for the first one:
/// notifications and the command's response travel separately and may cross.
fn diagnostics_for(client: &mut LspClient, uri: &str) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        for msg in client.inbox.drain(..) {
            if msg["method"] == "textDocument/publishDiagnostics" && msg["params"]["uri"] == uri {
                out.push(msg["params"]["diagnostics"].as_array().cloned().unwrap_or_default());
            }
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if !out.is_empty() || left.is_zero() {
            return out;
        }
        if let Some(msg) = client.recv(left.min(std::time::Duration::from_millis(200))) {
            client.inbox.push_back(msg);
        }
    }
}

#[test]
fn run_tests_publishes_failures_and_a_green_run_clears_them() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    let test_src = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
    std::fs::write(root.join("test_calc.py"), test_src).unwrap();
    client.initialize(&["utf-16"], json!({}));

    let red = client.request("workspace/executeCommand", json!({"command": "tinycoder.runTests", "arguments": []}));
    let red = red.expect("runTests answers");
    assert_eq!(red["passed"], json!(false), "{red:#}");
    assert!(red["command"].as_str().unwrap().contains("pytest"), "{red:#}");
    let test_uri = file_uri(&root, "test_calc.py");
    let published = diagnostics_for(&mut client, &test_uri);
    let last = published.last().unwrap_or_else(|| panic!("diagnostics published for {test_uri}: {red:#}"));
    assert_eq!(last.len(), 1, "{last:#?}");
    assert_eq!(last[0]["source"], "tinycoder");
    assert_eq!(last[0]["range"]["start"]["line"], 4, "the failing assert is on line 5: {last:#?}");
    assert!(last[0]["message"].as_str().unwrap().contains("test_add"), "{last:#?}");

    // Fix the function in an unsaved buffer only: the sandbox sees the buffer, the disk keeps the bug.
    let calc_uri = file_uri(&root, "calc.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": calc_uri, "languageId": "python", "version": 1, "text": "def add(a, b):\n    return a + b\n"}}),
    );
    let green = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.runTests", "arguments": []}))
        .expect("runTests answers");
    assert_eq!(green["passed"], json!(true), "{green:#}");
    let cleared = diagnostics_for(&mut client, &test_uri);
    assert_eq!(cleared.last().map(Vec::len), Some(0), "a green run clears the diagnostics: {cleared:#?}");
    assert_eq!(std::fs::read_to_string(root.join("calc.py")).unwrap(), "def add(a, b):\n    return a - b\n");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

/// One task and one memory item in the real workspace store of `root`, before the server starts.
async fn seed_store(root: &std::path::Path) -> (String, String) {
    let data_dir = root.join("data").join("workspaces").join(tinycoder::paths::workspace_key(root));
    let store = tinycoder::store::Store::open(&data_dir.join(tinycoder::store::DB_FILE_NAME), Default::default())
        .expect("open the workspace store");
    let bus = tinycoder::store::EventBus::new(store.clone());
    let (task, _) = bus
        .create_task(tinycoder::store::NewTask {
            task_id: None,
            session_id: None,
            input: "rename parse_config to load_config".into(),
            context: json!({}),
        })
        .await
        .expect("create a task");
    let memory = tinycoder::memory::MemoryStore::new(store);
    let item = memory
        .insert(tinycoder::memory::NewMemory {
            text: "TypeError: unsupported operand type(s) for +: 'int' and 'str'\nFix: convert with int() first."
                .into(),
            kind: tinycoder::contracts::MemoryKind::ErrorFix,
            source: tinycoder::contracts::MemorySource::Tool,
            weight: 0.8,
            task_id: None,
            session_id: None,
            metadata: json!({}),
        })
        .await
        .expect("insert a memory item");
    (task.task_id, item.id)
}

#[test]
fn tasks_and_memory_commands_answer_from_the_store() {
    let mut client = LspClient::spawn();
    let (task_id, memory_id) = tokio::runtime::Runtime::new().unwrap().block_on(seed_store(client.root()));
    client.replies.insert("window/showMessageRequest".into(), json!({"title": "Keep"}));
    client.initialize(&["utf-16"], json!({}));
    let tasks = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.tasks", "arguments": [{"limit": 5}]}))
        .expect("tasks answers");
    let tasks = tasks.as_array().expect("a list");
    assert_eq!(tasks.len(), 1, "{tasks:#?}");
    assert_eq!(tasks[0]["task_id"], json!(task_id));
    assert_eq!(tasks[0]["input"], json!("rename parse_config to load_config"));
    let found = client
        .request(
            "workspace/executeCommand",
            json!({"command": "tinycoder.memory.search", "arguments": ["TypeError int str"]}),
        )
        .expect("memory search answers");
    let found = found.as_array().expect("a list");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].to_string().contains(&memory_id), "{found:#?}");
    let unrelated = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.memory.search", "arguments": ["kubernetes"]}))
        .expect("memory search answers");
    assert_eq!(unrelated, json!([]));
    let deleted = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.memory.delete", "arguments": [memory_id]}))
        .expect("memory delete answers");
    assert_eq!(deleted["deleted"], json!(true));
    let again = client
        .request(
            "workspace/executeCommand",
            json!({"command": "tinycoder.memory.search", "arguments": ["TypeError int str"]}),
        )
        .expect("memory search answers");
    assert_eq!(again, json!([]), "deleted for good");
    let deleted = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.memory.delete", "arguments": ["nope"]}))
        .expect("memory delete answers");
    assert_eq!(deleted["deleted"], json!(false));
    let err = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.memory.search", "arguments": []}))
        .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("needs a query"), "{err}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

#[test]
fn index_command_indexes_the_workspace_under_progress() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    std::fs::write(root.join("shapes.py"), "class Circle:\n    def area(self):\n        return 3.14\n").unwrap();
    std::fs::write(root.join("lib.rs"), "pub fn parse_config_file() {}\n").unwrap();
    client.initialize(&["utf-16"], json!({}));
    let summary = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.index", "arguments": []}))
        .expect("index answers");
    // Only the two source files: tinycoder's own cache and data dirs inside the root are never indexed.
    let table: Vec<String> = std::fs::read_dir(root.join("cache").join("workspaces"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("index").join("files.json")).ok())
        .collect();
    assert_eq!(summary["total_files"], json!(2), "{summary:#} {table:?}");
    assert_eq!(summary["files"], json!(2), "{summary:#}");
    let progress_titles: Vec<String> = client
        .inbox
        .iter()
        .filter(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin")
        .map(|m| m["params"]["value"]["title"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(progress_titles.iter().any(|t| t.contains("indexing")), "{progress_titles:?}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

/// A task left unfinished by an earlier run (a real task in the real workspace store).
async fn leave_an_unfinished_task(root: &std::path::Path) -> String {
    let data_dir = root.join("data").join("workspaces").join(tinycoder::paths::workspace_key(root));
    let store = tinycoder::store::Store::open(&data_dir.join(tinycoder::store::DB_FILE_NAME), Default::default())
        .expect("open the workspace store");
    let bus = tinycoder::store::EventBus::new(store);
    let (task, _) = bus
        .create_task(tinycoder::store::NewTask {
            task_id: None,
            session_id: None,
            input: "fix the failing test in calc.py".into(),
            context: json!({}),
        })
        .await
        .expect("create a task");
    task.task_id
}

#[test]
fn unfinished_tasks_are_put_to_the_user_at_start_up() {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    let task_id = tokio::runtime::Runtime::new().unwrap().block_on(leave_an_unfinished_task(&root));
    client.replies.insert("window/showMessageRequest".into(), json!({"title": "Mark as failed"}));
    client.initialize(&["utf-16"], json!({}));
    // The question arrives on its own; wait for it (its answer goes out automatically).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let asked = loop {
        if let Some(m) = client.inbox.iter().find(|m| m["method"] == "window/showMessageRequest") {
            break m.clone();
        }
        assert!(std::time::Instant::now() < deadline, "the server never asked about the unfinished task");
        if let Some(msg) = client.recv(std::time::Duration::from_millis(200)) {
            client.inbox.push_back(msg);
        }
    };
    assert!(asked["params"]["message"].as_str().unwrap().contains("fix the failing test in calc.py"), "{asked}");
    // The answer ends the task as failed, with the reason, in the store.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let tasks = client
            .request("workspace/executeCommand", json!({"command": "tinycoder.tasks", "arguments": [{"limit": 5}]}))
            .expect("tasks answers");
        let task = tasks.as_array().unwrap().iter().find(|t| t["task_id"] == json!(task_id)).cloned().unwrap();
        if task["status"] == "failed" {
            assert!(task["failure_reason"].as_str().unwrap().contains("marked as failed by the user"), "{task}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the task was not marked as failed: {task}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

/// Waits until a message satisfying `pick` arrives (it stays in the inbox); panics after 60 s naming `what`.
fn wait_message(client: &mut LspClient, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    client
        .wait_matching(std::time::Duration::from_secs(60), pick)
        .unwrap_or_else(|| panic!("no {what}: {:#?}", client.inbox))
}

#[test]
fn an_added_workspace_folder_gets_its_own_settings_index_and_test_runs_until_it_is_removed() {
    let mut client = LspClient::spawn();
    let first = client.root().to_path_buf();
    std::fs::write(first.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        first.join("test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    .unwrap();
    let second = tempfile::tempdir().unwrap();
    let second = second.path().canonicalize().unwrap();
    std::fs::write(second.join("shop.py"), "def total(prices):\n    return sum(prices) - 1\n").unwrap();
    std::fs::write(
        second.join("test_shop.py"),
        "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
    )
    .unwrap();
    // Its own settings: a plain one that applies, and a loosening that needs the user's trust.
    std::fs::write(
        second.join(".tinycoder.toml"),
        "[sandbox]\noutput_tail_bytes = 300\ntest_command = \"python3 -m pytest -q\"\nwall_timeout_s = 100000\n",
    )
    .unwrap();
    client.initialize(&["utf-16"], json!({}));
    let second_uri = format!("file://{}", second.display());
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": second_uri, "name": "shop"}], "removed": []}}),
    );
    let ignored = wait_message(&mut client, "log of the added folder's ignored loosening", |m| {
        m["method"] == "window/logMessage"
            && m["params"]["message"].as_str().is_some_and(|t| t.contains("sandbox.wall_timeout_s"))
    });
    assert!(ignored["params"]["message"].as_str().unwrap().contains("ignored"), "{ignored:#}");

    // Its tests run in its own folder, with its own settings.
    let test_shop = file_uri(&second, "test_shop.py");
    let run = |client: &mut LspClient, args: Value| {
        client.request("workspace/executeCommand", json!({"command": "tinycoder.runTests", "arguments": args}))
    };
    let red = run(&mut client, json!([{"uri": test_shop}])).expect("runTests answers for the added folder");
    assert_eq!(red["passed"], json!(false), "{red:#}");
    assert_eq!(red["command"], json!("python3 -m pytest -q"), "the folder's own test command: {red:#}");
    let tail = red["outputTail"].as_str().unwrap();
    assert!(tail.len() <= 300 && tail.contains("test_total"), "the folder's own output_tail_bytes applies: {tail}");
    let published = diagnostics_for(&mut client, &test_shop);
    assert_eq!(published.last().map(Vec::len), Some(1), "the added folder's failure is published: {published:#?}");

    // The first folder's run is green and leaves the other folder's diagnostic alone.
    let green = run(&mut client, json!([])).expect("runTests answers for the first folder");
    assert_eq!(green["passed"], json!(true), "{green:#}");
    assert!(green["outputTail"].as_str().unwrap().len() > 300, "the first folder keeps the default tail: {green:#}");
    let after = diagnostics_for(&mut client, &test_shop);
    assert!(after.is_empty(), "another folder's run does not clear this folder's diagnostics: {after:#?}");

    // Each folder has its own index.
    let index = |client: &mut LspClient, args: Value| {
        client.request("workspace/executeCommand", json!({"command": "tinycoder.index", "arguments": args}))
    };
    let own = index(&mut client, json!([{"uri": test_shop}])).expect("index answers for the added folder");
    assert_eq!(own["root"], json!(second.display().to_string()), "{own:#}");
    assert_eq!(own["total_files"], json!(2), "shop.py and test_shop.py: {own:#}");
    let all = index(&mut client, json!([])).expect("index answers for every folder");
    let roots: Vec<&str> = all["folders"].as_array().unwrap().iter().filter_map(|f| f["root"].as_str()).collect();
    assert_eq!(roots, [first.display().to_string(), second.display().to_string()], "{all:#}");
    let key = tinycoder::paths::workspace_key(&second);
    assert!(first.join("cache").join("workspaces").join(key).is_dir(), "the added folder's index is its own");

    // Once removed, its files are outside the workspace, with a message that says so.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": second_uri, "name": "shop"}]}}),
    );
    let gone = run(&mut client, json!([{"uri": test_shop}])).expect_err("a removed folder's file is refused");
    let said = gone["message"].as_str().unwrap();
    assert!(said.contains("outside the workspace folders") && said.contains(&first.display().to_string()), "{said}");
    assert!(run(&mut client, json!([])).expect("the first folder still works")["passed"] == json!(true));
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
