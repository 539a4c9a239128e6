//! The CLI projections of the store, driven as a user would: `debug-task`,
//! `events --json`, `replay --json`, `memory list|search|delete`.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use tinycoder::contracts::{MemoryKind, MemorySource};
use tinycoder::memory::{MemoryStore, NewMemory};
use tinycoder::store::{Store, StoreSettings, DB_FILE_NAME};

fn tinycoder(data: &Path, workspace: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .arg("--workspace")
        .arg(workspace)
        .args(args)
        .env("TINYCODER_DATA_DIR", data)
        .env("TINYCODER_CACHE_DIR", data.join("cache"))
        .env("TINYCODER_CONFIG", data.join("no-user-config.toml"))
        .output()
        .expect("run tinycoder");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn events_and_replay_show_a_task_and_memory_commands_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, ws) = (dir.path().join("data"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).expect("ws");
    let work = dir.path().join("work");
    let work_arg = work.to_string_lossy().into_owned();
    let (ok, out, err) =
        tinycoder(&data, &ws, &["debug-task", "--task", "cli", "--steps", "3", "--work-dir", work_arg.as_str()]);
    assert!(ok, "{err}");
    let committed = out.lines().filter(|l| l.starts_with("committed ")).count();
    assert!(out.contains("outcome completed"), "{out}");

    let (ok, out, err) = tinycoder(&data, &ws, &["events", "cli", "--json"]);
    assert!(ok, "{err}");
    let events: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(events.len(), committed);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence"], Value::from(i as u64 + 1));
    }
    assert_eq!(events[0]["type"], "task_received");
    assert_eq!(events[events.len() - 1]["type"], "task_completed");

    let (ok, out, err) = tinycoder(&data, &ws, &["replay", "cli", "--json"]);
    assert!(ok, "{err}");
    let steps: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(steps.len(), committed);
    let last = &steps[steps.len() - 1]["state"];
    assert_eq!(last["status"], "completed");
    assert_eq!(last["completed_steps"], serde_json::json!(["step-1", "step-2", "step-3"]));
    assert_eq!(steps[1]["state"]["status"], "planning", "state shown step by step");

    let (ok, _, err) = tinycoder(&data, &ws, &["replay", "missing"]);
    assert!(!ok && err.contains("missing"), "{err}");

    // Memory written through the library, read and deleted through the CLI.
    let db = data.join("workspaces").join(tinycoder::paths::workspace_key(&ws)).join(DB_FILE_NAME);
    let id = {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        rt.block_on(async {
            let memory = MemoryStore::new(Store::open(&db, StoreSettings::default()).expect("open"));
            memory
                .insert(NewMemory {
                    text: "TypeError: unsupported operand type(s) for +: 'int' and 'str'\nFix: int(value)".into(),
                    kind: MemoryKind::ErrorFix,
                    source: MemorySource::Tool,
                    weight: 0.8,
                    task_id: Some("cli".into()),
                    session_id: None,
                    metadata: serde_json::json!({}),
                })
                .await
                .expect("insert")
                .id
        })
    };
    let (ok, out, err) = tinycoder(&data, &ws, &["memory", "search", "can't add int and str", "--json"]);
    assert!(ok, "{err}");
    let first: Value = serde_json::from_str(out.lines().next().expect("a result")).expect("json");
    assert_eq!(first["entry"]["id"], Value::from(id.clone()));
    let (ok, out, _) = tinycoder(&data, &ws, &["memory", "list", "--kind", "error_fix"]);
    assert!(ok && out.contains(&id), "{out}");
    let (ok, _, err) = tinycoder(&data, &ws, &["memory", "list", "--kind", "nonsense"]);
    assert!(!ok && err.contains("error_fix"), "{err}");
    let (ok, out, _) = tinycoder(&data, &ws, &["memory", "delete", &id]);
    assert!(ok && out.contains("deleted"), "{out}");
    let (ok, _, err) = tinycoder(&data, &ws, &["memory", "delete", &id]);
    assert!(!ok && err.contains("no memory item"), "{err}");
}
