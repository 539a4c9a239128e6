//! Unit tests of every runtime transition, with `ScriptedModel` (a scripted
//! model double) and everything else real: a Python project on disk, pytest in
//! the sandbox, SQLite, tantivy and tree-sitter.

use super::scripted_model::{Script, ScriptedModel};
use super::*;
use crate::config::{Config, ConfigInputs, LoadedConfig, ModelRole, PromptLibrary};
use crate::contracts::EventType;
use crate::index::WorkspaceIndex;
use crate::paths::WorkspacePaths;
use crate::store::{EventBus, Store, StoreSettings};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(super) const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
pub(super) const TESTS: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";
pub(super) const GOOD: &str = "The bug is the minus sign.\n```python\ndef add(a, b):\n    return a + b\n```\n";
pub(super) const WRONG: &str = "```python\ndef add(a, b):\n    return a * b\n```\n";
pub(super) const CRITIC: &str = r#"{"correctness": 0.9, "usefulness": 0.8, "safety": 1.0, "memory_store": true, "weight": 0.9, "explanation": "Uses addition as the test expects."}"#;

pub(super) struct Workspace {
    pub _dir: tempfile::TempDir,
    pub root: std::path::PathBuf,
    pub env: AgentEnv,
    pub model: Arc<ScriptedModel>,
}

pub(super) fn config() -> Config {
    let mut c = LoadedConfig::load(&ConfigInputs::default()).expect("defaults load").config;
    c.runtime.max_retries = 1;
    c.runtime.edit_format = "whole_symbol".into();
    // Retries with the whole prompt; the narrow line-fix attempt has its own test.
    c.runtime.focus_edit_format = String::new();
    c.index.watch = false;
    c
}

pub(super) fn workspace_with(
    files: &[(&str, &str)],
    config: Config,
    script: Vec<Script>,
    store: Option<Store>,
) -> Workspace {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let paths =
        WorkspacePaths { root: root.clone(), cache_dir: dir.path().join("cache"), data_dir: dir.path().join("data") };
    let store = store.unwrap_or_else(|| {
        Store::open(&paths.data_dir.join("tinycoder.sqlite3"), StoreSettings::default()).expect("store opens")
    });
    let index = WorkspaceIndex::open(&root, &paths.cache_dir.join("index"), &config.index).expect("index opens");
    index.index_all(|_| {}, &CancellationToken::new()).expect("index builds");
    let model = Arc::new(ScriptedModel::new(script));
    let env = AgentEnv {
        config,
        prompts: PromptLibrary::load(None).expect("prompts load"),
        model: model.clone(),
        bus: EventBus::new(store),
        index: Arc::new(index),
        paths,
        sources: Arc::new(DiskSources::new(&root)),
        human: Arc::new(crate::sandbox::NonInteractiveHuman::from_config("deny")),
    };
    Workspace { _dir: dir, root, env, model }
}

fn workspace(script: Vec<Script>) -> Workspace {
    workspace_with(&[("calc.py", CALC), ("test_calc.py", TESTS)], config(), script, None)
}

pub(super) fn fix() -> AgentRequest {
    AgentRequest::Fix { target: None, message: None, from_tests: false, origin: None }
}

pub(super) fn reply(t: &str) -> Script {
    Script::Reply(t.to_string())
}

async fn events(ws: &Workspace, task: &str) -> Vec<EventType> {
    ws.env.bus.catch_up(task, 0).await.expect("events").into_iter().map(|e| e.event_type).collect()
}

async fn run(ws: &Workspace, request: AgentRequest) -> (String, TaskReport) {
    let id = uuid::Uuid::new_v4().to_string();
    let report = Runtime::new(ws.env.clone())
        .run(&id, request, TaskOptions::default(), CancellationToken::new())
        .await
        .expect("the runtime runs");
    (id, report)
}

#[tokio::test]
async fn a_passing_patch_is_judged_remembered_and_proposed() {
    let ws = workspace(vec![reply(GOOD), reply(CRITIC)]);
    let (id, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert_eq!(report.files_changed, vec!["calc.py"]);
    assert!(report.diff.contains("+    return a + b"), "{}", report.diff);
    assert!(report.tests_after.as_ref().is_some_and(|t| t.passed));
    assert_eq!(report.model_calls, 2);
    assert_eq!(std::fs::read_to_string(ws.root.join("calc.py")).unwrap(), CALC, "the real tree is never written");
    use EventType::*;
    let kinds = events(&ws, &id).await;
    let wanted = [
        TaskReceived,
        ToolCalled,
        ToolCompleted,
        ToolCalled,
        ToolCompleted,
        ContextBuilt,
        CoderCalled,
        LlmCalled,
        LlmResultReceived,
        CoderCompleted,
        ToolCalled,
        ToolCompleted,
        CriticCalled,
        LlmCalled,
        CriticCompleted,
        MemoryWriteSuggested,
        MemoryWriteDecided,
        MemoryWritten,
        TaskCompleted,
    ];
    let without_checkpoints: Vec<EventType> =
        kinds.iter().copied().filter(|k| !matches!(k, CheckpointSaved | StatusChanged)).collect();
    assert_eq!(without_checkpoints, wanted);
    assert!(kinds.iter().filter(|k| **k == CheckpointSaved).count() >= 6, "{kinds:?}");
    // The coder saw the failing test and was pointed at the code under test.
    let coder = ws.model.requests(ModelRole::Coder);
    let prompt = &coder[0].messages[1].content;
    assert!(prompt.contains("def test_add") && prompt.contains("return a - b"), "{prompt}");
    let state = crate::store::replay_state(ws.env.bus.store(), &id).await.unwrap();
    assert_eq!(state.status, crate::contracts::TaskStatus::Completed);
}

#[tokio::test]
async fn failing_tests_are_never_proposed_and_retries_stop_at_the_limit() {
    let ws = workspace(vec![reply(WRONG), reply("I think the code is fine."), reply(GOOD)]);
    let (id, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Failed, "{report:#?}");
    assert!(report.patch.is_none() && report.diff.is_empty(), "no patch while tests fail");
    assert_eq!(report.attempts, 2, "max_retries = 1: two attempts");
    let reason = report.failure_reason.unwrap_or_default();
    assert!(reason.contains("2 tries") && reason.contains("no code block"), "{reason}");
    // The retry was told what went wrong with the first attempt.
    let coder = ws.model.requests(ModelRole::Coder);
    assert_eq!(coder.len(), 2);
    let feedback = &coder[1].messages.last().unwrap().content;
    assert!(feedback.contains("test_add") && feedback.contains("still fails"), "{feedback}");
    assert_eq!(coder[1].messages[2].content, WRONG, "the model is shown its own reply");
    assert!(coder[1].temperature.is_some_and(|t| t > coder[0].temperature.unwrap_or(0.0)), "a retry samples hotter");
    assert!(events(&ws, &id).await.contains(&EventType::TaskFailed));

    // Without retry_shows_previous_reply a retry is a fresh try: the request
    // again with what went wrong, not the model's own wrong reply to copy.
    let mut c = config();
    c.runtime.retry_shows_previous_reply = false;
    let ws = workspace_with(&[("calc.py", CALC), ("test_calc.py", TESTS)], c, vec![reply(WRONG), reply(GOOD)], None);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    let coder = ws.model.requests(ModelRole::Coder);
    assert_eq!(coder[1].messages.len(), 2, "system and one user message");
    let feedback = &coder[1].messages[1].content;
    assert!(feedback.starts_with(&coder[0].messages[1].content) && feedback.contains("still fails"), "{feedback}");
    assert!(!feedback.contains(WRONG.trim()), "the wrong reply is not shown back");
}

#[tokio::test]
async fn after_a_reply_that_changes_nothing_the_retry_is_a_fresh_try() {
    let mut c = config();
    c.runtime.max_retries = 2;
    let echo = "```python\ndef add(a, b):\n    return a - b\n```\n";
    let ws = workspace_with(
        &[("calc.py", CALC), ("test_calc.py", TESTS)],
        c,
        vec![reply(echo), reply(WRONG), reply(GOOD)],
        None,
    );
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    let coder = ws.model.requests(ModelRole::Coder);
    assert_eq!(coder.len(), 3);
    // The echo is not shown back as the model's own turn (it would be copied again) ...
    assert_eq!(coder[1].messages.len(), 2, "system and one user message after the echo");
    assert!(coder[1].messages[1].content.contains("changes nothing"), "{}", coder[1].messages[1].content);
    // ... while a reply that changed code and failed is, with what went wrong.
    assert_eq!(coder[2].messages.len(), 4, "the changed reply is shown as the model's turn");
    assert_eq!(coder[2].messages[2].content, WRONG);
}

/// A fix whose reply drops the function's docstring and comment: the patch
/// that reaches the tests (and the user) keeps them; a reply that only drops
/// them changes nothing and is retried as such.
#[tokio::test]
async fn a_fix_keeps_the_documentation_its_reply_deleted() {
    let mut c = config();
    c.runtime.max_retries = 2;
    let documented = "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n    # plain arithmetic\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
    let only_deletes = "```python\ndef add(a, b):\n    return a - b\n```\n";
    let ws = workspace_with(
        &[("calc.py", documented), ("test_calc.py", TESTS)],
        c,
        vec![reply(only_deletes), reply(GOOD), reply(CRITIC)],
        None,
    );
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    let coder = ws.model.requests(ModelRole::Coder);
    assert!(coder[1].messages[1].content.contains("only deletes comments or docstrings"), "{:?}", coder[1].messages);
    let patch = report.patch.expect("a patch");
    assert_eq!(patch.changes[0].after, documented.replace("a - b", "a + b"));
}

/// A passing fix that turns `//` into `/` where the docstring promises whole cents:
/// the tests (900 == 900.0) cannot tell, so the critic's prompt and the proposal
/// carry the question; the right operator raises none.
#[tokio::test]
async fn an_operator_changed_against_its_docstring_is_questioned_before_it_is_proposed() {
    let cart = "def apply_discount(cents, percent):\n    \"\"\"`cents` reduced by `percent` percent, rounded down to a whole cent.\"\"\"\n    return cents - cents * percent // 10\n";
    let tests =
        "from cart import apply_discount\n\n\ndef test_discount():\n    assert apply_discount(1000, 10) == 900\n";
    let float_fix = "```python\ndef apply_discount(cents, percent):\n    \"\"\"`cents` reduced by `percent` percent, rounded down to a whole cent.\"\"\"\n    return cents - cents * percent / 100\n```\n";
    let files = [("cart.py", cart), ("test_cart.py", tests)];
    let ws = workspace_with(&files, config(), vec![reply(float_fix), reply(CRITIC)], None);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert_eq!(report.questions.len(), 1, "{:?}", report.questions);
    let q = &report.questions[0];
    assert!(q.starts_with("cart.py: line 3 changes `//` to `/` in `apply_discount`"), "{q}");
    assert!(q.contains("rounded down"), "{q}");
    let critic = ws.model.requests(ModelRole::Critic);
    assert!(critic[0].messages[1].content.contains(q.as_str()), "{:?}", critic[0].messages);

    let int_fix = float_fix.replace("/ 100", "// 100");
    let ws = workspace_with(&files, config(), vec![reply(&int_fix), reply(CRITIC)], None);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert!(report.questions.is_empty(), "{:?}", report.questions);
    let critic = ws.model.requests(ModelRole::Critic);
    assert!(!critic[0].messages[1].content.contains("speak against"), "{:?}", critic[0].messages);
}

/// The call tracer shows `median` returning the wrong 3 below `middle`, the
/// function the test calls: the retry at `median` is a narrow prompt about it
/// alone, with that call, and its `Wrong line` / `Fixed line` reply becomes
/// the patch.
#[tokio::test]
async fn a_retry_at_the_traced_suspect_shows_it_alone_and_takes_a_line_fix() {
    let report = "from stats import median\n\n\ndef middle(xs):\n    return median(xs)\n";
    let stats = "def spread(xs):\n    return max(xs) - min(xs)\n\n\ndef median(xs):\n    s = sorted(xs)\n    return s[len(s) // 2]\n";
    let tests = "from report import middle\n\n\ndef test_middle():\n    assert middle([1, 2, 3, 4]) == 2.5\n";
    let echo = format!("```python\n{stats}```\n");
    let line_fix = "Wrong line:\n```python\n    return s[len(s) // 2]\n```\nWhy: an even count needs the mean of the two middle values.\nFixed line:\n```python\nn = len(s)\nreturn s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n```\n";
    let files = [("report.py", report), ("stats.py", stats), ("test_report.py", tests)];
    let mut c = config();
    c.runtime.max_retries = 2;
    c.runtime.focus_edit_format = "line_fix".into();
    let ws = workspace_with(&files, c, vec![reply(&echo), reply(line_fix), reply(CRITIC)], None);
    let (id, out) = run(&ws, fix()).await;
    assert_eq!(out.status, ReportStatus::Patched, "{out:#?}");
    assert!(out.diff.contains("+    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2"), "{}", out.diff);
    let coder = ws.model.requests(ModelRole::Coder);
    assert_eq!(coder[1].messages.len(), 2, "system and the narrow request");
    let narrow = &coder[1].messages[1].content;
    assert!(narrow.starts_with("stats.py:5-7 (`median`):"), "{narrow}");
    assert!(narrow.contains("median(xs=[1, 2, 3, 4]) -> 3"), "the traced call: {narrow}");
    assert!(narrow.contains("def test_middle") && narrow.contains("Wrong line:"), "{narrow}");
    assert!(!narrow.contains("def middle") && !narrow.contains("def spread"), "only the suspect: {narrow}");
    let events = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let focused: Vec<&serde_json::Value> =
        events.iter().filter(|e| e.event_type == EventType::ContextBuilt).map(|e| &e.payload["focused"]).collect();
    assert_eq!(focused, vec![&serde_json::Value::Null, &serde_json::json!("stats.py:5-7")]);
}

#[tokio::test]
async fn a_retry_points_the_coder_at_the_definition_the_failure_names() {
    // The test calls `render`; the wrong value comes from `median` in another file,
    // which the assertion's message names. The first reply copies everything back.
    let report = "from stats import median, spread\n\n\ndef render(xs):\n    return f\"median={median(xs)} spread={spread(xs)}\"\n";
    let stats = "def spread(xs):\n    return max(xs) - min(xs)\n\n\ndef median(xs):\n    s = sorted(xs)\n    return s[len(s) // 2]\n";
    let tests = "from report import render\n\n\ndef test_render():\n    assert render([1, 2, 3, 4]) == \"median=2.5 spread=3\"\n";
    let echo = format!("```python\n{stats}```\n");
    let fixed = "```python\ndef median(xs):\n    s = sorted(xs)\n    n = len(s)\n    if n % 2 == 0:\n        return (s[n // 2 - 1] + s[n // 2]) / 2\n    return s[n // 2]\n```\n";
    let files = [("report.py", report), ("stats.py", stats), ("test_report.py", tests)];
    let mut c = config();
    c.runtime.max_retries = 2;
    let ws = workspace_with(&files, c.clone(), vec![reply(&echo), reply(fixed), reply(CRITIC)], None);
    let (id, out) = run(&ws, fix()).await;
    assert_eq!(out.status, ReportStatus::Patched, "{out:#?}");
    let coder = ws.model.requests(ModelRole::Coder);
    let last = |i: usize| coder[i].messages.last().expect("a message").content.clone();
    assert!(!last(0).contains("Look first at"), "the first attempt is the model's own choice: {}", last(0));
    assert!(last(1).contains("Look first at `median` (stats.py, lines 5-7)"), "{}", last(1));
    let called = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let focus: Vec<String> = called
        .iter()
        .filter(|e| e.event_type == EventType::CoderCalled)
        .map(|e| e.payload["focus"].as_str().unwrap_or("-").to_string())
        .collect();
    assert_eq!(focus, vec!["-", "median (stats.py)"]);

    // Off, the retry leaves the choice to the model.
    c.runtime.focus_from_attempt = 0;
    let ws = workspace_with(&files, c, vec![reply(&echo), reply(fixed), reply(CRITIC)], None);
    let _ = run(&ws, fix()).await;
    let coder = ws.model.requests(ModelRole::Coder);
    assert!(!coder[1].messages.last().expect("a message").content.contains("Look first at"));
}

#[tokio::test]
async fn a_fix_starts_where_the_failures_message_is_written_and_shows_the_users_words() {
    // The traceback stops in `load` (`raise ... from None` hides `to_bool`); the
    // message's "not a boolean" is written in `to_bool`, in another file.
    let coerce = "TRUE_WORDS = (\"true\", \"yes\")\n\n\nclass CoerceError(ValueError):\n    pass\n\n\ndef to_bool(value):\n    text = str(value).strip()\n    if text in TRUE_WORDS:\n        return True\n    raise CoerceError(f\"not a boolean: {value!r}\")\n";
    let loader = "from coerce import CoerceError, to_bool\n\n\nclass ConfigError(Exception):\n    pass\n\n\ndef load(values):\n    out = {\"origin\": \"the environment\"}\n    for key, raw in values.items():\n        try:\n            out[key] = to_bool(raw)\n        except CoerceError as exc:\n            raise ConfigError(f\"{key} from the environment: {exc}\") from None\n    return out\n";
    let tests =
        "from loader import load\n\n\ndef test_debug():\n    assert load({\"debug\": \"True\"})[\"debug\"] is True\n";
    let fixed = "```python\ndef to_bool(value):\n    text = str(value).strip().lower()\n    if text in TRUE_WORDS:\n        return True\n    raise CoerceError(f\"not a boolean: {value!r}\")\n```\n";
    let files = [("coerce.py", coerce), ("loader.py", loader), ("test_loader.py", tests)];
    let ws = workspace_with(&files, config(), vec![reply(fixed), reply(CRITIC)], None);
    let said = "APP_DEBUG=True is refused";
    let request = AgentRequest::Fix { target: None, message: Some(said.into()), from_tests: false, origin: None };
    let (id, out) = run(&ws, request).await;
    assert_eq!(out.status, ReportStatus::Patched, "{out:#?}");
    let prompt = ws.model.requests(ModelRole::Coder)[0].messages.last().expect("a message").content.clone();
    assert!(prompt.starts_with("coerce.py:"), "the coder starts from coerce.py: {prompt}");
    assert!(prompt.contains("The failing test (test_loader.py:4-5)"), "the test, not the code it raised in: {prompt}");
    // The test output keeps the failing line, not the test's lines shown above it.
    assert_eq!(prompt.matches("def test_debug():").count(), 1, "{prompt}");
    assert!(prompt.contains(">       assert load("), "the failing line stays marked: {prompt}");
    assert!(prompt.contains(&format!("in their own words: {said}")), "{prompt}");
    let events = ws.env.bus.catch_up(&id, 0).await.expect("events");
    let located = events
        .iter()
        .find(|e| e.event_type == EventType::ToolCompleted && e.payload["tool"] == "locate")
        .expect("a locate event");
    assert_eq!(located.payload["path"], "coerce.py");
    assert!(
        located.payload["why"].as_str().unwrap_or("").contains("message is written in `to_bool` at coerce.py:8"),
        "{}",
        located.payload
    );
}

#[tokio::test]
async fn new_tests_that_fail_on_the_current_code_are_left_out() {
    let calc = "def mul(a, b):\n    return a * b\n";
    let tests = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";
    let reply_text = "```python\ndef test_mul_zero():\n    assert mul(0, 5) == 0\n\n\ndef test_mul_wrong():\n    assert mul(2, 2) == 5\n```\n";
    let ws = workspace_with(
        &[("calc.py", calc), ("test_calc.py", tests)],
        config(),
        vec![reply(reply_text), reply(CRITIC)],
        None,
    );
    let request = AgentRequest::AddTests { target: Location::line("calc.py", 1), test_file: None };
    let (_, report) = run(&ws, request).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert_eq!(report.attempts, 1, "no retry for a test the code does not pass");
    assert!(
        report.diff.contains("+def test_mul_zero():") && !report.diff.contains("test_mul_wrong"),
        "{}",
        report.diff
    );
    let after = report.tests_after.as_ref().expect("tests ran");
    assert!(after.passed, "{after:#?}");
    assert!(
        report.attempt_log[0].contains("left out 1 new test(s) that fail on the current code: test_mul_wrong"),
        "{:?}",
        report.attempt_log
    );
}

#[tokio::test]
async fn code_a_few_calls_below_the_test_is_shown_to_the_coder() {
    // The test builds a class; its property calls a function in another file,
    // which calls the buggy one in a third: three calls deep, no function
    // around the line the test names.
    let posts = "from text import slugify\n\n\nclass Post:\n    def __init__(self, title):\n        self.title = title\n\n    @property\n    def slug(self):\n        return slugify(self.title)\n";
    let text =
        "from words import squeeze\n\n\ndef slugify(title):\n    return squeeze(title.lower().replace(' ', '-'))\n";
    let words = "def squeeze(s):\n    return s.rstrip('-')\n";
    let tests = "from posts import Post\n\n\ndef test_slug():\n    assert Post('-a b-').slug == 'a-b'\n";
    let files = [("posts.py", posts), ("text.py", text), ("words.py", words), ("test_posts.py", tests)];
    let ws = workspace_with(&files, config(), vec![reply("no code")], None);
    let _ = run(&ws, fix()).await;
    let coder = ws.model.requests(ModelRole::Coder);
    let prompt = &coder[0].messages[1].content;
    assert!(prompt.contains("def slugify(title):"), "one hop from the class: {prompt}");
    assert!(prompt.contains("def squeeze(s):"), "two hops from the class: {prompt}");

    let mut shallow = config();
    shallow.budget.related_hops = 1;
    let ws = workspace_with(&files, shallow, vec![reply("no code")], None);
    let _ = run(&ws, fix()).await;
    let prompt = &ws.model.requests(ModelRole::Coder)[0].messages[1].content;
    assert!(prompt.contains("def slugify(title):") && !prompt.contains("def squeeze(s):"), "{prompt}");
}

#[tokio::test]
async fn the_best_attempt_is_handed_back_only_when_asked() {
    let ws = workspace(vec![reply(WRONG), reply(WRONG)]);
    let id = uuid::Uuid::new_v4().to_string();
    let options = TaskOptions { best_attempt: true, ..Default::default() };
    let report = Runtime::new(ws.env.clone()).run(&id, fix(), options, CancellationToken::new()).await.unwrap();
    assert_eq!(report.status, ReportStatus::BestAttempt);
    assert!(report.diff.contains("a * b"));
}

#[tokio::test]
async fn an_edit_of_the_test_is_refused_and_fed_back() {
    let cheat = "```python\ndef test_add():\n    assert add(2, 3) == -1\n```\n";
    let ws = workspace(vec![reply(cheat), reply(GOOD), reply(CRITIC)]);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert!(report.attempt_log[0].contains("not in `calc.py`"), "{:?}", report.attempt_log);
}

#[tokio::test]
async fn critic_down_leads_to_the_configured_fallback() {
    let ws = workspace(vec![reply(GOOD), Script::Down]);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched);
    assert!(matches!(report.critic, Some(CriticOutcome::Unavailable { ref fallback, .. }) if fallback == "accept"));

    let mut cfg = config();
    cfg.runtime.critic_fallback = "reject".into();
    cfg.runtime.structured_output_retries = 0;
    let ws =
        workspace_with(&[("calc.py", CALC), ("test_calc.py", TESTS)], cfg, vec![reply(GOOD), reply("not json")], None);
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::Failed);
    assert!(report.failure_reason.unwrap().contains("critic_fallback"));
}

#[tokio::test]
async fn nothing_to_fix_when_the_tests_pass() {
    let ws = workspace_with(
        &[("calc.py", &CALC.replace("a - b", "a + b")), ("test_calc.py", TESTS)],
        config(),
        vec![],
        None,
    );
    let (_, report) = run(&ws, fix()).await;
    assert_eq!(report.status, ReportStatus::NothingToFix);
    assert_eq!(report.model_calls, 0);
}

#[tokio::test]
async fn cancel_stops_the_model_stream_and_the_test_run() {
    let ws = workspace(vec![Script::Hang]);
    let cancel = CancellationToken::new();
    let runtime = Runtime::new(ws.env.clone());
    let id = uuid::Uuid::new_v4().to_string();
    let mut rx = ws.env.bus.subscribe();
    let c = cancel.clone();
    tokio::spawn(async move {
        while let Ok(e) = rx.recv().await {
            if e.event_type == EventType::LlmCalled {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                c.cancel();
            }
        }
    });
    let started = std::time::Instant::now();
    let report = runtime.run(&id, fix(), TaskOptions::default(), cancel).await.unwrap();
    assert_eq!(report.status, ReportStatus::Cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let state = crate::store::replay_state(ws.env.bus.store(), &id).await.unwrap();
    assert_eq!(state.status, crate::contracts::TaskStatus::Cancelled);

    // A test run that would take a minute ends as soon as the task is cancelled.
    let mut cfg = config();
    cfg.sandbox.test_command = "python3 -c 'import time; time.sleep(60)'".into();
    let ws = workspace_with(&[("calc.py", CALC)], cfg, vec![], None);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        c.cancel();
    });
    let started = std::time::Instant::now();
    let report =
        Runtime::new(ws.env.clone()).run("t-cancel-tests", fix(), TaskOptions::default(), cancel).await.unwrap();
    assert_eq!(report.status, ReportStatus::Cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_task_killed_between_any_two_steps_resumes_to_the_same_patch() {
    let (_, reference) = run(&workspace(vec![reply(GOOD), reply(CRITIC)]), fix()).await;
    let total = {
        let ws = workspace(vec![reply(GOOD), reply(CRITIC)]);
        let (id, _) = run(&ws, fix()).await;
        ws.env.bus.catch_up(&id, 0).await.unwrap().len()
    };
    for kill_after in 1..total {
        // Each kill gets its own workspace; the store outlives the killed runtime.
        let ws = workspace(vec![reply(GOOD), reply(CRITIC), reply(GOOD), reply(CRITIC)]);
        let id = format!("kill-{kill_after}");
        let mut rx = ws.env.bus.subscribe();
        let runtime = Runtime::new(ws.env.clone());
        let task_id = id.clone();
        let handle = tokio::spawn(async move {
            runtime.run(&task_id, fix(), TaskOptions::default(), CancellationToken::new()).await
        });
        let mut seen = 0;
        while let Ok(e) = rx.recv().await {
            if e.task_id == id {
                seen += 1;
                if seen == kill_after {
                    handle.abort();
                    break;
                }
            }
        }
        let _ = handle.await;
        let unfinished = ws.env.bus.unfinished_tasks().await.unwrap();
        let report = match unfinished.iter().find(|u| u.task.task_id == id) {
            Some(u) => Runtime::new(ws.env.clone()).resume(u, CancellationToken::new()).await.expect("resumes"),
            None => continue, // it finished before the abort landed
        };
        assert_eq!(report.status, ReportStatus::Patched, "killed after event {kill_after}: {report:#?}");
        assert_eq!(report.diff, reference.diff, "killed after event {kill_after}");
        let state = crate::store::replay_state(ws.env.bus.store(), &id).await.unwrap();
        assert_eq!(state.status, crate::contracts::TaskStatus::Completed, "killed after event {kill_after}");
        let seqs: Vec<u64> = ws.env.bus.catch_up(&id, 0).await.unwrap().iter().map(|e| e.sequence).collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "gapless after resume");
    }
}

#[tokio::test]
async fn the_second_bug_of_a_kind_finds_the_first_ones_memory() {
    let ws = workspace(vec![reply(GOOD), reply(CRITIC)]);
    let (_, first) = run(&ws, fix()).await;
    assert_eq!(first.status, ReportStatus::Patched);
    // The same kind of bug elsewhere, in the same workspace store.
    let sub = "def sub(a, b):\n    return a + b\n";
    let tests = "from ops import sub\n\n\ndef test_add_sub():\n    assert sub(5, 3) == 2\n";
    let store = ws.env.bus.store().clone();
    let second = workspace_with(
        &[("ops.py", sub), ("test_ops.py", tests)],
        config(),
        vec![reply("```python\ndef sub(a, b):\n    return a - b\n```"), reply(CRITIC)],
        Some(store),
    );
    let (_, report) = run(&second, fix()).await;
    assert_eq!(report.status, ReportStatus::Patched);
    let prompt = &second.model.requests(ModelRole::Coder)[0].messages[1].content;
    assert!(
        prompt.contains("Remembered") && prompt.contains("return a + b"),
        "the first fix is in the prompt:\n{prompt}"
    );
}

/// `calc.py` with its bug fixed (only the requested edit changes it), and no critic.
fn fixed_calc(script: Vec<Script>) -> Workspace {
    let mut cfg = config();
    cfg.runtime.critic = false;
    let fixed = CALC.replace("a - b", "a + b");
    workspace_with(&[("calc.py", &fixed), ("test_calc.py", TESTS)], cfg, script, None)
}

/// "add a docstring" to `mul` (calc.py:5-6).
fn docstring_request(comments_only: bool) -> AgentRequest {
    AgentRequest::Edit {
        target: Location::parse("calc.py:5-6").unwrap(),
        instruction: "add a docstring".into(),
        comments_only,
    }
}

#[tokio::test]
async fn an_edit_request_changes_the_named_lines_and_keeps_tests_green() {
    let ws = fixed_calc(vec![reply(
        "```python\ndef mul(a, b):\n    \"\"\"The product of a and b.\"\"\"\n    return a * b\n```",
    )]);
    let (_, report) = run(&ws, docstring_request(false)).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert!(report.diff.contains("+    \"\"\"The product of a and b.\"\"\""), "{}", report.diff);
}

#[tokio::test]
async fn a_documentation_edit_keeps_the_code_and_leaves_out_invented_functions() {
    // First reply: a documented `mul` whose code changed; second: an invented helper
    // around a `mul` documented with its code as it was.
    let changed = "```python\ndef mul(a, b):\n    \"\"\"The product.\"\"\"\n    return b * a\n```";
    let invented = "```python\ndef helper(x):\n    return x\n\n\ndef mul(a, b):\n    \"\"\"The product of a and b.\"\"\"\n    return a * b\n```";
    let ws = fixed_calc(vec![reply(changed), reply(invented)]);
    let (_, report) = run(&ws, docstring_request(true)).await;
    assert_eq!(report.status, ReportStatus::Patched, "{report:#?}");
    assert!(report.diff.contains("+    \"\"\"The product of a and b.\"\"\""), "{}", report.diff);
    assert!(!report.diff.contains("helper"), "the invented function is left out:\n{}", report.diff);
    let retry = &ws.model.requests(ModelRole::Coder)[1];
    let said: String = retry.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(said.contains("changes the code of `mul`"), "the first reply's code change is fed back:\n{said}");
}
