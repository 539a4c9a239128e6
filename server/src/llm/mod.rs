//! Model clients: one [`ModelClient`] trait, with adapters for Ollama's native
//! API and OpenAI-compatible servers; roles map to models through config.
//!
//! Architecture invariant: nothing here knows about LSP, the agent or the
//! store. Callers pass a [`CancellationToken`]; cancelling it (or dropping the
//! returned stream) stops the HTTP stream at once.

mod error;
mod types;

pub use error::LlmError;
pub use types::*;

use async_trait::async_trait;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// A model server, seen through the operations tinycoder needs.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Which protocol this client speaks.
    fn backend(&self) -> crate::config::BackendKind;

    /// The server's base URL (for messages).
    fn url(&self) -> &str;

    /// Starts a streamed chat with the model of `req.role`; yields text deltas in order.
    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError>;

    /// A whole chat reply (the stream, collected).
    async fn chat(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatReply, LlmError> {
        let mut stream = self.chat_stream(req, cancel).await?;
        let mut text = String::new();
        while let Some(delta) = stream.next().await {
            text.push_str(&delta?);
        }
        Ok(ChatReply { text })
    }

    /// Models the server has (name and, where known, context length).
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError>;

    /// Names of the models loaded in memory right now (Ollama `/api/ps`); `None` when the server cannot tell.
    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError>;

    /// Exact token count of `text` for `role`'s model, where the server can tokenize; `None` otherwise.
    async fn count_tokens(&self, role: crate::config::ModelRole, text: &str) -> Result<Option<usize>, LlmError>;

    /// Embeddings of `inputs` with `model`.
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError>;
}
