//! `tinycoder fix --check` with a REAL coder model (Qwen2.5-Coder 0.5B on the
//! test bed's llama-server): cargo check in the sandbox finds the rustc error,
//! the fix is proven by cargo check again, written with --yes, and the crate's
//! tests pass on the real tree. `tinycoder fix FILE --all` with the same model and
//! the test bed's ruff: two errors of one file fixed one after the other, one diff
//! written.

mod common;

use serde_json::Value;
use std::process::Command;

#[tokio::test(flavor = "multi_thread")]
async fn fix_check_takes_the_first_checker_error_and_proves_the_fix_with_the_checker() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("ledger");
    common::copy_fixture("rust-diagnostic", &project);
    let out = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_tinycoder"))
            .args(["fix", "--check", "--yes", "--json"])
            .current_dir(&project)
            .envs(common::agent_env(&url, home.path()))
            .output()
            .expect("run tinycoder")
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fixing the first: src/lib.rs:9: E0425 cannot find value `totl`"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json prints one object ({e}); stderr:\n{stderr}"));
    assert_eq!(report["status"], "patched", "{report:#}\n{stderr}");
    let check = report["diagnostic_check"].as_str().unwrap_or_default();
    assert!(check.contains("no longer reports E0425 and reports no new error"), "{report:#}");
    assert_eq!(report["applied"], true, "{report:#}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!std::fs::read_to_string(project.join("src/lib.rs")).unwrap().contains("totl\n"));

    // Now clean: --check finds nothing to fix and says so.
    let again = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .args(["fix", "--check"])
        .current_dir(&project)
        .envs(common::agent_env(&url, home.path()))
        .output()
        .expect("run tinycoder");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no error reported (cargo)"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fix_all_fixes_each_ruff_error_of_the_file_in_turn_and_writes_one_diff() {
    let Some(ruff) = common::test_ruff() else { return };
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("shop");
    std::fs::create_dir_all(&project).unwrap();
    let original = common::misspelt_pricing_module();
    std::fs::write(project.join("pricing.py"), &original).unwrap();
    let tinycoder = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tinycoder"))
            .args(args)
            .current_dir(&project)
            .envs(common::agent_env(&url, home.path()))
            .envs(common::ruff_env(&ruff))
            .output()
            .expect("run tinycoder")
    };
    let out = tokio::task::block_in_place(|| tinycoder(&["fix", "pricing.py", "--all", "--yes", "--json"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json prints one object ({e}); stderr:\n{stderr}"));
    let outcomes: Vec<(String, String)> = report["outcomes"]
        .as_array()
        .unwrap_or_else(|| panic!("outcomes listed: {report:#}"))
        .iter()
        .map(|o| (o["diagnostic"]["code"].as_str().unwrap().to_string(), o["outcome"].as_str().unwrap().to_string()))
        .collect();
    // Each error is taken up in turn and ends fixed or failed; the 0.5B model does not
    // fix every one every time, so what is asserted is that the run says which, and
    // that what it wrote holds exactly the fixes it reports.
    assert_eq!(outcomes.len(), 2, "both errors taken up: {report:#}\n{stderr}");
    assert!(outcomes.iter().all(|(code, o)| code == "F821" && (o == "fixed" || o == "failed")), "{report:#}");
    let fixed = outcomes.iter().filter(|(_, o)| o == "fixed").count();
    assert!(fixed >= 1, "at least one of two misspelt names fixed: {report:#}\n{stderr}");
    assert!(stderr.contains("fixing pricing.py:6: F821 Undefined name `rat`"), "{stderr}");
    assert!(stderr.contains("fixing pricing.py:71: F821 Undefined name `percnt`"), "{stderr}");
    assert_eq!(report["status"], "patched", "{report:#}");
    assert_eq!(report["applied"], true, "{report:#}");
    let remaining = report["remaining"].as_array().map(Vec::len).unwrap_or(usize::MAX);
    assert_eq!(remaining, 2 - fixed, "what failed is still reported: {report:#}");
    assert_eq!(report["diff"].as_str().unwrap().matches("--- a/pricing.py").count(), 1, "one diff: {report:#}");
    assert_eq!(out.status.code(), Some(if fixed == 2 { 0 } else { 1 }), "{stderr}");
    let check = Command::new(&ruff)
        .args(["check", "--no-cache", "--output-format=json", "pricing.py"])
        .current_dir(&project)
        .output()
        .unwrap();
    let left: Vec<Value> = serde_json::from_slice(&check.stdout).unwrap_or_default();
    assert_eq!(left.len(), 2 - fixed, "the written file holds the fixes the report lists: {check:?}");

    // The fixes were written as one patch: one undo restores the original text.
    let undo = tinycoder(&["undo", "--yes", "--json"]);
    assert!(undo.status.success(), "{undo:?}");
    assert_eq!(std::fs::read_to_string(project.join("pricing.py")).unwrap(), original);
}
