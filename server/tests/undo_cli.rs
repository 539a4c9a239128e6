//! `tinycoder undo` driven as a user would, on real files: patches are written
//! through the same library call `tinycoder fix --yes` writes with
//! (`undo::apply_patch`, which records the undo point), then the binary undoes
//! them newest first, refuses a file changed since, and says when nothing is left.

mod common;

use common::CliHome;
use serde_json::Value;
use std::path::Path;
use tinycoder::edits::{FileChange, Patch};
use tinycoder::paths::WorkspacePaths;
use tinycoder::undo::{apply_patch, PatchInfo};

const CALC_BEFORE: &str = "def add(a, b):\r\n    return a - b\r\n";
const CALC_AFTER: &str = "def add(a, b):\r\n    return a + b\r\n";
const NOTES_BEFORE: &str = "first\nlast line without newline";
const NOTES_AFTER: &str = "first\nsecond\nlast line without newline";
const BLOB: &[u8] = b"\x00\xff\xfe binary \xc3\x28\n";

fn home() -> CliHome {
    let h = CliHome::new();
    std::fs::write(h.ws.join("calc.py"), CALC_BEFORE).unwrap();
    std::fs::write(h.ws.join("notes.txt"), NOTES_BEFORE).unwrap();
    std::fs::write(h.ws.join("blob.bin"), BLOB).unwrap();
    h
}

/// The workspace's directories as the binary computes them under `TINYCODER_DATA_DIR`.
fn paths(h: &CliHome) -> WorkspacePaths {
    let key = tinycoder::paths::workspace_key(&h.ws);
    WorkspacePaths {
        root: h.ws.clone(),
        cache_dir: h.data.join("cache").join(&key),
        data_dir: h.data.join("workspaces").join(&key),
    }
}

/// Writes `changes` as `tinycoder fix --yes` does, recording the undo point.
fn applied(h: &CliHome, summary: &str, changes: &[(&str, &str, &str)]) {
    let patch = Patch {
        changes: changes
            .iter()
            .map(|(p, b, a)| FileChange { path: p.to_string(), before: b.to_string(), after: a.to_string() })
            .collect(),
    };
    let config = tinycoder::config::LoadedConfig::load(&Default::default()).expect("defaults").config;
    let info = PatchInfo { summary: summary.into(), task_id: Some("t-1".into()) };
    apply_patch(&paths(h), &config.undo, &patch, &info).expect("the patch is written");
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn tinycoder(h: &CliHome, args: &[&str]) -> Run {
    let out = h.command(args).output().expect("run tinycoder");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn bytes(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn undo_restores_the_last_patch_then_the_one_before_then_says_nothing_is_left() {
    let h = home();
    applied(&h, "patched calc.py in 1 attempt(s)", &[("calc.py", CALC_BEFORE, CALC_AFTER)]);
    applied(
        &h,
        "patched notes.txt, pkg/new.py in 2 attempt(s)",
        &[("notes.txt", NOTES_BEFORE, NOTES_AFTER), ("pkg/new.py", "", "X = 1\n")],
    );
    assert_eq!(bytes(&h.ws, "pkg/new.py"), b"X = 1\n");

    // No terminal and no --yes: refused, nothing written.
    let r = tinycoder(&h, &["undo"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("tinycoder undo --yes"), "{}", r.stderr);
    assert_eq!(bytes(&h.ws, "notes.txt"), NOTES_AFTER.as_bytes());

    // The newest patch: its text file and the file it created.
    let r = tinycoder(&h, &["undo", "--yes"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "restore notes.txt\ndelete pkg/new.py\n", "{}", r.stderr);
    assert!(r.stderr.contains("patched notes.txt, pkg/new.py"), "{}", r.stderr);
    assert!(r.stderr.contains("1 older patch(es) can still be undone"), "{}", r.stderr);
    assert_eq!(bytes(&h.ws, "notes.txt"), NOTES_BEFORE.as_bytes(), "no newline added at the end");
    assert!(!h.ws.join("pkg/new.py").exists(), "the created file is deleted");
    assert_eq!(bytes(&h.ws, "calc.py"), CALC_AFTER.as_bytes(), "the older patch is still there");

    // The one before, as JSON.
    let r = tinycoder(&h, &["undo", "--yes", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    assert_eq!(v["undone"], true, "{v:#}");
    assert_eq!(v["files"], serde_json::json!([{"path": "calc.py", "action": "restore"}]), "{v:#}");
    assert_eq!(v["remaining"], 0, "{v:#}");
    assert_eq!(bytes(&h.ws, "calc.py"), CALC_BEFORE.as_bytes(), "CRLF restored byte for byte");
    assert_eq!(bytes(&h.ws, "blob.bin"), BLOB, "a file outside the patches is untouched");

    let r = tinycoder(&h, &["undo", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("nothing to undo"), "{}", r.stderr);
    let r = tinycoder(&h, &["undo", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&r.stdout).unwrap()["reason"], "nothing to undo");
}

#[test]
fn a_file_changed_since_the_patch_is_named_and_nothing_is_written() {
    let h = home();
    applied(
        &h,
        "patched calc.py, notes.txt in 1 attempt(s)",
        &[("calc.py", CALC_BEFORE, CALC_AFTER), ("notes.txt", NOTES_BEFORE, NOTES_AFTER)],
    );
    let typed = "first\nsecond\nmy own line\nlast line without newline";
    std::fs::write(h.ws.join("notes.txt"), typed).unwrap();

    let r = tinycoder(&h, &["undo", "--yes"]);
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one error line: {}", r.stderr);
    assert!(lines[0].starts_with("error: notes.txt changed since tinycoder applied the patch"), "{}", r.stderr);
    assert!(lines[0].contains("nothing was restored") && lines[0].contains("tinycoder undo --forget"), "{}", r.stderr);
    assert_eq!(bytes(&h.ws, "calc.py"), CALC_AFTER.as_bytes(), "nothing written");
    assert_eq!(bytes(&h.ws, "notes.txt"), typed.as_bytes(), "nothing written");

    // Keeping the files: the point is dropped, no file touched.
    let r = tinycoder(&h, &["undo", "--forget"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(bytes(&h.ws, "calc.py"), CALC_AFTER.as_bytes());
    assert!(tinycoder(&h, &["undo", "--yes"]).stderr.contains("nothing to undo"));
}
