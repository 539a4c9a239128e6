//! The shell tool end to end: policy → stored decision → human → sandboxed run.
//! `ScriptedHuman` is a test double for the person answering (named as such).

#[path = "sandbox_common.rs"]
mod common;

use std::sync::Mutex;
use tinycoder::contracts::{StrategyChoice, StrategyQuestion};
use tinycoder::sandbox::{
    HumanPort, PermissionChoice, PermissionPolicy, PermissionRequest, PermissionStore, ShadowWorkspace, ShellOutcome,
    ShellTool, SqlitePermissionStore,
};
use tokio_util::sync::CancellationToken;

/// A scripted stand-in for the user: answers from a queue and records the questions.
struct ScriptedHuman {
    answers: Mutex<Vec<PermissionChoice>>,
    asked: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl HumanPort for ScriptedHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        self.asked.lock().unwrap().push(request.command.clone());
        self.answers.lock().unwrap().remove(0)
    }

    async fn choose_strategy(&self, _question: &StrategyQuestion) -> StrategyChoice {
        StrategyChoice::Stop
    }

    async fn confirm_step(&self, _question: &tinycoder::sandbox::StepConfirmation) -> bool {
        false
    }
}

/// The workspace store's permission decisions, in `data`.
fn decisions(data: &std::path::Path) -> SqlitePermissionStore {
    SqlitePermissionStore::new(tinycoder::store::Store::open(&data.join("db.sqlite3"), Default::default()).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn decisions_gate_runs_and_persist() {
    common::hermetic_dirs();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "keep me").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = common::default_config();
    let policy = PermissionPolicy::new(&config.permissions, ws.path()).unwrap();
    let store = decisions(data.path());
    use PermissionChoice::*;
    let human = ScriptedHuman {
        answers: Mutex::new(vec![AllowOnce, AllowOnce, Deny, AskAlways, AllowAlways]),
        asked: Mutex::new(vec![]),
    };
    let tool = ShellTool { policy: &policy, store: &store, human: &human, sandbox: &config.sandbox };
    let cancel = CancellationToken::new();
    let shadow = ShadowWorkspace::create(ws.path(), cache.path(), "shell").unwrap();

    // Not dangerous: runs without a question, inside the shadow.
    let out = tool.run("cat a.txt && pwd", &shadow, &cancel).await.unwrap();
    let ShellOutcome::Ran { output, decision: None, .. } = out else { panic!("{out:?}") };
    assert!(output.stdout.text.contains("keep me") && output.stdout.text.contains("shadows"), "{output:?}");
    assert!(human.asked.lock().unwrap().is_empty());

    // Dangerous, allowed once: runs (in the shadow only), and is asked again next time.
    let out = tool.run("rm a.txt", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Ran { decision: Some(AllowOnce), .. }), "{out:?}");
    assert!(!shadow.path().join("a.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "keep me");
    let out = tool.run("rm a.txt", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Ran { .. }));
    assert_eq!(human.asked.lock().unwrap().len(), 2);

    // Deny persists: the next identical command is refused without a question.
    let out = tool.run("git push --force", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Denied { from_store: false, .. }));
    let out = tool.run("git push --force", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Denied { from_store: true, .. }));
    assert_eq!(human.asked.lock().unwrap().len(), 3);

    // Ask-always stays stored, so an allow-always answer later does not silence it.
    let out = tool.run("chmod 600 a.txt", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Denied { .. }), "ask-always does not run this time");
    let _ = tool.run("chmod 600 a.txt", &shadow, &cancel).await.unwrap();
    assert_eq!(human.asked.lock().unwrap().len(), 5);
    assert_eq!(store.get("chmod 600 a.txt").unwrap().unwrap().decision, AskAlways);
    assert_eq!(store.get("git push --force").unwrap().unwrap().decision, Deny);
    assert!(store.get("rm a.txt").unwrap().is_none(), "allow-once is not stored");
}

#[tokio::test]
async fn an_unproven_command_asks_then_runs_in_the_sandbox_or_is_refused_unattended() {
    common::hermetic_dirs();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "keep me").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = common::default_config();
    let policy = PermissionPolicy::new(&config.permissions, ws.path()).unwrap();
    let store = decisions(data.path());
    let cancel = CancellationToken::new();
    let shadow = ShadowWorkspace::create(ws.path(), cache.path(), "shell").unwrap();
    // Harmless, but not provably so: a variable outside `safe_variables` is set for the command.
    let command = "GREETING=hi sh -c 'echo $GREETING; pwd'";
    assert_eq!(policy.check(command).effect.as_deref(), Some("unproven"));

    let human = ScriptedHuman { answers: Mutex::new(vec![PermissionChoice::AllowOnce]), asked: Mutex::new(vec![]) };
    let tool = ShellTool { policy: &policy, store: &store, human: &human, sandbox: &config.sandbox };
    let out = tool.run(command, &shadow, &cancel).await.unwrap();
    let ShellOutcome::Ran { output, decision: Some(PermissionChoice::AllowOnce), .. } = out else { panic!("{out:?}") };
    assert!(output.stdout.text.contains("hi") && output.stdout.text.contains("shadows"), "{output:?}");
    assert_eq!(human.asked.lock().unwrap().len(), 1);

    // Nobody to ask (a terminal-less run with `permissions.non_interactive = "deny"`): refused.
    let nobody = tinycoder::sandbox::NonInteractiveHuman::from_config("deny");
    let tool = ShellTool { policy: &policy, store: &store, human: &nobody, sandbox: &config.sandbox };
    let out = tool.run(command, &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Denied { from_store: false, .. }), "{out:?}");
    let out = tool.run("cat a.txt", &shadow, &cancel).await.unwrap();
    assert!(matches!(out, ShellOutcome::Ran { decision: None, .. }), "a proven command still runs unasked: {out:?}");
}
