//! `tinycoder undo [--yes] [--json] [--forget]`: puts back the files of the last
//! patch tinycoder applied, byte for byte, and deletes the files it created.
//! Refuses, writing nothing, when a file changed since the patch; asks first in
//! a terminal. Works without git: the history is in the workspace's data directory.

use super::CliContext;
use crate::undo::{plan_undo, read_current, restore, UndoAction, UndoHistory, UndoPoint};
use anyhow::Context;
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder undo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Undo without asking.
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object (undone, summary, files with their action) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Drop the last undo point without touching any file (to keep the files as they are now).
    #[arg(long, conflicts_with = "yes")]
    pub forget: bool,
}

/// How long ago `unix_ms` was, in words.
fn ago(unix_ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(unix_ms);
    let s = now.saturating_sub(unix_ms) / 1000;
    match s {
        0..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// Runs `tinycoder undo`.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let paths = ctx.paths();
    let history = UndoHistory::new(&paths, &ctx.loaded.config.undo);
    let Some(point) = history.last()? else {
        if args.json {
            println!("{}", json!({"undone": false, "reason": "nothing to undo"}));
        } else {
            eprintln!("nothing to undo: tinycoder has applied no patch here (or every one was undone)");
        }
        return Ok(ExitCode::SUCCESS);
    };
    if args.forget {
        history.remove(&point.id)?;
        let left = history.ids()?.len();
        if args.json {
            println!(
                "{}",
                json!({"undone": false, "forgotten": point.id, "summary": point.summary, "remaining": left})
            );
        } else {
            eprintln!("forgot the undo point of `{}`; no file was touched ({left} older left)", point.summary);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let root = &paths.root;
    let plan = plan_undo(&point, |p| read_current(root, p)).map_err(|e| {
        anyhow::anyhow!("{e}; or keep the files as they are and drop this undo point: `tinycoder undo --forget`")
    })?;
    if !args.json {
        eprintln!("the last patch tinycoder applied ({}, {}):", point.summary, ago(point.created_unix_ms));
        for f in &plan {
            println!("{} {}", f.action.verb(), f.path);
        }
    }
    if !args.yes {
        if args.json || !std::io::stdin().is_terminal() {
            anyhow::bail!("not undone: there is no terminal to confirm in; run `tinycoder undo --yes` to undo it");
        }
        if !confirm(&point)? {
            eprintln!("not undone");
            return Ok(ExitCode::from(1));
        }
    }
    let changed = restore(root, &point, &plan)?;
    history.remove(&point.id)?;
    let left = history.ids()?.len();
    if args.json {
        let v = json!({
            "undone": true, "point": point.id, "summary": point.summary,
            "task_id": point.task_id, "files": plan, "changed": changed, "remaining": left,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let restored = plan.iter().filter(|f| f.action == UndoAction::Restore).count();
        let deleted = plan.iter().filter(|f| f.action == UndoAction::Delete).count();
        let older = if left == 0 { String::new() } else { format!("; {left} older patch(es) can still be undone") };
        eprintln!("undone: {restored} file(s) restored, {deleted} deleted{older}");
    }
    Ok(ExitCode::SUCCESS)
}

fn confirm(point: &UndoPoint) -> anyhow::Result<bool> {
    eprint!("Undo it, restoring {}? [y/N] ", point.paths().join(", "));
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).context("cannot read the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
