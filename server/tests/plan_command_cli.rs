//! `tinycoder run --plan FILE --json` with a command step, driven as a user
//! would without a terminal: a dangerous command is refused by
//! `permissions.non_interactive` (default "deny") and never runs. The plan has
//! no edit step, so no model is needed: the backend points at a closed port.
//! A step marked `requires_confirmation` runs only when the policy allows.

mod common;

use common::CliHome;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

const COMMAND: &str = "touch MARKER && rm -rf build";

fn home() -> CliHome {
    let h = CliHome::new();
    std::fs::create_dir_all(h.ws.join("build")).expect("ws");
    std::fs::write(h.ws.join("build/out.txt"), "built\n").unwrap();
    std::fs::write(h.ws.join("notes.md"), "# notes\n").unwrap();
    h
}

fn write_plan(path: &Path, steps: Value) {
    std::fs::write(path, serde_json::to_string_pretty(&serde_json::json!({"steps": steps})).unwrap()).unwrap();
}

fn run_plan(h: &CliHome, plan: &Path) -> (Option<i32>, String, String) {
    run_plan_under(h, plan, None)
}

/// [`run_plan`] under the non-interactive policy `policy` (default: the built-in one).
fn run_plan_under(h: &CliHome, plan: &Path, policy: Option<&str>) -> (Option<i32>, String, String) {
    let mut cmd = h.command(&["run", "clean the build folder", "--plan"]);
    cmd.arg(plan)
        .arg("--json")
        .stdin(Stdio::null())
        // Nothing listens here: the run must not need a model.
        .env("TINYCODER_BACKEND__URL", "http://127.0.0.1:9")
        .env_remove("TINYCODER_PERMISSIONS__NON_INTERACTIVE");
    if let Some(p) = policy {
        cmd.env("TINYCODER_PERMISSIONS__NON_INTERACTIVE", p);
    }
    let out = cmd.output().expect("run tinycoder");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_dangerous_command_step_is_denied_without_a_terminal_and_never_runs() {
    let h = home();
    let plan = h.data.join("plan.json");
    std::fs::create_dir_all(&h.data).unwrap();
    write_plan(
        &plan,
        serde_json::json!([
            {"id": "clean", "kind": "tool", "action_type": "command", "file": ".", "command": COMMAND,
             "description": "remove the build folder", "depends_on": []},
            {"id": "list", "kind": "tool", "action_type": "command", "file": "", "command": "ls",
             "description": "list what is left", "depends_on": ["clean"]}
        ]),
    );
    let (code, stdout, stderr) = run_plan(&h, &plan);
    assert_eq!(code, Some(1), "a failed request exits 1\nstdout: {stdout}\nstderr: {stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["status"], "failed", "{report:#}");
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!((steps[0]["state"].as_str(), steps[1]["state"].as_str()), (Some("failed"), Some("skipped")));
    assert_eq!(steps[0]["command"], COMMAND);
    let why = steps[0]["summary"].as_str().unwrap_or_default();
    assert!(why.starts_with(&format!("the user denied `{COMMAND}`, which destroys data (rule `rm`")), "{why}");
    let reason = report["failure_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("the user denied") && reason.contains(COMMAND), "{reason}");
    assert!(!h.ws.join("MARKER").exists(), "the command never ran");
    assert!(h.ws.join("build/out.txt").exists(), "the user's files are untouched");
    // The policy answered, not a person: nothing is remembered, so a terminal asks next time.
    let listed = h.command(&["permissions", "list", "--json"]).output().expect("permissions list");
    let stored: Value = serde_json::from_slice(&listed.stdout).unwrap_or(Value::Null);
    assert_eq!(stored, serde_json::json!([]), "no decision stored: {}", String::from_utf8_lossy(&listed.stdout));
}

#[test]
fn a_plan_whose_command_needs_nothing_dangerous_runs_without_a_model() {
    let h = home();
    let plan = h.data.join("plan.json");
    std::fs::create_dir_all(&h.data).unwrap();
    write_plan(
        &plan,
        serde_json::json!([{"id": "1", "kind": "tool", "action_type": "command", "file": ".",
                            "command": "cat notes.md", "description": "show the notes", "depends_on": []}]),
    );
    let (code, stdout, stderr) = run_plan(&h, &plan);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["steps"][0]["state"], "done", "{report:#}\n{stderr}");
    assert_eq!(report["steps"][0]["summary"], "`cat notes.md` exited with code 0");
    assert_eq!(report["status"], "nothing_to_fix", "a command changes no file: {report:#}");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_step_marked_for_confirmation_runs_only_when_the_policy_or_the_user_agrees() {
    let h = home();
    let plan = h.data.join("plan.json");
    std::fs::create_dir_all(&h.data).unwrap();
    write_plan(
        &plan,
        serde_json::json!([{"id": "1", "kind": "tool", "action_type": "command", "file": ".",
                            "command": "cat notes.md", "description": "show the notes", "depends_on": [],
                            "requires_confirmation": true}]),
    );
    // No terminal and the default policy ("deny"): the step is not confirmed and does not run.
    let (code, stdout, stderr) = run_plan(&h, &plan);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["steps"][0]["state"], "failed", "{report:#}");
    assert_eq!(report["steps"][0]["summary"], "not run: the user did not confirm this step");
    assert_eq!(code, Some(1));
    // A policy that allows: the same plan runs.
    let (code, stdout, stderr) = run_plan_under(&h, &plan, Some("allow"));
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["steps"][0]["state"], "done", "{report:#}");
    assert_eq!(code, Some(0));
}
