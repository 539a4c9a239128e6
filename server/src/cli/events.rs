//! `tinycoder events` (not available yet: lands with its issue).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct EventsArgs {}

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {}
pub async fn run_events(_args: EventsArgs, _workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder events` is not available yet")
}

pub async fn run_replay(_args: ReplayArgs, _workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder events` is not available yet")
}
