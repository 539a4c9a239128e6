//! Plain request and reply types of the model clients.

use crate::config::ModelRole;
use serde::{Deserialize, Serialize};
use std::pin::Pin;

/// Who said a chat message.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: ChatRole::System, content: content.into() }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: ChatRole::User, content: content.into() }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: ChatRole::Assistant, content: content.into() }
    }
}

/// A chat request for the model of one role.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub role: ModelRole,
    pub messages: Vec<ChatMessage>,
    /// A JSON schema the reply must follow (Ollama `format`, OpenAI `response_format`).
    pub json_schema: Option<serde_json::Value>,
    /// A llama.cpp grammar (GBNF) the reply must follow where the backend takes one (the
    /// embedded backend; llama-server's `grammar` field); ignored elsewhere and under a JSON schema.
    pub grammar: Option<String>,
    /// Cap on reply tokens; `None` = the role's `max_output_tokens`.
    pub max_tokens: Option<u32>,
    /// Sampling temperature for this call; `None` = the role's `temperature`.
    pub temperature: Option<f32>,
    /// Seed for this call; `None` = the role's `seed`.
    pub seed: Option<i64>,
    /// Interactive (someone waits) or background (runs when idle, yields at once).
    pub priority: super::gate::Priority,
    /// Where the server's prompt accounting of this call lands, when it reports one.
    pub usage: Option<PromptUsageSink>,
}

/// How the server processed a call's prompt: tokens it evaluated, and tokens it
/// took from its prompt cache (`None` when the server does not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptUsage {
    pub evaluated: usize,
    pub cached: Option<usize>,
    /// Reply tokens that came from prompt-lookup drafts (embedded backend; `None` when it did not draft).
    #[serde(default)]
    pub drafted: Option<usize>,
}

/// A slot the streaming driver fills with the call's [`PromptUsage`].
pub type PromptUsageSink = std::sync::Arc<std::sync::Mutex<Option<PromptUsage>>>;

impl PromptUsage {
    /// From a reply object: llama-server `timings` (`prompt_n`, `cache_n`), OpenAI
    /// `usage` (`prompt_tokens`, `prompt_tokens_details.cached_tokens`) or Ollama's
    /// `prompt_eval_count`.
    pub fn from_reply(v: &serde_json::Value) -> Option<Self> {
        let n = |p: &str| v.pointer(p).and_then(|x| x.as_u64()).map(|x| x as usize);
        if let Some(evaluated) = n("/timings/prompt_n") {
            return Some(Self { evaluated, cached: n("/timings/cache_n"), drafted: None });
        }
        if let Some(total) = n("/usage/prompt_tokens") {
            let cached = n("/usage/prompt_tokens_details/cached_tokens");
            return Some(Self { evaluated: total - cached.unwrap_or(0).min(total), cached, drafted: None });
        }
        n("/prompt_eval_count").map(|evaluated| Self { evaluated, cached: None, drafted: None })
    }
}

impl ChatRequest {
    /// An interactive request for `role`'s model.
    pub fn new(role: ModelRole, messages: Vec<ChatMessage>) -> Self {
        Self {
            role,
            messages,
            json_schema: None,
            grammar: None,
            max_tokens: None,
            temperature: None,
            seed: None,
            priority: Default::default(),
            usage: None,
        }
    }
}

/// A raw text completion (fill-in-the-middle): the prompt goes to the model as is,
/// without a chat template; greedy (temperature 0).
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// Whose model completes (its name, context size and keep-alive).
    pub role: ModelRole,
    /// The whole prompt, special tokens included.
    pub prompt: String,
    /// Cap on generated tokens.
    pub max_tokens: u32,
    /// Generation ends before any of these strings.
    pub stop: Vec<String>,
    /// The whole call's time cap (connecting, waiting and reading the reply).
    pub timeout: std::time::Duration,
    /// Filled with how much of the prompt was evaluated and how much came from the cache, where the backend can tell.
    pub usage: Option<PromptUsageSink>,
}

/// A whole reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatReply {
    pub text: String,
}

/// Streamed reply text, delta by delta.
pub type ChatStream = Pin<Box<dyn futures::Stream<Item = Result<String, super::LlmError>> + Send>>;

/// A model the server has.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ModelInfo {
    pub name: String,
    /// The model's trained context length, where the server reports it.
    pub context_length: Option<u64>,
    pub size_bytes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::PromptUsage;
    use serde_json::json;

    #[test]
    fn prompt_usage_reads_each_servers_accounting() {
        let llama = json!({"timings": {"prompt_n": 7, "cache_n": 120}});
        assert_eq!(
            PromptUsage::from_reply(&llama),
            Some(PromptUsage { evaluated: 7, cached: Some(120), drafted: None })
        );
        let openai = json!({"usage": {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 64}}});
        assert_eq!(
            PromptUsage::from_reply(&openai),
            Some(PromptUsage { evaluated: 36, cached: Some(64), drafted: None })
        );
        let ollama = json!({"done": true, "prompt_eval_count": 12});
        assert_eq!(PromptUsage::from_reply(&ollama), Some(PromptUsage { evaluated: 12, cached: None, drafted: None }));
        assert_eq!(PromptUsage::from_reply(&json!({"choices": []})), None);
    }
}
