//! Model clients: one [`ModelClient`] trait, with adapters for Ollama's native
//! API and OpenAI-compatible servers; roles map to models through config.
//!
//! Architecture invariant: nothing here knows about LSP, the agent or the
//! store. Callers pass a [`CancellationToken`]; cancelling it (or dropping the
//! returned stream) stops the HTTP stream at once.
//!
//! Start reading at [`ModelClient`], then `ollama.rs` / `openai.rs` (adapters),
//! `http.rs` (timeouts, cancellation, the streaming driver), `wire.rs`
//! (NDJSON and SSE readers), `gate.rs` (one model at a time), `budget.rs`
//! (refusal before sending), `structured.rs` (JSON-schema replies), `diagnose.rs`.

mod budget;
mod diagnose;
#[cfg(feature = "embedded")]
mod embedded;
mod error;
mod gate;
pub use gate::Priority;
mod http;
pub mod local_models;
mod ollama;
mod openai;
mod recorder;
mod shared;
mod structured;
mod types;
pub mod wire;

pub use budget::{check_fits, estimate_tokens, reply_tokens, PromptSize, TokenEstimator};
pub use diagnose::{diagnose, diagnose_with, ModelCheck};
pub use error::LlmError;
pub use ollama::OllamaClient;
pub use openai::OpenAiClient;
pub use recorder::{CallRecorder, RecordedCall};
pub use structured::{parse_reply, schema_of, structured};
pub use types::*;

use std::sync::Arc;

/// The client for `config.backend.kind` (with `auto` resolved, see [`resolve_backend`]),
/// with roles mapped to models by `config.models`.
pub fn client_from_config(config: &crate::config::Config) -> Result<Arc<dyn ModelClient>, LlmError> {
    use crate::config::BackendKind;
    Ok(match resolve_backend(config) {
        BackendKind::Ollama | BackendKind::Auto => Arc::new(OllamaClient::new(config)?),
        BackendKind::Openai => Arc::new(OpenAiClient::new(config)?),
        #[cfg(feature = "embedded")]
        BackendKind::Embedded => Arc::new(embedded::EmbeddedClient::new(config)?),
        #[cfg(not(feature = "embedded"))]
        BackendKind::Embedded => return Err(LlmError::EmbeddedNotBuilt),
    })
}

/// The backend `config` means. `auto` is Ollama when something answers at
/// `backend.url`, else the embedded backend when this build has it and every
/// role's model is found on disk, else Ollama (whose error then says how to start it).
pub fn resolve_backend(config: &crate::config::Config) -> crate::config::BackendKind {
    use crate::config::{BackendKind, ModelRole};
    if config.backend.kind != BackendKind::Auto {
        return config.backend.kind;
    }
    let embedded_ready = || {
        let locator = local_models::ModelLocator::new(&config.backend);
        cfg!(feature = "embedded") && ModelRole::ALL.iter().all(|r| locator.find_role(config, *r).is_ok())
    };
    if !server_answers(&config.backend.url, config.backend.connect_timeout_ms) && embedded_ready() {
        BackendKind::Embedded
    } else {
        BackendKind::Ollama
    }
}

/// Whether a TCP connection to `url`'s host and port opens (at most half a second).
fn server_answers(url: &str, connect_timeout_ms: u64) -> bool {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split('/').next().unwrap_or(rest);
    let with_port = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        authority.to_string()
    } else if url.starts_with("https://") {
        format!("{authority}:443")
    } else {
        format!("{authority}:80")
    };
    let timeout = std::time::Duration::from_millis(connect_timeout_ms.clamp(1, 500));
    with_port
        .to_socket_addrs()
        .map(|mut addrs| addrs.any(|a| std::net::TcpStream::connect_timeout(&a, timeout).is_ok()))
        .unwrap_or(false)
}

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
    ///
    /// Refuses a prompt over the role's `num_ctx` before sending ([`LlmError::OverBudget`]).
    /// The stream holds this client's model gate until it ends or is dropped, so
    /// calls on one client run one at a time: do not start a second call on the
    /// same client while holding an unfinished stream in the same task.
    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError>;

    /// A whole chat reply (adapters send a non-streamed request; the default collects the stream).
    async fn chat(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatReply, LlmError> {
        let mut stream = self.chat_stream(req, cancel).await?;
        let mut text = String::new();
        while let Some(delta) = stream.next().await {
            text.push_str(&delta?);
        }
        Ok(ChatReply { text })
    }

    /// A raw completion of `req.prompt` (fill-in-the-middle): the generated text, stop strings
    /// excluded. Yields the model gate to any chat call (it is background work: a chat or an
    /// agent step that wants the gate cancels it). Dropping the future or cancelling stops it.
    async fn complete(&self, _req: CompletionRequest, _cancel: CancellationToken) -> Result<String, LlmError> {
        Err(LlmError::CompletionUnsupported { backend: format!("{:?}", self.backend()).to_lowercase() })
    }

    /// Models the server has (name and, where known, context length).
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError>;

    /// Names of the models loaded in memory right now (Ollama `/api/ps`); `None` when the server cannot tell.
    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError>;

    /// Exact token count of `text` for `role`'s model, where the server can tokenize; `None` otherwise.
    async fn count_tokens(&self, role: crate::config::ModelRole, text: &str) -> Result<Option<usize>, LlmError>;

    /// Embeddings of `inputs` with `model`.
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError>;

    /// Checks, before a task starts, that the server answers and (where the server can
    /// tell) has `role`'s model: one cheap request, so a server that is down or a model
    /// that is missing is reported at once rather than after the task's first steps.
    /// Errors are those a call would give ([`LlmError::ServerDown`], [`LlmError::ModelMissing`]).
    async fn check_ready(&self, _role: crate::config::ModelRole) -> Result<(), LlmError> {
        Ok(())
    }

    /// After background work: loads the model of the last interactive call again if the
    /// background work unloaded it, at background priority (an interactive call cancels it).
    /// Servers that switch models on their own need nothing here.
    async fn restore_interactive_model(&self, _cancel: CancellationToken) -> Result<(), LlmError> {
        Ok(())
    }
}
