//! A fix of a rustc diagnostic with `ScriptedModel` (a scripted model double)
//! and everything else real: cargo check and cargo test in the sandbox. A patch
//! the checker still objects to is fed back and never proposed.

use super::tests::{config, reply, workspace_with, CRITIC};
use super::*;
use tokio_util::sync::CancellationToken;

const CARGO: &str = "[package]\nname = \"ledger\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB: &str = "pub fn total(entries: &[i64]) -> i64 {\n    let mut total = 0;\n    for e in entries {\n        total += e;\n    }\n    totl\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn sums() {\n        assert_eq!(super::total(&[1, 2]), 3);\n    }\n}\n";
const WRONG: &str = "```rust\npub fn total(entries: &[i64]) -> i64 {\n    let mut total = 0;\n    for e in entries {\n        total += e;\n    }\n    totall\n}\n```\n";
const GOOD: &str = "```rust\npub fn total(entries: &[i64]) -> i64 {\n    let mut total = 0;\n    for e in entries {\n        total += e;\n    }\n    total\n}\n```\n";

fn request(source: &str) -> AgentRequest {
    AgentRequest::Fix {
        target: Some(Location::line("src/lib.rs", 6)),
        message: Some("cannot find value `totl` in this scope".into()),
        from_tests: false,
        origin: Some(DiagnosticOrigin { source: source.into(), code: "E0425".into() }),
    }
}

async fn run(source: &str, script: Vec<super::scripted_model::Script>) -> TaskReport {
    let ws = workspace_with(&[("Cargo.toml", CARGO), ("src/lib.rs", LIB)], config(), script, None);
    Runtime::new(ws.env.clone())
        .run("t", request(source), TaskOptions::default(), CancellationToken::new())
        .await
        .expect("the runtime runs")
}

#[tokio::test]
async fn a_patch_that_cargo_check_rejects_is_fed_back_and_the_next_one_is_proven() {
    let report = run("rustc", vec![reply(WRONG), reply(GOOD), reply(CRITIC)]).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert_eq!(report.attempts, 2, "{report:#?}");
    assert!(
        report.attempt_log[0].contains("adds 1 error(s)") && report.attempt_log[0].contains("totall"),
        "{:?}",
        report.attempt_log
    );
    let check = report.diagnostic_check.clone().unwrap_or_default();
    assert!(check.contains("no longer reports E0425 and reports no new error"), "{check}");
    assert!(report.diff.contains("+    total\n"), "{}", report.diff);
}

#[tokio::test]
async fn a_diagnostic_without_a_checker_is_proposed_as_not_re_checked() {
    let report = run("made-up-lint", vec![reply(GOOD), reply(CRITIC)]).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    let check = report.diagnostic_check.clone().unwrap_or_default();
    assert!(check.contains("not re-checked: no checker for source `made-up-lint`"), "{check}");
}
