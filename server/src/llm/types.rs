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
    /// Cap on reply tokens; `None` = the role's `max_output_tokens`.
    pub max_tokens: Option<u32>,
    /// Sampling temperature for this call; `None` = the role's `temperature`.
    pub temperature: Option<f32>,
    /// Seed for this call; `None` = the role's `seed`.
    pub seed: Option<i64>,
    /// Interactive (someone waits) or background (runs when idle, yields at once).
    pub priority: super::gate::Priority,
}

impl ChatRequest {
    /// An interactive request for `role`'s model.
    pub fn new(role: ModelRole, messages: Vec<ChatMessage>) -> Self {
        Self {
            role,
            messages,
            json_schema: None,
            max_tokens: None,
            temperature: None,
            seed: None,
            priority: Default::default(),
        }
    }
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
