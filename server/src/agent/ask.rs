//! Answering a question from the project's own code: the context builder picks
//! the code (the named file first, when there is one), the coder model answers
//! and cites `path:line`. Shared by `tinycoder ask` and the ACP adapter.

use super::{AgentEnv, AgentError, MemoryContext};
use crate::config::{ModelRole, PromptId};
use crate::context::{ContextBuilder, ContextExtras, ContextRequest, RequestKind, SectionKind, TokenCounter};
use crate::llm::{ChatMessage, ChatRequest};

/// The model call that answers a question, and the places its context came from.
#[derive(Debug, Clone)]
pub struct AnswerRequest {
    /// The chat request for the coder model (stream it).
    pub request: ChatRequest,
    /// `path:start-end` of every code section shown to the model, in order.
    pub sources: Vec<String>,
}

/// Builds the answer to `question`, about workspace-relative `file` when given.
/// The file's text comes from the user's view (`env.sources`), so unsaved buffers count.
pub async fn prepare_answer(env: &AgentEnv, question: &str, file: Option<&str>) -> Result<AnswerRequest, AgentError> {
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Coder);
    let memory = MemoryContext::new(env);
    let builder = ContextBuilder {
        index: &env.index,
        prompts: &env.prompts,
        config: &env.config,
        memory: &memory,
        counter: &counter,
    };
    let extras = ContextExtras {
        request: Some(env.prompts.render(PromptId::ASK_REQUEST, &[("question", question)])?),
        request_last: true,
        primary_text: file.and_then(|f| env.sources.read(f)),
        ..Default::default()
    };
    let kind = RequestKind::Question { text: question.to_string(), path: file.map(str::to_string) };
    let built = builder.build_with(&ContextRequest { kind, role: ModelRole::Coder }, &extras).await?;
    let request = ChatRequest::new(
        ModelRole::Coder,
        vec![ChatMessage::system(built.system()), ChatMessage::user(built.user_message())],
    );
    let sources = built
        .sections
        .iter()
        .filter(|s| matches!(s.kind, SectionKind::Code | SectionKind::Related))
        .map(|s| s.title.split(" (").next().unwrap_or(&s.title).to_string())
        .collect();
    Ok(AnswerRequest { request, sources })
}
