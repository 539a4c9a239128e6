//! `tinycoder events TASK`, `tinycoder replay TASK`, and the hidden
//! `tinycoder debug-task` (a real multi-step task for crash tests).

use super::CliContext;
use crate::contracts::{RuntimeEvent, TaskStatus};
use crate::store::runner::{RunOutcome, StepTaskRunner};
use crate::store::{EventBus, ResumePolicy, Store};
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder events`.
#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// The task id.
    pub task: String,
    /// Print one JSON object per line instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tinycoder replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The task id.
    pub task: String,
    /// Print `{event, state}` JSON per line instead of a summary per step.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of the hidden `tinycoder debug-task`.
#[derive(Debug, clap::Args)]
pub struct DebugTaskArgs {
    /// The task id (created on first run, resumed afterwards).
    #[arg(long)]
    pub task: String,
    /// Number of steps.
    #[arg(long, default_value_t = 8)]
    pub steps: u32,
    /// Directory the steps write their files into.
    #[arg(long)]
    pub work_dir: PathBuf,
    /// Milliseconds each step's tool takes.
    #[arg(long, default_value_t = 0)]
    pub step_delay_ms: u64,
    /// Override `store.on_unfinished` ("resume" or "fail").
    #[arg(long)]
    pub on_unfinished: Option<String>,
}

async fn open(ctx: &CliContext) -> anyhow::Result<Store> {
    let root = ctx.workspace.clone();
    let config = ctx.loaded.config.clone();
    let store = tokio::task::spawn_blocking(move || crate::store::open_workspace(&root, &config)).await??;
    Ok(store)
}

fn one_line(event: &RuntimeEvent) -> String {
    let payload = serde_json::to_string(&event.payload).unwrap_or_default();
    let payload: String = if payload.chars().count() > 100 {
        payload.chars().take(99).chain(std::iter::once('…')).collect()
    } else {
        payload
    };
    format!("{:>5}  {}  {:<22} {}", event.sequence, event.timestamp, event.event_type.as_str(), payload)
}

pub async fn run_events(args: EventsArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let bus = EventBus::new(open(&ctx).await?);
    if bus.task(&args.task).await?.is_none() {
        anyhow::bail!(
            "no task `{}` in this workspace's store (list tasks with the LSP command tinycoder.tasks)",
            args.task
        );
    }
    let events = bus.catch_up(&args.task, 0).await?;
    let mut out = std::io::stdout().lock();
    for e in &events {
        if args.json {
            writeln!(out, "{}", serde_json::to_string(e)?)?;
        } else {
            writeln!(out, "{}", one_line(e))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn run_replay(args: ReplayArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let store = open(&ctx).await?;
    let steps =
        crate::store::replay(&store, &args.task).await.with_context(|| format!("replaying task `{}`", args.task))?;
    let mut out = std::io::stdout().lock();
    for (event, state) in &steps {
        if args.json {
            writeln!(out, "{}", serde_json::json!({"event": event, "state": state}))?;
        } else {
            writeln!(
                out,
                "{:>5} {:<22} -> {:<19} step={:<10} done={}",
                event.sequence,
                event.event_type.as_str(),
                state.status.as_str(),
                state.active_step_id.as_deref().unwrap_or("-"),
                state.completed_steps.len()
            )?;
        }
    }
    if !args.json {
        if let Some((_, last)) = steps.last() {
            writeln!(out, "\nfinal state:\n{}", serde_json::to_string_pretty(last)?)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs (or resumes) a real multi-step task, printing `committed SEQ TYPE` after each durable commit.
pub async fn run_debug_task(args: DebugTaskArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let policy = match args.on_unfinished.as_deref() {
        None => ResumePolicy::from_config(&ctx.loaded.config.store),
        Some("resume") => ResumePolicy::Resume,
        Some("fail") => ResumePolicy::Fail,
        Some(other) => anyhow::bail!("--on-unfinished must be \"resume\" or \"fail\", not {other:?}"),
    };
    let bus = EventBus::new(open(&ctx).await?);
    if bus.store().integrity_checked() {
        writeln!(std::io::stdout().lock(), "integrity_check ok after an unclean shutdown")?;
    }
    let report = |e: &RuntimeEvent| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "committed {} {}", e.sequence, e.event_type.as_str());
    };
    let outcome = bus.apply_resume_policy(policy).await?;
    if outcome.failed.iter().any(|(id, _)| id == &args.task) {
        if let Some(last) = bus.catch_up(&args.task, 0).await?.last() {
            report(last);
        }
    }
    let runner = StepTaskRunner::new(
        bus.clone(),
        &args.work_dir,
        args.steps,
        std::time::Duration::from_millis(args.step_delay_ms),
    );
    let mut committed = |e: &RuntimeEvent| report(e);
    let result = match bus.task(&args.task).await? {
        None => runner.run(&args.task, None, &mut committed).await?,
        Some(t) if t.status == TaskStatus::Completed => {
            let digest = bus.last_checkpoint(&args.task).await?.and_then(|c| c.plan_snapshot.get("digest").cloned());
            RunOutcome::Completed { digest: digest.and_then(|d| d.as_str().map(str::to_string)).unwrap_or_default() }
        }
        Some(t) if t.status.is_terminal() => {
            RunOutcome::Failed { reason: t.failure_reason.unwrap_or_else(|| t.status.as_str().to_string()) }
        }
        Some(_) => {
            let unfinished = outcome.to_resume.iter().find(|u| u.task.task_id == args.task);
            runner.run(&args.task, unfinished, &mut committed).await?
        }
    };
    let mut out = std::io::stdout().lock();
    match result {
        RunOutcome::Completed { digest } => writeln!(out, "outcome completed {digest}")?,
        RunOutcome::Failed { reason } => writeln!(out, "outcome failed {reason}")?,
    }
    Ok(ExitCode::SUCCESS)
}
