//! `tinycoder chat "…"`: streams one reply from a role's model (the coder by
//! default) to stdout as it arrives. Proves the model client end to end.

use crate::config::{ModelRole, PromptId};
use crate::llm::{client_from_config, ChatMessage, ChatRequest, LlmError};
use futures::StreamExt;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder chat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The message to send (several words are joined with spaces).
    #[arg(required = true)]
    pub message: Vec<String>,
    /// Which role's model answers.
    #[arg(long, value_enum, default_value = "coder")]
    pub role: RoleArg,
    /// Cap on reply tokens (default: the role's models.ROLE.max_output_tokens).
    #[arg(long)]
    pub max_tokens: Option<u32>,
}

/// A model role, as a command-line value.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum RoleArg {
    Planner,
    Coder,
    Critic,
    Summarizer,
}

impl From<RoleArg> for ModelRole {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::Planner => ModelRole::Planner,
            RoleArg::Coder => ModelRole::Coder,
            RoleArg::Critic => ModelRole::Critic,
            RoleArg::Summarizer => ModelRole::Summarizer,
        }
    }
}

/// Runs `tinycoder chat`: exit 0 on a complete reply, 130 when cancelled with Ctrl-C, 1 on an error.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = super::CliContext::load(workspace)?;
    let config = &ctx.loaded.config;
    let prompts = ctx.prompts()?;
    let client = client_from_config(config)?;

    let mut req = ChatRequest::new(
        args.role.into(),
        vec![
            ChatMessage::system(prompts.render(PromptId::CHAT_SYSTEM, &[])?),
            ChatMessage::user(args.message.join(" ")),
        ],
    );
    req.max_tokens = args.max_tokens;

    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });

    let mut stdout = std::io::stdout().lock();
    let mut printed = false;
    let result = async {
        let mut stream = client.chat_stream(req, cancel.clone()).await?;
        while let Some(delta) = stream.next().await {
            let delta = delta?;
            printed = true;
            // Flush per delta so the reply shows as it is generated.
            let _ = stdout.write_all(delta.as_bytes()).and_then(|_| stdout.flush());
        }
        Ok::<(), LlmError>(())
    }
    .await;
    if printed {
        let _ = writeln!(stdout);
    }
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(LlmError::Cancelled) => {
            eprintln!("cancelled");
            Ok(ExitCode::from(130))
        }
        Err(e) => Err(e.into()),
    }
}
