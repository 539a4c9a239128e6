//! `tinycoder lsp` (not available yet: lands with its issue).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct Args {}
pub async fn run(_args: Args, _workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder lsp` is not available yet")
}
