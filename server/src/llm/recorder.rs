//! A [`ModelClient`] that writes every chat request it passes on to a JSON-lines
//! file, so a benchmark can replay the exact prompts an agent run sent
//! (`tinycoder bench fix --record-calls FILE`, then `tinycoder bench lookup FILE`).

use super::{ChatMessage, ChatReply, ChatRequest, ChatStream, CompletionRequest, LlmError, ModelClient, ModelInfo};
use crate::config::{BackendKind, ModelRole};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One recorded chat request: what a replay needs to send it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedCall {
    pub role: ModelRole,
    pub messages: Vec<ChatMessage>,
    #[serde(default)]
    pub json_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub grammar: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

impl RecordedCall {
    /// The request again, as an interactive call.
    pub fn request(&self) -> ChatRequest {
        let mut req = ChatRequest::new(self.role, self.messages.clone());
        req.json_schema = self.json_schema.clone();
        req.grammar = self.grammar.clone();
        req.max_tokens = self.max_tokens;
        req
    }

    /// The calls of a file written by [`CallRecorder`], in order.
    pub fn read_all(path: &Path) -> Result<Vec<Self>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| format!("{}:{}: not a recorded call ({e})", path.display(), i + 1))
            })
            .collect()
    }
}

/// Passes every call to `inner`, writing each chat request to a file first.
pub struct CallRecorder {
    inner: Arc<dyn ModelClient>,
    out: Mutex<std::fs::File>,
}

impl CallRecorder {
    /// Records into `path` (created, or appended to).
    pub fn new(inner: Arc<dyn ModelClient>, path: &Path) -> std::io::Result<Self> {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self { inner, out: Mutex::new(out) })
    }

    fn record(&self, req: &ChatRequest) {
        let call = RecordedCall {
            role: req.role,
            messages: req.messages.clone(),
            json_schema: req.json_schema.clone(),
            grammar: req.grammar.clone(),
            max_tokens: req.max_tokens,
        };
        let Ok(mut line) = serde_json::to_string(&call) else { return };
        line.push('\n');
        // A recording that cannot be written must not fail the run it records.
        if let Err(e) = self.out.lock().map(|mut f| f.write_all(line.as_bytes())) {
            tracing::warn!("a model call could not be recorded: {e:?}");
        }
    }
}

#[async_trait]
impl ModelClient for CallRecorder {
    fn backend(&self) -> BackendKind {
        self.inner.backend()
    }

    fn url(&self) -> &str {
        self.inner.url()
    }

    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        self.record(&req);
        self.inner.chat_stream(req, cancel).await
    }

    async fn chat(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatReply, LlmError> {
        self.record(&req);
        self.inner.chat(req, cancel).await
    }

    async fn complete(&self, req: CompletionRequest, cancel: CancellationToken) -> Result<String, LlmError> {
        self.inner.complete(req, cancel).await
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        self.inner.list_models().await
    }

    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        self.inner.loaded_models().await
    }

    async fn count_tokens(&self, role: ModelRole, text: &str) -> Result<Option<usize>, LlmError> {
        self.inner.count_tokens(role, text).await
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.inner.embed(model, inputs).await
    }

    async fn check_ready(&self, role: ModelRole) -> Result<(), LlmError> {
        self.inner.check_ready(role).await
    }

    async fn restore_interactive_model(&self, cancel: CancellationToken) -> Result<(), LlmError> {
        self.inner.restore_interactive_model(cancel).await
    }
}
