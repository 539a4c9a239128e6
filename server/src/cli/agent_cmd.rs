//! `tinycoder fix`, `tinycoder edit` and `tinycoder resume`: the agent from a
//! terminal. Progress goes to stderr; the diff (or `--json`) to stdout. Files are
//! written only after the tests passed in the shadow and the user agreed (or
//! `--yes`), atomically, and only if nobody changed them meanwhile; each written
//! patch is an undo point (`tinycoder undo`), and `--commit` commits its files.

use super::CliContext;
use crate::agent::{
    describe_event, AgentEnv, AgentRequest, DiagnosticOrigin, DiskSources, Job, JobContext, Location, ReportStatus,
    TaskOptions, TaskReport, TestSummary, Workspace,
};
use crate::edits::Patch;
use crate::store::EventBus;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What every agent command accepts.
#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// Write the patch without asking.
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object (status, attempts, model calls, tokens, files, diff, tests) instead of text.
    #[arg(long)]
    pub json: bool,
    /// When no attempt passes the tests, still show (and with --yes write) the best one.
    #[arg(long)]
    pub best_attempt: bool,
    /// After writing the patch, commit exactly its files with git (the task's summary is the message).
    #[arg(long)]
    pub commit: bool,
}

/// Arguments of `tinycoder fix`.
#[derive(Debug, clap::Args)]
pub struct FixArgs {
    /// FILE or FILE:LINE to fix (default: the first failing test of the project).
    pub target: Option<String>,
    /// The error or diagnostic at FILE:LINE, or in your own words what goes wrong (shown to the model beside the failing test).
    #[arg(long)]
    pub message: Option<String>,
    /// The tool that reported the diagnostic (`rustc`, `ruff`, `Pyright`, `mypy`): its checker
    /// (`[checkers.*]`) must stop reporting it before a patch is proposed.
    #[arg(long, requires = "target")]
    pub source: Option<String>,
    /// The diagnostic's code (`E0425`, `F821`), with --source.
    #[arg(long, requires = "source")]
    pub code: Option<String>,
    /// Run the project's checkers (cargo check, ruff, …) and fix the first error they report.
    #[arg(long, conflicts_with_all = ["target", "source"])]
    pub check: bool,
    /// Fix every error the project's checkers report in FILE, one at a time, re-checking after each;
    /// one combined diff is shown (at most runtime.fix_all_max_diagnostics fixes).
    #[arg(long, requires = "target", conflicts_with_all = ["check", "source", "message"])]
    pub all: bool,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// Arguments of `tinycoder edit`.
#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// FILE or FILE:START-END to change.
    pub target: String,
    /// What to do, in words.
    #[arg(long, short)]
    pub instruction: String,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// Arguments of `tinycoder resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The task to resume (default: every unfinished task, newest first).
    pub task: Option<String>,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// `tinycoder fix [FILE[:LINE]] [--message TEXT] [--source TOOL [--code CODE]]`, `--check`, or `FILE --all`.
pub async fn run_fix(args: FixArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if args.check {
        let ctx = CliContext::load(workspace)?;
        return match super::check_cmd::first_checked_error(&ctx).await? {
            Some(request) => run_request_in(ctx, request, &args.apply).await,
            None => Ok(ExitCode::SUCCESS),
        };
    }
    if args.all {
        let ctx = CliContext::load(workspace)?;
        let file = args.target.as_deref().unwrap_or_default();
        return super::check_cmd::fix_all_in_file(ctx, file, &args.apply).await;
    }
    let target = args.target.as_deref().map(Location::parse).transpose().map_err(anyhow::Error::msg)?;
    let origin = args.source.map(|source| DiagnosticOrigin { source, code: args.code.unwrap_or_default() });
    let request = AgentRequest::Fix { target, message: args.message, from_tests: false, origin };
    run_request(request, &args.apply, workspace).await
}

/// `tinycoder edit FILE[:START-END] --instruction TEXT`.
pub async fn run_edit(args: EditArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let target = Location::parse(&args.target).map_err(anyhow::Error::msg)?;
    run_request(
        AgentRequest::Edit { target, instruction: args.instruction, comments_only: false },
        &args.apply,
        workspace,
    )
    .await
}

/// Whether [`open_workspace`] checks that the coder's model answers before indexing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModelCheck {
    /// The command calls the model: fail at once when its server or model is missing.
    Now,
    /// The caller checks itself, once it knows it calls the model.
    Deferred,
}

/// The workspace (model, store, index brought up to date). Local problems (store,
/// index) are reported first, then the model's, before the index catches up and
/// before any task starts.
pub(super) async fn open_workspace(ctx: &CliContext, check: ModelCheck) -> anyhow::Result<Workspace> {
    let ws = Workspace::open(&ctx.workspace, ctx.loaded.config.clone())?;
    if check == ModelCheck::Now {
        ws.model.check_ready(crate::config::ModelRole::Coder).await?;
    }
    ws.ready().await.map_err(anyhow::Error::msg)?;
    Ok(ws)
}

/// The agent's environment in a terminal: the files on disk, questions asked on stderr.
pub(super) fn terminal_env(ctx: &CliContext, ws: &Workspace) -> AgentEnv {
    ws.env(
        Arc::new(DiskSources::new(&ctx.workspace)),
        Arc::new(super::permissions::TerminalHuman::new(&ctx.loaded.config)),
    )
}

/// [`open_workspace`] and [`terminal_env`] together, for commands that run one step themselves.
pub(super) async fn agent_env(ctx: &CliContext, check: ModelCheck) -> anyhow::Result<AgentEnv> {
    let ws = open_workspace(ctx, check).await?;
    Ok(terminal_env(ctx, &ws))
}

/// What a job started from the terminal runs with: `env`'s disk and terminal, the options asked for, Ctrl-C.
pub(super) fn job_context(env: &AgentEnv, apply: &ApplyArgs, cancel: CancellationToken) -> JobContext {
    let options = TaskOptions { best_attempt: apply.best_attempt, origin: "cli".into(), session_id: None };
    JobContext::new(env, options, cancel)
}

pub(super) fn ctrl_c_token() -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    cancel
}

/// Prints the task's events as progress lines on stderr until the task ends.
pub(super) fn follow(bus: &EventBus, task_id: &str) -> tokio::task::JoinHandle<()> {
    let mut rx = bus.subscribe();
    let task_id = task_id.to_string();
    tokio::spawn(async move {
        while let Ok(e) = rx.recv().await {
            if e.task_id != task_id {
                continue;
            }
            // The task's outcome is printed once, by `finish`.
            if matches!(
                e.event_type,
                crate::contracts::EventType::TaskCompleted | crate::contracts::EventType::TaskFailed
            ) {
                break;
            }
            if let Some(line) = describe_event(&e) {
                eprintln!("{line}");
            }
        }
    })
}

async fn run_request(request: AgentRequest, apply: &ApplyArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    run_request_in(CliContext::load(workspace)?, request, apply).await
}

async fn run_request_in(ctx: CliContext, request: AgentRequest, apply: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let task_id = uuid::Uuid::new_v4().to_string();
    run_job(ctx, Job::New { task_id, request }, apply).await
}

/// Runs a new job in the workspace of `ctx`, its progress on stderr, then [`finish`]es it.
pub(super) async fn run_job(ctx: CliContext, job: Job, apply: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let ws = open_workspace(&ctx, ModelCheck::Now).await?;
    let unfinished = ws.bus.unfinished_tasks().await?;
    if !unfinished.is_empty() {
        eprintln!(
            "note: {} unfinished task(s) from an earlier run; `tinycoder resume` continues them",
            unfinished.len()
        );
    }
    let env = terminal_env(&ctx, &ws);
    let printer = follow(&ws.bus, job.task_id());
    let cancel = ctrl_c_token();
    let report = ws.start(job, job_context(&env, apply, cancel.clone())).await?;
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), printer).await;
    finish(&env, report, apply, cancel.is_cancelled(), None).await
}

/// `tinycoder resume [TASK]`: continues unfinished tasks from their checkpoints.
pub async fn run_resume(args: ResumeArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let ws = open_workspace(&ctx, ModelCheck::Deferred).await?;
    let mut unfinished = ws.bus.unfinished_tasks().await?;
    if let Some(id) = &args.task {
        unfinished.retain(|u| u.task.task_id.starts_with(id.as_str()));
        anyhow::ensure!(!unfinished.is_empty(), "no unfinished task starts with `{id}` (see `tinycoder events`)");
    }
    if unfinished.is_empty() {
        eprintln!("no unfinished tasks");
        return Ok(ExitCode::SUCCESS);
    }
    ws.model.check_ready(crate::config::ModelRole::Coder).await?;
    let env = terminal_env(&ctx, &ws);
    let mut code = ExitCode::SUCCESS;
    for u in unfinished {
        let printer = follow(&ws.bus, &u.task.task_id);
        let cancel = ctrl_c_token();
        match ws.start(Job::Resume(Box::new(u)), job_context(&env, &args.apply, cancel.clone())).await {
            Ok(report) => {
                let _ = tokio::time::timeout(std::time::Duration::from_millis(500), printer).await;
                code = finish(&env, report, &args.apply, cancel.is_cancelled(), None).await?;
            }
            Err(e) => {
                eprintln!("{e}");
                code = ExitCode::from(1);
            }
        }
    }
    Ok(code)
}

/// Shows the outcome, writes the patch when agreed, re-runs the tests on the real tree.
pub(super) async fn finish(
    env: &AgentEnv,
    report: TaskReport,
    apply: &ApplyArgs,
    cancelled: bool,
    extra: Option<serde_json::Value>,
) -> anyhow::Result<ExitCode> {
    Ok(finish_with(env, report, apply, cancelled, extra).await?.code)
}

/// How [`finish_with`] ended: its exit code, whether the patch was written, the tests on the real tree.
pub(super) struct Finished {
    pub code: ExitCode,
    pub applied: bool,
    pub real_tree: Option<TestSummary>,
    pub commit_failed: bool,
}

/// [`finish`], telling what it did.
pub(super) async fn finish_with(
    env: &AgentEnv,
    report: TaskReport,
    apply: &ApplyArgs,
    cancelled: bool,
    extra: Option<serde_json::Value>,
) -> anyhow::Result<Finished> {
    let mut applied = false;
    let mut real_tree: Option<TestSummary> = None;
    let mut note = String::new();
    let mut committed: Option<Result<crate::undo::Commit, String>> = None;
    let mut diff_head: Option<String> = None;
    if let (true, Some(patch)) = (report.has_patch(), &report.patch) {
        let (root, shown) = (env.paths.root.clone(), patch.clone());
        diff_head = tokio::task::spawn_blocking(move || crate::undo::diff_against_head(&root, &shown)).await?;
        if !apply.json {
            println!("{}", report.diff.trim_end());
            if let Some(head) = diff_head.as_deref().filter(|h| *h != report.diff) {
                // The files hold uncommitted changes of the user's own: a commit of them holds those too.
                eprintln!("{}", uncommitted_note(&report.files_changed, apply.commit));
                if apply.commit {
                    println!("{}", head.trim_end());
                }
            }
        }
        if !apply.json {
            // What the tests cannot vouch for, said before the user agrees.
            for q in &report.questions {
                eprintln!("question: {q}");
            }
        }
        let agreed = apply.yes || (!apply.json && ask_to_apply(patch, report.status));
        if agreed {
            match write_patch(env, &report, patch) {
                Ok(()) => {
                    applied = true;
                    if apply.commit {
                        committed = Some(commit_patch(env, &report, patch).await);
                    }
                    let cancel = CancellationToken::new();
                    real_tree = crate::agent::run_tests(env, &[], &cancel).await.ok();
                }
                Err(e) => note = format!("nothing written: {e}"),
            }
        } else {
            note = "not applied (run again with --yes to write it)".into();
        }
    }
    let passes_now = match (&report.status, &real_tree) {
        (ReportStatus::NothingToFix, _) => true,
        (_, Some(t)) => t.passed,
        _ => false,
    };
    if apply.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(obj) = v.as_object_mut() {
            obj.remove("patch");
            obj.insert("applied".into(), applied.into());
            obj.insert("tests_real_tree".into(), serde_json::to_value(&real_tree)?);
            obj.insert("diff_head".into(), serde_json::to_value(&diff_head)?);
            if !note.is_empty() {
                obj.insert("note".into(), note.clone().into());
            }
            if let Some(serde_json::Value::Object(more)) = extra {
                obj.extend(more);
            }
            match &committed {
                Some(Ok(c)) => drop(obj.insert("commit".into(), c.id.clone().into())),
                Some(Err(e)) => drop(obj.insert("commit_error".into(), e.clone().into())),
                None => {}
            }
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if report.status == ReportStatus::Failed && !report.diff.is_empty() {
            eprintln!("the best attempt (not applied; its tests fail):");
            println!("{}", report.diff.trim_end());
        }
        match report.status {
            ReportStatus::Failed => eprintln!("failed: {}", report.summary),
            _ => eprintln!("{}", report.summary),
        }
        if let Some(t) = &real_tree {
            eprintln!("written: {}; tests on your tree: {}", report.files_changed.join(", "), t.headline());
        }
        if !note.is_empty() {
            eprintln!("{note}");
        }
        match &committed {
            Some(Ok(c)) => eprintln!("committed {}: {}", &c.id[..c.id.len().min(12)], c.subject),
            Some(Err(e)) => eprintln!("error: not committed: {e}"),
            None => {}
        }
    }
    let commit_failed = matches!(committed, Some(Err(_)));
    let code = if cancelled {
        ExitCode::from(130)
    } else if passes_now && !commit_failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    Ok(Finished { code, applied, real_tree, commit_failed })
}

/// Says that the patched files also hold the user's uncommitted changes (the diff against HEAD differs).
fn uncommitted_note(files: &[String], commit: bool) -> String {
    let files = files.join(", ");
    if commit {
        format!("{files} also hold uncommitted changes of yours; the commit records them too, as this diff against HEAD shows:")
    } else {
        format!("note: {files} also hold uncommitted changes of yours (`--json` shows the patch's diff against HEAD as `diff_head`)")
    }
}

fn ask_to_apply(patch: &Patch, status: ReportStatus) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    let warning = if status == ReportStatus::BestAttempt { " (its tests FAIL)" } else { "" };
    eprint!("Apply this patch to {}{warning}? [y/N] ", patch.files().join(", "));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// Writes the patch (each file atomically, permissions kept, nothing if a file changed
/// since the task read it) and records it as the newest undo point.
fn write_patch(env: &AgentEnv, report: &TaskReport, patch: &Patch) -> Result<(), crate::undo::UndoError> {
    let info = crate::undo::PatchInfo { summary: report.summary.clone(), task_id: Some(report.task_id.clone()) };
    crate::undo::apply_patch(&env.paths, &env.config.undo, patch, &info).map(|_| ())
}

/// Commits exactly the patch's files (`--commit`); the error is for the user, the files stay written.
async fn commit_patch(env: &AgentEnv, report: &TaskReport, patch: &Patch) -> Result<crate::undo::Commit, String> {
    let message = crate::undo::commit_message(
        &report.summary,
        Some(&report.task_id),
        env.config.undo.commit_subject_chars as usize,
    );
    let (root, files) = (env.paths.root.clone(), patch.files());
    tokio::task::spawn_blocking(move || crate::undo::commit(&root, &files, &message))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}
