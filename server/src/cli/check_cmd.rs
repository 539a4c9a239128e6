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
