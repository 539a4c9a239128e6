//! `tinycoder acp`: the Agent Client Protocol agent over stdio, for the agent
//! panels of Zed, JetBrains IDEs, Neovim and terminal clients. Each session
//! opens the workspace at the `cwd` the client names.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder acp`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Serves one client on stdin/stdout until it disconnects.
pub async fn run(_args: Args, _workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    crate::acp::serve().await?;
    Ok(ExitCode::SUCCESS)
}
