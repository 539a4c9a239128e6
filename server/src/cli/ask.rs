//! `tinycoder ask QUESTION`: an answer from the project's own code, retrieved
//! by the index and the context builder, citing `file:line`. It never writes.

use super::CliContext;
use futures::StreamExt;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder ask`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question (several words are joined with spaces).
    #[arg(required = true)]
    pub question: Vec<String>,
    /// A file the question is about.
    #[arg(long)]
    pub file: Option<String>,
}

/// Streams the answer to stdout, then the places it was given.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let env = super::agent_cmd::agent_env(&ctx, super::agent_cmd::ModelCheck::Now).await?;
    let question = args.question.join(" ");
    let answer = crate::agent::prepare_answer(&env, &question, args.file.as_deref()).await?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let mut stream = env.model.chat_stream(answer.request, cancel.clone()).await?;
    let mut out = std::io::stdout().lock();
    while let Some(delta) = stream.next().await {
        let delta = delta?;
        let _ = out.write_all(delta.as_bytes()).and_then(|_| out.flush());
    }
    if !answer.sources.is_empty() {
        let _ = writeln!(out, "\n\nSources: {}", answer.sources.join(", "));
    }
    Ok(if cancel.is_cancelled() { ExitCode::from(130) } else { ExitCode::SUCCESS })
}
