//! `tinycoder ask QUESTION`: an answer from the project's own code, retrieved
//! by the index and the context builder, citing `file:line`. It never writes.

use super::CliContext;
use crate::agent::MemoryContext;
use crate::config::{ModelRole, PromptId};
use crate::context::{ContextBuilder, ContextExtras, ContextRequest, RequestKind, SectionKind, TokenCounter};
use crate::llm::{ChatMessage, ChatRequest};
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
    let env = super::agent_cmd::agent_env(&ctx).await?;
    let question = args.question.join(" ");
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Coder);
    let memory = MemoryContext::new(&env);
    let builder = ContextBuilder {
        index: &env.index,
        prompts: &env.prompts,
        config: &env.config,
        memory: &memory,
        counter: &counter,
    };
    let extras = ContextExtras {
        request: Some(env.prompts.render(PromptId::ASK_REQUEST, &[("question", &question)])?),
        request_last: true,
        ..Default::default()
    };
    let kind = RequestKind::Question { text: question.clone(), path: args.file.clone() };
    let built = builder.build_with(&ContextRequest { kind, role: ModelRole::Coder }, &extras).await?;
    let req = ChatRequest::new(
        ModelRole::Coder,
        vec![ChatMessage::system(built.system()), ChatMessage::user(built.user_message())],
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let mut stream = env.model.chat_stream(req, cancel.clone()).await?;
    let mut out = std::io::stdout().lock();
    while let Some(delta) = stream.next().await {
        let delta = delta?;
        let _ = out.write_all(delta.as_bytes()).and_then(|_| out.flush());
    }
    let sources: Vec<&str> = built
        .sections
        .iter()
        .filter(|s| matches!(s.kind, SectionKind::Code | SectionKind::Related))
        .map(|s| s.title.split(" (").next().unwrap_or(&s.title))
        .collect();
    if !sources.is_empty() {
        let _ = writeln!(out, "\n\nSources: {}", sources.join(", "));
    }
    Ok(if cancel.is_cancelled() { ExitCode::from(130) } else { ExitCode::SUCCESS })
}
