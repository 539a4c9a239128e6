//! `ScriptedModel`: a scripted model double for unit tests of the runtime's
//! control flow. It is never an end-to-end test: those run real models.

use crate::config::{BackendKind, ModelRole};
use crate::llm::{ChatRequest, ChatStream, LlmError, ModelClient, ModelInfo};
use std::collections::VecDeque;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// What the double does on its next call.
#[derive(Debug, Clone)]
pub enum Script {
    /// Streams this text (in a few chunks).
    Reply(String),
    /// Streams one chunk, then waits until cancelled.
    Hang,
    /// Fails as if the server were down.
    Down,
}

/// A scripted model double: answers calls in order from its script and records every request.
#[derive(Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Script>>,
    /// Every request received, in order.
    pub seen: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    /// A double answering with `script`, in order; once it runs out it answers `Down`.
    pub fn new(script: Vec<Script>) -> Self {
        Self { script: Mutex::new(script.into()), seen: Mutex::new(Vec::new()) }
    }

    /// The requests of `role` so far.
    pub fn requests(&self, role: ModelRole) -> Vec<ChatRequest> {
        self.seen.lock().map(|s| s.iter().filter(|r| r.role == role).cloned().collect()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl ModelClient for ScriptedModel {
    fn backend(&self) -> BackendKind {
        BackendKind::Openai
    }

    fn url(&self) -> &str {
        "scripted://model"
    }

    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(req);
        }
        let next = self.script.lock().ok().and_then(|mut s| s.pop_front()).unwrap_or(Script::Down);
        match next {
            Script::Reply(text) => {
                let chunks: Vec<Result<String, LlmError>> =
                    text.split_inclusive('\n').map(|c| Ok(c.to_string())).collect();
                Ok(Box::pin(futures::stream::iter(chunks)))
            }
            Script::Hang => Ok(Box::pin(futures::stream::unfold(0u8, move |state| {
                let cancel = cancel.clone();
                async move {
                    match state {
                        0 => Some((Ok("```python\n".to_string()), 1)),
                        1 => {
                            cancel.cancelled().await;
                            Some((Err(LlmError::Cancelled), 2))
                        }
                        _ => None,
                    }
                }
            }))),
            Script::Down => {
                Err(LlmError::ServerDown { url: "scripted://model".into(), detail: "the script ran out".into() })
            }
        }
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(Vec::new())
    }

    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        Ok(None)
    }

    async fn count_tokens(&self, _role: ModelRole, _text: &str) -> Result<Option<usize>, LlmError> {
        Ok(None)
    }

    async fn embed(&self, _model: &str, _inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Ok(Vec::new())
    }
}
