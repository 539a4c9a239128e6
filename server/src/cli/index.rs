//! `tinycoder index` (not available yet: lands with its issue).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct IndexArgs {}

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct SearchArgs {}

/// Arguments (none yet).
#[derive(Debug, clap::Args)]
pub struct ContextArgs {}
pub async fn run_index(_args: IndexArgs, _workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder index` is not available yet")
}

pub async fn run_search(
    _args: SearchArgs,
    _workspace: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder index` is not available yet")
}

pub async fn run_context(
    _args: ContextArgs,
    _workspace: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tinycoder index` is not available yet")
}
