//! The strategy after repeated failure, through the runtime: `ScriptedModel`
//! (a scripted model double) and `ScriptedHuman` (a scripted stand-in for the
//! user), everything else real (pytest in the sandbox, SQLite, tantivy).

use super::scripted_model::Script;
use super::tests::{config, fix, reply, workspace_with, Workspace, CALC, CRITIC, GOOD, TESTS, WRONG};
use super::*;
use crate::config::ModelRole;
use crate::contracts::{EventType, PermissionChoice, StrategyChoice, StrategyQuestion};
use crate::sandbox::{HumanPort, PermissionRequest};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A scripted stand-in for the user: answers strategy questions from a queue
/// (an empty queue never answers) and records the questions.
pub(crate) struct ScriptedHuman {
    pub(crate) answers: Mutex<Vec<StrategyChoice>>,
    pub(crate) asked: Mutex<Vec<StrategyQuestion>>,
    /// Answers to step confirmations (an empty queue answers no), and the steps asked about.
    pub(crate) step_answers: Mutex<Vec<bool>>,
    pub(crate) steps_asked: Mutex<Vec<String>>,
    /// Questions being asked right now, and the most at once.
    pub(crate) open: std::sync::atomic::AtomicUsize,
    pub(crate) most_open: std::sync::atomic::AtomicUsize,
}

impl ScriptedHuman {
    /// A user who will answer `answers`, in order.
    pub(crate) fn answering(answers: Vec<StrategyChoice>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers),
            asked: Mutex::new(Vec::new()),
            step_answers: Mutex::new(Vec::new()),
            steps_asked: Mutex::new(Vec::new()),
            open: Default::default(),
            most_open: Default::default(),
        })
    }
}

#[async_trait::async_trait]
impl HumanPort for ScriptedHuman {
    async fn ask_permission(&self, _request: &PermissionRequest) -> PermissionChoice {
        PermissionChoice::Deny
    }

    async fn confirm_step(&self, question: &crate::sandbox::StepConfirmation) -> bool {
        self.steps_asked.lock().unwrap().push(question.step_id.clone());
        let mut a = self.step_answers.lock().unwrap();
        !a.is_empty() && a.remove(0)
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        use std::sync::atomic::Ordering::SeqCst;
        let open = self.open.fetch_add(1, SeqCst) + 1;
        self.most_open.fetch_max(open, SeqCst);
        // A person takes a moment to answer: a second question asked meanwhile would overlap.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        self.open.fetch_sub(1, SeqCst);
        self.asked.lock().unwrap().push(question.clone());
        let next = {
            let mut a = self.answers.lock().unwrap();
            (!a.is_empty()).then(|| a.remove(0))
        };
        match next {
            Some(c) => c,
            None => std::future::pending().await,
        }
    }
}

fn with_human(script: Vec<Script>, answers: Vec<StrategyChoice>) -> (Workspace, Arc<ScriptedHuman>) {
    let mut ws = workspace_with(&[("calc.py", CALC), ("test_calc.py", TESTS)], config(), script, None);
    let human = ScriptedHuman::answering(answers);
    ws.env.human = human.clone();
    (ws, human)
}

async fn run(ws: &Workspace, cancel: CancellationToken) -> (String, TaskReport) {
    let id = uuid::Uuid::new_v4().to_string();
    let report = Runtime::new(ws.env.clone()).run(&id, fix(), TaskOptions::default(), cancel).await.expect("runs");
    (id, report)
}

async fn strategy_events(ws: &Workspace, task: &str) -> Vec<serde_json::Value> {
    let events = ws.env.bus.catch_up(task, 0).await.expect("events");
    events
        .into_iter()
        .filter(|e| {
            matches!(e.event_type, EventType::PermissionRequested | EventType::PermissionResolved)
                && e.payload["question"] == "strategy"
        })
        .map(|e| e.payload)
        .collect()
}

#[tokio::test]
async fn a_hint_after_failed_attempts_reaches_the_coder_and_the_fix_passes() {
    let hint = StrategyChoice::Hint { text: "add means plus: use a + b".into() };
    let (ws, human) = with_human(vec![reply(WRONG), reply(WRONG), reply(GOOD), reply(CRITIC)], vec![hint.clone()]);
    let (id, report) = run(&ws, CancellationToken::new()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert_eq!(report.attempts, 3, "the hint bought one attempt after max_retries = 1");
    let asked = human.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].attempts, asked[0].file.as_str()), (2, "calc.py"));
    assert!(asked[0].best_diff.as_deref().is_some_and(|d| d.contains("a * b")), "{:?}", asked[0].best_diff);
    let coder = ws.model.requests(ModelRole::Coder);
    let third = coder[2].messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
    assert!(third.contains("add means plus: use a + b"), "the hint is in the prompt: {third}");
    assert!(!coder[1].messages.iter().any(|m| m.content.contains("add means plus")), "not before it was given");
    let ev = strategy_events(&ws, &id).await;
    assert_eq!(ev.len(), 2, "{ev:#?}");
    assert_eq!(ev[1]["choice"], serde_json::to_value(&hint).unwrap());
}

#[tokio::test]
async fn stopping_shows_the_best_attempt_and_proposes_nothing() {
    let (ws, _) = with_human(vec![reply(WRONG), reply("no code at all")], vec![StrategyChoice::Stop]);
    let (id, report) = run(&ws, CancellationToken::new()).await;
    assert_eq!(report.status, ReportStatus::Failed, "{report:#?}");
    assert!(report.summary.contains("as you chose"), "{}", report.summary);
    assert!(report.diff.contains("a * b"), "the best attempt is shown: {}", report.diff);
    assert!(!report.has_patch(), "nothing is offered to apply");
    assert_eq!(ws.model.requests(ModelRole::Coder).len(), 2, "no attempt after stopping");
    assert_eq!(strategy_events(&ws, &id).await[1]["choice"]["choice"], "stop");
    assert_eq!(std::fs::read_to_string(ws.root.join("calc.py")).unwrap(), CALC);
}

#[tokio::test]
async fn another_approach_drops_the_failed_replies_and_names_them() {
    let (ws, _) =
        with_human(vec![reply(WRONG), reply(WRONG), reply(GOOD), reply(CRITIC)], vec![StrategyChoice::OtherApproach]);
    let (_, report) = run(&ws, CancellationToken::new()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    let coder = ws.model.requests(ModelRole::Coder);
    let third = &coder[2].messages;
    assert!(
        third.iter().all(|m| m.role != crate::llm::ChatRole::Assistant),
        "no failed reply is shown again: {third:#?}"
    );
    let text = third.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
    assert!(text.contains("different approach") && text.contains("still fail"), "{text}");
}

#[tokio::test]
async fn more_context_and_another_approach_each_buy_an_attempt_and_rounds_are_bounded() {
    // Two rounds (the default): more context, then another approach; then the task fails.
    let answers = vec![StrategyChoice::MoreContext, StrategyChoice::OtherApproach];
    let (ws, human) = with_human(vec![reply(WRONG), reply(WRONG), reply(WRONG), reply(WRONG)], answers);
    let (id, report) = run(&ws, CancellationToken::new()).await;
    assert_eq!(report.status, ReportStatus::Failed, "{report:#?}");
    assert_eq!(report.attempts, 4);
    assert_eq!(human.asked.lock().unwrap().len(), 2, "asked at most runtime.strategy_rounds times");
    let events = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let contexts = events.iter().filter(|e| e.event_type == EventType::ContextBuilt).count();
    assert_eq!(contexts, 4, "one context per attempt, two of them bought by the answers");
}

#[tokio::test]
async fn a_cancel_while_the_question_is_open_ends_the_task() {
    let (ws, human) = with_human(vec![reply(WRONG), reply(WRONG)], vec![]);
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    let watched = human.clone();
    tokio::spawn(async move {
        while watched.asked.lock().unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        }
        later.cancel();
    });
    // The question stays open (the scripted user never answers) until the cancel.
    let (_, report) = tokio::time::timeout(std::time::Duration::from_secs(60), run(&ws, cancel)).await.expect("ends");
    assert_eq!(report.status, ReportStatus::Cancelled, "{report:#?}");
    assert_eq!(human.asked.lock().unwrap().len(), 1);
}
