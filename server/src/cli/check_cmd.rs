//! `tinycoder fix --check`: the project's checkers pick the error to fix.

use super::CliContext;
use crate::agent::{AgentRequest, DiagnosticOrigin, Location};
use crate::sandbox::{checkers_for_project, list_workspace_files, run_checker, CheckerChoice};
use tokio_util::sync::CancellationToken;

/// Runs each checker that applies to the workspace, in name order, and makes a
/// fix request of the first error one reports; `None` (said on stderr) when none does.
pub(super) async fn first_checked_error(ctx: &CliContext) -> anyhow::Result<Option<AgentRequest>> {
    let config = &ctx.loaded.config;
    let files = list_workspace_files(&ctx.workspace)?;
    let choices = checkers_for_project(config, &ctx.workspace, &files);
    if choices.is_empty() {
        anyhow::bail!(
            "no checker applies to {} (configured: {}); add one as [checkers.NAME] in the config",
            ctx.workspace.display(),
            config.checkers.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let paths = ctx.paths();
    let mut ran = Vec::new();
    for choice in choices {
        let checker = match choice {
            CheckerChoice::Use(c) => c,
            other => {
                eprintln!("skipped: {}", other.why_not().unwrap_or_default());
                continue;
            }
        };
        eprintln!("checking with `{}` in the sandbox", checker.display());
        let report = run_checker(config, &paths, &[], &checker, &CancellationToken::new()).await?;
        let Some(first) = report.errors().next().cloned() else {
            ran.push(checker.name);
            continue;
        };
        eprintln!("{} error(s); fixing the first: {}", report.errors().count(), first.headline());
        return Ok(Some(AgentRequest::Fix {
            target: Some(Location::line(first.path, first.line)),
            message: Some(first.message),
            from_tests: false,
            origin: Some(DiagnosticOrigin { source: checker.config.sources[0].clone(), code: first.code }),
        }));
    }
    if ran.is_empty() {
        anyhow::bail!("no checker could run (see above)");
    }
    eprintln!("no error reported ({})", ran.join(", "));
    Ok(None)
}

/// `tinycoder fix FILE --all`: every error the checkers report in FILE, fixed one
/// at a time (each outcome on stderr), then one combined diff to agree to.
pub(super) async fn fix_all_in_file(
    ctx: CliContext,
    file: &str,
    apply: &super::agent_cmd::ApplyArgs,
) -> anyhow::Result<std::process::ExitCode> {
    use super::agent_cmd::{finish_with, follow, job_context, open_workspace, terminal_env, ModelCheck};
    use crate::agent::{fix_all, FixAllContext, FixAllProgress, OutcomeKind};
    let path = ctx.workspace.join(file);
    let ws = open_workspace(&ctx, ModelCheck::Now).await?;
    let rel = ws
        .relative(&path)
        .or_else(|| ws.relative(&path.canonicalize().ok()?))
        .ok_or_else(|| anyhow::anyhow!("{file} is not a file inside the workspace {}", ctx.workspace.display()))?;
    anyhow::ensure!(
        !rel.contains(':') || path.is_file(),
        "`--all` takes a FILE without a line ({file}); it fixes every error the checkers report in it"
    );
    let env = terminal_env(&ctx, &ws);
    let cancel = super::agent_cmd::ctrl_c_token();
    let job = job_context(&env, apply, cancel.clone());
    let fa = FixAllContext { sources: job.sources, human: job.human, options: job.options, cancel: job.cancel };
    let printers = std::sync::Mutex::new(Vec::new());
    let on_progress = |p: FixAllProgress| match p {
        FixAllProgress::Checking { command, .. } => eprintln!("checking {rel} with `{command}` in the sandbox"),
        FixAllProgress::Fixing { task_id, diagnostic } => {
            eprintln!("fixing {}", diagnostic.headline());
            if let Ok(mut p) = printers.lock() {
                p.push(follow(&ws.bus, &task_id));
            }
        }
        FixAllProgress::Done(o) => eprintln!("{}", o.line()),
    };
    let report = fix_all(&ws, &rel, fa, &on_progress).await?;
    for p in printers.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default() {
        p.abort();
    }
    for why in &report.not_run {
        eprintln!("skipped: {why}");
    }
    let extra = serde_json::json!({
        "outcomes": report.outcomes,
        "remaining": report.remaining,
        "not_run": report.not_run,
    });
    let task = report.task_report(&uuid::Uuid::new_v4().to_string());
    let has_patch = task.has_patch();
    let done = finish_with(&env, task, apply, report.cancelled, Some(extra)).await?;
    if !apply.json && !report.remaining.is_empty() {
        eprintln!("still reported: {}", report.remaining.join("; "));
    }
    let failed_here = report.count(OutcomeKind::Failed) + report.count(OutcomeKind::Skipped) > 0;
    Ok(if report.cancelled {
        std::process::ExitCode::from(130)
    } else if !report.remaining.is_empty()
        || failed_here
        || (has_patch && !done.applied)
        || done.commit_failed
        || done.real_tree.is_some_and(|t| !t.passed)
    {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
