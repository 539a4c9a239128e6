//! `tinycoder plan REQUEST` (print the validated task graph, write nothing) and
//! `tinycoder run REQUEST` (carry it out: each step a tested coder edit, one
//! combined patch tested again, written only when agreed).

use super::agent_cmd::{agent_env, ctrl_c_token, finish, ApplyArgs, ModelCheck};
use super::CliContext;
use crate::agent::plan::{known_files, make_plan, route, run_request, PlanOutcome, Route};
use crate::agent::{describe_event, TaskOptions};
use crate::config::ModelRole;
use crate::contracts::{ActionType, PlanReply, StepKind};
use crate::store::EventBus;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// What to change, in words.
    pub request: String,
    /// Print the graph as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tinycoder run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What to change, in words (it may span files).
    pub request: String,
    /// Run this plan instead of asking the planner: a JSON file with `steps`, as
    /// `tinycoder plan --json` prints it (edit it first if you like).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// `tinycoder plan REQUEST`: asks the planner and prints the validated graph.
pub async fn run_plan(args: PlanArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let env = agent_env(&ctx, ModelCheck::Deferred).await?;
    let known = known_files(&env);
    let rt = &env.config.runtime;
    let decision = route(&args.request, &known, rt.plan_min_files as usize, &rt.plan_keywords);
    env.model.check_ready(ModelRole::Planner).await?;
    let cancel = ctrl_c_token();
    let planned = make_plan(&env, &args.request, None, &cancel).await?;
    if args.json {
        let v = serde_json::json!({
            "route": decision,
            "steps": planned.graph.steps,
            "order": planned.graph.order.iter().map(|&i| &planned.graph.steps[i].id).collect::<Vec<_>>(),
            "replans": planned.replans,
            "model_calls": planned.model_calls,
            "prompt_tokens": planned.prompt_tokens,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", planned.graph.render());
        if let Route::Direct { reason, .. } = &decision {
            eprintln!("note: `tinycoder run` would skip the planner for this request ({reason})");
        }
        if planned.replans > 0 {
            eprintln!("the planner needed {} replan(s)", planned.replans);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tinycoder run REQUEST`: routes, plans, runs the steps and shows the combined patch.
pub async fn run_run(args: RunArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let given = match &args.plan {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read the plan {}: {e}", path.display()))?;
            let plan = crate::llm::parse_reply::<PlanReply>(&text)
                .map_err(|e| anyhow::anyhow!("{} is not a plan (a JSON object with `steps`): {e}", path.display()))?;
            Some(plan)
        }
        None => None,
    };
    let ctx = CliContext::load(workspace)?;
    // A given plan of query and command steps calls no model: it runs with the model server down.
    let needs_model = given.as_ref().is_none_or(|p| {
        p.steps
            .iter()
            .any(|s| matches!(s.action_type, ActionType::Edit | ActionType::Create) && s.kind != StepKind::Query)
    });
    let env = agent_env(&ctx, if needs_model { ModelCheck::Now } else { ModelCheck::Deferred }).await?;
    let known = known_files(&env);
    let rt = &env.config.runtime;
    let planned =
        matches!(route(&args.request, &known, rt.plan_min_files as usize, &rt.plan_keywords), Route::Planned { .. });
    if given.is_none() && planned {
        env.model.check_ready(ModelRole::Planner).await?;
    }
    let task_id = uuid::Uuid::new_v4().to_string();
    let printer = follow_all(&env.bus, &task_id);
    let options = TaskOptions { best_attempt: args.apply.best_attempt, origin: "cli".into(), session_id: None };
    let cancel = ctrl_c_token();
    let outcome = run_request(&env, &task_id, &args.request, given, options, cancel.clone()).await?;
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), printer).await;
    let PlanOutcome { report, steps, route, .. } = outcome;
    if !args.apply.json {
        for st in &steps {
            eprintln!(
                "step {} ({} {}): {}: {}",
                st.id,
                st.action.as_str(),
                st.subject(),
                st.state.as_str(),
                st.summary
            );
        }
    }
    let extra = serde_json::json!({"route": route, "steps": steps});
    finish(&env, report, &args.apply, cancel.is_cancelled(), Some(extra)).await
}

/// Prints the events of the task and of its steps' tasks until the task ends.
fn follow_all(bus: &EventBus, task_id: &str) -> tokio::task::JoinHandle<()> {
    let mut rx = bus.subscribe();
    let task_id = task_id.to_string();
    tokio::spawn(async move {
        while let Ok(e) = rx.recv().await {
            let own = e.task_id == task_id;
            if own
                && matches!(
                    e.event_type,
                    crate::contracts::EventType::TaskCompleted | crate::contracts::EventType::TaskFailed
                )
            {
                break;
            }
            if let Some(line) = describe_event(&e) {
                eprintln!("{}{line}", if own { "" } else { "  " });
            }
        }
    })
}
