//! `tinycoder lsp`: the language server over stdio (stdout carries only the protocol; logs go to stderr).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Arguments of `tinycoder lsp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

/// Runs the server until the client sends `exit`; exit code 0 when `shutdown` came first, 1 otherwise (LSP).
pub async fn run(_args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let options = crate::lsp::ServerOptions {
        workspace,
        model_factory: Arc::new(|config| crate::llm::client_from_config(config).map_err(|e| e.to_string())),
        shutdown_received: Arc::new(AtomicBool::new(false)),
    };
    let clean = crate::lsp::serve(tokio::io::stdin(), tokio::io::stdout(), options).await;
    // Exit at once, as LSP asks after `exit`: the stdin reader may still be blocked on a
    // client that keeps the pipe open, and waiting for it would hang the process.
    std::process::exit(if clean { 0 } else { 1 })
}
