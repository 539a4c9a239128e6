//! `tinycoder trust [--yes | --revoke]`: the workspace's own settings that
//! loosen security keys, and the user's recorded trust of them. Other commands
//! report ignored loosenings on stderr and, in a terminal, ask once.

use super::CliContext;
use crate::config::trust::{TrustDecision, WorkspaceTrust};
use crate::config::TrustRequest;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `tinycoder trust`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Trust the workspace's current settings without asking.
    #[arg(long)]
    pub yes: bool,
    /// Forget every trust decision for this workspace (its settings may then only tighten).
    #[arg(long, conflicts_with = "yes")]
    pub revoke: bool,
}

/// Runs `tinycoder trust`.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load_quiet(workspace)?;
    let mut out = std::io::stdout().lock();
    if args.revoke {
        let removed = WorkspaceTrust::load_user().revoke(&ctx.workspace)?;
        writeln!(
            out,
            "revoked {removed} trust decision(s) for {}; its own settings may only tighten security keys now",
            ctx.workspace.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let report = &ctx.loaded.trust;
    for l in &report.applied {
        writeln!(out, "applied (trusted): {l}")?;
    }
    if report.ignored.is_empty() {
        writeln!(out, "nothing to trust: no setting of this workspace loosens a security key without your trust")?;
        return Ok(ExitCode::SUCCESS);
    }
    for line in report.ignored_lines() {
        writeln!(out, "{line}")?;
    }
    let decision = if args.yes {
        TrustDecision::Trusted
    } else if std::io::stdin().is_terminal() {
        drop(out);
        ask()?
    } else {
        writeln!(out, "run `tinycoder trust --yes` to apply them (or move them into your own config file)")?;
        return Ok(ExitCode::SUCCESS);
    };
    record(&ctx.workspace, &report.requests, decision)?;
    let after = CliContext::load_quiet(Some(ctx.workspace.clone()))?;
    let mut out = std::io::stdout().lock();
    match decision {
        TrustDecision::Trusted => writeln!(
            out,
            "trusted {}: {} loosened setting(s) now apply (`tinycoder trust --revoke` to undo)",
            ctx.workspace.display(),
            after.loaded.trust.applied.len()
        )?,
        TrustDecision::Declined => writeln!(out, "kept ignored; not asked again until the settings change")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Reports ignored loosenings on stderr and, when a person is at the terminal and no
/// decision is recorded for the settings' current content, asks once.
pub fn report_and_ask(ctx: CliContext) -> anyhow::Result<CliContext> {
    let report = &ctx.loaded.trust;
    if report.ignored.is_empty() {
        return Ok(ctx);
    }
    let mut err = std::io::stderr().lock();
    for line in report.ignored_lines() {
        writeln!(err, "tinycoder: {line}")?;
    }
    let undecided = report.requests.iter().any(|r| r.recorded.is_none());
    if !(undecided && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        writeln!(err, "tinycoder: run `tinycoder trust` to review and apply them")?;
        return Ok(ctx);
    }
    drop(err);
    let decision = ask()?;
    record(&ctx.workspace, &report.requests, decision)?;
    if decision == TrustDecision::Trusted {
        return CliContext::load_quiet(Some(ctx.workspace));
    }
    Ok(ctx)
}

fn ask() -> anyhow::Result<TrustDecision> {
    let mut err = std::io::stderr().lock();
    write!(err, "Trust this workspace's settings and apply these loosenings? [y/N] ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(if matches!(line.trim(), "y" | "Y" | "yes") { TrustDecision::Trusted } else { TrustDecision::Declined })
}

fn record(workspace: &Path, requests: &[TrustRequest], decision: TrustDecision) -> anyhow::Result<()> {
    let mut trust = WorkspaceTrust::load_user();
    for r in requests {
        trust.record(workspace, r.source, &r.sha256, decision)?;
    }
    Ok(())
}
