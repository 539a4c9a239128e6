//! `tinycoder fix --check` with a REAL coder model (Qwen2.5-Coder 0.5B on the
//! test bed's llama-server): cargo check in the sandbox finds the rustc error,
//! the fix is proven by cargo check again, written with --yes, and the crate's
//! tests pass on the real tree.

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
