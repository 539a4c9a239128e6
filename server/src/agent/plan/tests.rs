//! Unit tests of the planned path with `ScriptedModel` (a scripted model
//! double); everything else is real: files on disk, pytest in the sandbox,
//! SQLite, tantivy and tree-sitter.

use super::*;
use crate::agent::scripted_model::Script;
use crate::agent::strategy_tests::ScriptedHuman;
use crate::agent::tests::{config, reply, workspace_with, Workspace};
use crate::agent::{ReportStatus, TaskOptions};
use crate::config::ModelRole;
use crate::contracts::EventType;
use tokio_util::sync::CancellationToken;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const APP: &str = "from calc import add\n\n\ndef total(xs):\n    out = 0\n    for x in xs:\n        out = add(out, x)\n    return out\n";
const TESTS: &str = "from calc import add\nfrom app import total\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n";
const CALC_FIXED: &str = "Here it is.\n```python\ndef add(a, b):\n    return a + b\n```\n";
const HELPERS: &str = "```python\ndef double(x):\n    return 2 * x\n```\n";

fn project(max_replans: u32, script: Vec<Script>) -> Workspace {
    let mut c = config();
    c.runtime.critic = false;
    c.runtime.max_replans = max_replans;
    c.runtime.edit_format = "whole_file".into();
    workspace_with(&[("calc.py", CALC), ("app.py", APP), ("test_calc.py", TESTS)], c, script, None)
}

fn plan_json(steps: &str) -> Script {
    reply(&format!("{{\"steps\": [{steps}]}}"))
}

async fn run(ws: &Workspace, request: &str) -> (String, PlanOutcome) {
    let id = uuid::Uuid::new_v4().to_string();
    let out = run_request(&ws.env, &id, request, None, TaskOptions::default(), CancellationToken::new())
        .await
        .expect("the planned task runs");
    (id, out)
}

async fn events(ws: &Workspace, task: &str) -> Vec<EventType> {
    ws.env.bus.catch_up(task, 0).await.expect("events").into_iter().map(|e| e.event_type).collect()
}

fn disk(ws: &Workspace, rel: &str) -> Option<String> {
    std::fs::read_to_string(ws.root.join(rel)).ok()
}

#[tokio::test]
async fn invalid_planner_json_leads_to_a_replan_then_a_graceful_failure() {
    let bad_file = r#"{"id": "1", "kind": "coder", "action_type": "edit", "file": "calcs.py", "description": "fix add", "depends_on": []}"#;
    let ws = project(1, vec![reply("Sure! Here is the plan: steps 1, 2"), plan_json(bad_file)]);
    let (id, out) = run(&ws, "fix the adding everywhere").await;
    assert_eq!(out.report.status, ReportStatus::Failed);
    let reason = out.report.failure_reason.clone().unwrap_or_default();
    assert!(reason.contains("no usable plan in 2 tries"), "{reason}");
    assert!(reason.contains("`calcs.py`") && reason.contains("did you mean `calc.py`"), "{reason}");
    let planner = ws.model.requests(ModelRole::Planner);
    assert_eq!(planner.len(), 2, "one plan, one replan, then it stops");
    assert!(planner[0].json_schema.is_some(), "the planner's reply is schema-constrained");
    let replan = &planner[1].messages.last().expect("replan message").content;
    assert!(replan.contains("not a plan in the JSON format"), "the replan says what was wrong: {replan}");
    assert!(ws.model.requests(ModelRole::Coder).is_empty(), "no step ran");
    let ev = events(&ws, &id).await;
    assert_eq!(ev.iter().filter(|e| **e == EventType::LlmCalled).count(), 2);
    assert_eq!(ev.last(), Some(&EventType::TaskFailed));
    assert!(!ev.contains(&EventType::PlanCreated));
    assert_eq!(disk(&ws, "calc.py").as_deref(), Some(CALC));
}

#[tokio::test]
async fn an_unknown_file_is_a_clear_error_with_a_suggestion() {
    let step = r#"{"id": "1", "kind": "coder", "action_type": "edit", "file": "src/app.py", "description": "x", "depends_on": []}"#;
    let ws = project(0, vec![plan_json(step)]);
    let (_, out) = run(&ws, "make totals use add everywhere").await;
    let reason = out.report.failure_reason.unwrap_or_default();
    assert!(
        reason.contains("step `1` names `src/app.py`, which is not a file of the workspace (did you mean `app.py`?)"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_plan_of_a_query_an_edit_and_a_new_file_yields_one_tested_patch_and_writes_nothing() {
    let steps = r#"{"id": "find", "kind": "query", "action_type": "query", "file": "calc.py", "description": "where add is defined", "depends_on": []},
        {"id": "fix", "kind": "coder", "action_type": "edit", "file": "calc.py", "description": "make add return the sum", "depends_on": ["find"]},
        {"id": "new", "kind": "coder", "action_type": "create", "file": "lib/helpers.py", "description": "write double(x)", "depends_on": []}"#;
    let ws = project(1, vec![plan_json(steps), reply(CALC_FIXED), reply(HELPERS)]);
    let (id, out) = run(&ws, "fix add and add a helpers module everywhere it is needed").await;
    assert_eq!(out.report.status, ReportStatus::Patched, "{:?}", out.report);
    assert_eq!(out.report.files_changed, vec!["calc.py", "lib/helpers.py"]);
    assert!(out.report.tests_after.as_ref().is_some_and(|t| t.passed), "the whole patch was tested");
    assert!(out.steps.iter().all(|s| s.state == StepState::Done), "{:?}", out.steps);
    // Nothing is written: the patch is only proposed.
    assert_eq!(disk(&ws, "calc.py").as_deref(), Some(CALC));
    assert_eq!(disk(&ws, "lib/helpers.py"), None, "a created file waits for the user too");
    // The query step's finding reached the step after it; the independent step did not get it.
    let coder = ws.model.requests(ModelRole::Coder);
    assert_eq!(coder.len(), 2);
    let prompt = |i: usize| coder[i].messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n");
    assert!(prompt(0).contains("Found by an earlier step") && prompt(0).contains("calc.py:1-2"), "{}", prompt(0));
    assert!(!prompt(1).contains("Found by an earlier step"));
    assert_eq!(out.report.model_calls, 3, "one planner call and one coder call per edit step");
    let ev = events(&ws, &id).await;
    for expected in [EventType::PlanCreated, EventType::StepStarted, EventType::TaskCompleted] {
        assert!(ev.contains(&expected), "{expected:?} in {ev:?}");
    }
    assert_eq!(ev.iter().filter(|e| **e == EventType::StepStarted).count(), 3);
}

#[tokio::test]
async fn a_failing_step_fails_the_task_and_skips_what_depends_on_it() {
    let steps = r#"{"id": "1", "kind": "coder", "action_type": "edit", "file": "calc.py", "description": "make add return the sum", "depends_on": []},
        {"id": "2", "kind": "coder", "action_type": "edit", "file": "app.py", "description": "use add", "depends_on": ["1"]}"#;
    // The coder's two attempts (max_retries = 1) change nothing.
    let echo = format!("```python\n{CALC}```\n");
    let ws = project(0, vec![plan_json(steps), reply(&echo), reply(&echo)]);
    let (_, out) = run(&ws, "fix add in calc.py and app.py").await;
    assert_eq!(out.report.status, ReportStatus::Failed);
    assert_eq!(out.steps[0].state, StepState::Failed);
    assert_eq!(out.steps[1].state, StepState::Skipped);
    assert!(out.report.failure_reason.clone().unwrap_or_default().starts_with("step 1 (calc.py) failed"));
    assert!(!out.report.has_patch());
}

#[tokio::test]
async fn a_request_about_one_named_file_never_calls_the_planner() {
    let ws = project(1, vec![reply(CALC_FIXED)]);
    let (_, out) = run(&ws, "In calc.py, make add return the sum of its arguments.").await;
    assert!(matches!(out.route, Route::Direct { ref file, .. } if file == "calc.py"), "{:?}", out.route);
    assert!(ws.model.requests(ModelRole::Planner).is_empty());
    assert_eq!(out.report.status, ReportStatus::Patched, "{:?}", out.report.failure_reason);
}

#[tokio::test]
async fn a_step_left_unfinished_by_a_kill_is_not_resumed_on_its_own() {
    // A step's input (the earlier steps' changes) lived in memory only: resuming it
    // alone would edit the user's files without them. It ends as failed, with why.
    let step = r#"{"id": "1", "kind": "coder", "action_type": "edit", "file": "calc.py", "description": "make add return the sum", "depends_on": []}"#;
    let ws = project(0, vec![plan_json(step), Script::Hang]);
    let id = uuid::Uuid::new_v4().to_string();
    let cancel = CancellationToken::new();
    let mut rx = ws.env.bus.subscribe();
    let run = run_request(&ws.env, &id, "fix add everywhere", None, TaskOptions::default(), cancel.clone());
    let watch = async {
        // "Kill" once the step's coder call is under way.
        while let Ok(e) = rx.recv().await {
            if e.event_type == EventType::CoderCalled {
                break;
            }
        }
    };
    tokio::select! {
        _ = run => panic!("the hanging step should not finish"),
        _ = watch => {}
    }
    let unfinished = ws.env.bus.unfinished_tasks().await.expect("unfinished tasks");
    let step_task = unfinished.iter().find(|u| u.task.task_id != id).expect("the step's task is unfinished");
    let err = crate::agent::Runtime::new(ws.env.clone())
        .resume(step_task, CancellationToken::new())
        .await
        .expect_err("a plan step does not resume");
    assert!(err.to_string().contains("run the request again"), "{err}");
    assert_eq!(disk(&ws, "calc.py").as_deref(), Some(CALC));
}

#[tokio::test]
async fn a_given_plan_runs_without_the_planner_and_is_validated_the_same_way() {
    let ws = project(1, vec![reply(CALC_FIXED)]);
    let bad = crate::contracts::PlanReply {
        steps: vec![crate::contracts::PlanStep {
            id: "1".into(),
            kind: crate::contracts::StepKind::Coder,
            action_type: crate::contracts::ActionType::Edit,
            file: "calcs.py".into(),
            description: "make add return the sum".into(),
            depends_on: vec![],
            command: None,
            requires_confirmation: false,
        }],
    };
    let id = uuid::Uuid::new_v4().to_string();
    let out = run_request(&ws.env, &id, "fix add", Some(bad.clone()), TaskOptions::default(), CancellationToken::new())
        .await
        .expect("runs");
    let reason = out.report.failure_reason.unwrap_or_default();
    assert!(
        reason.starts_with("the given plan cannot be used: ") && reason.contains("did you mean `calc.py`"),
        "{reason}"
    );

    let mut good = bad;
    good.steps[0].file = "calc.py".into();
    let id = uuid::Uuid::new_v4().to_string();
    let out = run_request(&ws.env, &id, "fix add", Some(good), TaskOptions::default(), CancellationToken::new())
        .await
        .expect("runs");
    assert!(matches!(out.route, Route::Given { .. }));
    assert_eq!(out.report.status, ReportStatus::Patched, "{:?}", out.report.failure_reason);
    assert!(ws.model.requests(ModelRole::Planner).is_empty(), "no planner call for a given plan");
}

fn command_step(id: &str, command: &str, deps: &[&str]) -> crate::contracts::PlanStep {
    crate::contracts::PlanStep {
        id: id.into(),
        kind: crate::contracts::StepKind::Tool,
        action_type: crate::contracts::ActionType::Command,
        file: ".".into(),
        command: Some(command.into()),
        description: format!("run {command}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        requires_confirmation: false,
    }
}

fn edit_step(id: &str, file: &str, description: &str, deps: &[&str]) -> crate::contracts::PlanStep {
    crate::contracts::PlanStep {
        id: id.into(),
        kind: crate::contracts::StepKind::Coder,
        action_type: crate::contracts::ActionType::Edit,
        file: file.into(),
        command: None,
        description: description.into(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        requires_confirmation: false,
    }
}

async fn run_given(ws: &Workspace, request: &str, steps: Vec<crate::contracts::PlanStep>) -> (String, PlanOutcome) {
    let id = uuid::Uuid::new_v4().to_string();
    let plan = crate::contracts::PlanReply { steps };
    let out = run_request(&ws.env, &id, request, Some(plan), TaskOptions::default(), CancellationToken::new())
        .await
        .expect("the planned task runs");
    (id, out)
}

async fn tool_events(ws: &Workspace, task: &str) -> Vec<serde_json::Value> {
    let all = ws.env.bus.catch_up(task, 0).await.expect("events");
    all.into_iter().filter(|e| e.event_type == EventType::ToolCompleted).map(|e| e.payload).collect()
}

#[tokio::test]
async fn scripted_model_a_denied_command_step_never_runs_and_skips_its_dependents() {
    // env.human is the non-interactive policy with "deny": nobody agrees to `rm`.
    let ws = project(0, vec![]);
    let command = "touch MARKER && rm -rf build";
    let steps =
        vec![command_step("clean", command, &[]), edit_step("fix", "calc.py", "make add return the sum", &["clean"])];
    let (id, out) = run_given(&ws, "remove the build folder, then fix add", steps).await;
    assert_eq!(out.report.status, ReportStatus::Failed);
    assert_eq!((out.steps[0].state, out.steps[1].state), (StepState::Failed, StepState::Skipped), "{:?}", out.steps);
    let why = &out.steps[0].summary;
    assert!(why.starts_with(&format!("the user denied `{command}`, which destroys data (rule `rm`")), "{why}");
    let reason = out.report.failure_reason.clone().unwrap_or_default();
    assert!(reason.starts_with(&format!("step clean (`{command}`) failed: the user denied")), "{reason}");
    assert!(!ws.root.join("MARKER").exists(), "the command never ran");
    let tools = tool_events(&ws, &id).await;
    let shell: Vec<_> = tools.iter().filter(|p| p["tool"] == "shell_exec").collect();
    assert_eq!(shell.len(), 1, "{tools:?}");
    assert_eq!((shell[0]["outcome"].as_str(), shell[0]["ran"].as_bool()), (Some("denied"), None), "{shell:?}");
    assert!(ws.model.requests(ModelRole::Coder).is_empty(), "the dependent step never reached the coder");
}

#[tokio::test]
async fn scripted_model_an_allowed_command_runs_in_a_shadow_and_its_output_reaches_the_next_step() {
    // The command prints where it runs and the earlier step's line, upper-cased so only its output has it.
    let command = "pwd; sed -n 2p calc.py | tr a-z A-Z";
    let app = format!("```python\n# Totals of lists.\n{APP}```\n");
    let ws = project(0, vec![reply(CALC_FIXED), reply(&app)]);
    let steps = vec![
        edit_step("fix", "calc.py", "make add return the sum", &[]),
        command_step("show", command, &["fix"]),
        edit_step("doc", "app.py", "describe the module in a comment", &["show"]),
    ];
    let (id, out) = run_given(&ws, "fix add, show it, document app.py", steps).await;
    assert_eq!(out.report.status, ReportStatus::Patched, "{:?} {:?}", out.report.failure_reason, out.steps);
    assert_eq!(out.steps[1].summary, format!("`{command}` exited with code 0"));
    let coder = ws.model.requests(ModelRole::Coder);
    let prompt = |i: usize| coder[i].messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n");
    let dependent = prompt(1);
    assert!(dependent.contains(&format!("`{command}` exited with code 0")), "{dependent}");
    assert!(dependent.contains("RETURN A + B"), "the command saw the earlier step's change: {dependent}");
    assert!(dependent.contains("/shadows/shell-"), "it ran in a shadow: {dependent}");
    assert!(!prompt(0).contains("RETURN A + B"));
    assert_eq!(disk(&ws, "calc.py").as_deref(), Some(CALC), "the user's files are unchanged");
    assert_eq!(disk(&ws, "app.py").as_deref(), Some(APP));
    let tools = tool_events(&ws, &id).await;
    assert!(tools.iter().any(|p| p["tool"] == "shell_exec" && p["ran"] == true && p["exit_code"] == 0), "{tools:?}");
}

#[test]
fn the_planners_schema_offers_a_command_step_with_an_optional_command() {
    let schema = crate::llm::schema_of::<crate::contracts::PlanReply>();
    let step = &schema["$defs"]["PlanStep"];
    assert_eq!(step["properties"]["command"]["type"], serde_json::json!(["string", "null"]), "{schema:#}");
    let required = step["required"].as_array().expect("required");
    assert!(!required.contains(&serde_json::json!("command")), "the command is optional");
    assert!(schema["$defs"]["ActionType"].to_string().contains("\"command\""), "{schema:#}");
}

fn with_user(ws: &mut Workspace, answers: Vec<crate::contracts::StrategyChoice>) -> std::sync::Arc<ScriptedHuman> {
    let human = ScriptedHuman::answering(answers);
    ws.env.human = human.clone();
    human
}

#[tokio::test]
async fn scripted_model_a_step_that_keeps_failing_asks_the_user_and_a_hint_fixes_it() {
    let echo = format!("```python\n{CALC}```\n");
    let mut ws = project(0, vec![reply(&echo), reply(&echo), reply(CALC_FIXED)]);
    let hint = crate::contracts::StrategyChoice::Hint { text: "return a + b".into() };
    let human = with_user(&mut ws, vec![hint]);
    let (_, out) =
        run_given(&ws, "make add return the sum", vec![edit_step("1", "calc.py", "make add return the sum", &[])])
            .await;
    assert_eq!(out.report.status, ReportStatus::Patched, "{:#?}", out.report);
    let asked = human.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "the step asked once");
    assert_eq!((asked[0].file.as_str(), asked[0].attempts), ("calc.py", 2));
    let coder = ws.model.requests(ModelRole::Coder);
    assert!(coder[2].messages.iter().any(|m| m.content.contains("return a + b")), "the hint reached the step's coder");
}

#[tokio::test]
async fn scripted_model_steps_side_by_side_ask_one_question_at_a_time() {
    let mut c = config();
    c.runtime.critic = false;
    c.runtime.parallel_edits = 2;
    c.runtime.edit_format = "whole_file".into();
    let no_code = || reply("I am not sure what to change.");
    let files = [("calc.py", CALC), ("app.py", APP), ("test_calc.py", TESTS)];
    // Plenty of replies: the two steps draw from one scripted queue in whatever order they run.
    let mut ws = workspace_with(&files, c, (0..40).map(|_| no_code()).collect(), None);
    let stop = crate::contracts::StrategyChoice::Stop;
    let human = with_user(&mut ws, vec![stop.clone(), stop]);
    let steps = vec![edit_step("1", "calc.py", "fix add", &[]), edit_step("2", "app.py", "fix total", &[])];
    let (_, out) = run_given(&ws, "fix add and total", steps).await;
    assert_eq!(out.report.status, ReportStatus::Failed);
    let mut files: Vec<String> = human.asked.lock().unwrap().iter().map(|q| q.file.clone()).collect();
    files.sort();
    assert_eq!(files, ["app.py", "calc.py"], "each step asked: {:#?}", out.report);
    assert_eq!(human.most_open.load(std::sync::atomic::Ordering::SeqCst), 1, "never two questions at once");
}

#[tokio::test]
async fn scripted_model_a_step_marked_for_confirmation_runs_only_when_the_user_agrees() {
    let confirm = |mut s: crate::contracts::PlanStep| {
        s.requires_confirmation = true;
        s
    };
    let steps = || {
        vec![
            confirm(edit_step("1", "calc.py", "make add return the sum", &[])),
            edit_step("2", "app.py", "use add", &["1"]),
        ]
    };
    // Declined: the coder is never called, what depends on the step is skipped, nothing is proposed.
    let mut ws = project(0, vec![]);
    let human = with_user(&mut ws, vec![]);
    human.step_answers.lock().unwrap().push(false);
    let (id, out) = run_given(&ws, "fix add", steps()).await;
    assert_eq!(out.report.status, ReportStatus::Failed);
    assert_eq!((out.steps[0].state, out.steps[1].state), (StepState::Failed, StepState::Skipped));
    assert!(
        out.report.failure_reason.clone().unwrap_or_default().contains("the user did not confirm"),
        "{:?}",
        out.report.failure_reason
    );
    assert!(ws.model.requests(ModelRole::Coder).is_empty(), "a declined step calls no model");
    assert_eq!(*human.steps_asked.lock().unwrap(), ["1"]);
    let asked =
        ws.env.bus.catch_up(&id, 0).await.unwrap().into_iter().filter(|e| e.payload["question"] == "step").count();
    assert_eq!(asked, 2, "the question and its answer are events");
    assert_eq!(disk(&ws, "calc.py").as_deref(), Some(CALC));

    // Confirmed: the step runs like any other; the unmarked one is not asked about.
    let mut ws = project(0, vec![reply(CALC_FIXED), reply(&format!("```python\n{APP}```\n"))]);
    let human = with_user(&mut ws, vec![]);
    human.step_answers.lock().unwrap().push(true);
    let (_, out) =
        run_given(&ws, "fix add", vec![confirm(edit_step("1", "calc.py", "make add return the sum", &[]))]).await;
    assert_eq!(out.report.status, ReportStatus::Patched, "{:#?}", out.report);
    assert_eq!(*human.steps_asked.lock().unwrap(), ["1"]);
}
