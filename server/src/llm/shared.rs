//! What both adapters hold: settings, the HTTP client, the gate.

use super::budget::{check_fits, estimate_tokens, reply_tokens, PromptSize};
use super::gate::{GateGuard, ModelGate, Priority};
use super::http::{build_client, Timeouts};
use super::wire::first_stop;
use super::{ChatRequest, ChatStream, LlmError};
use crate::config::{BudgetConfig, Config, ModelConfig, ModelsConfig};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// Settings and connections shared by the adapters.
#[derive(Debug, Clone)]
pub struct ClientShared {
    /// Base URL without a trailing slash.
    pub url: String,
    pub models: ModelsConfig,
    pub budget: BudgetConfig,
    pub max_loaded: usize,
    pub timeouts: Timeouts,
    pub http: reqwest::Client,
    pub gate: ModelGate,
    /// How long background calls wait for no interactive call (`backend.background_idle_ms`).
    pub background_idle: std::time::Duration,
}

impl ClientShared {
    /// Builds the shared parts from the configuration.
    pub fn new(config: &Config) -> Result<Self, LlmError> {
        let timeouts = Timeouts::from_config(&config.backend);
        Ok(Self {
            url: config.backend.url.trim_end_matches('/').to_string(),
            models: config.models.clone(),
            budget: config.budget.clone(),
            max_loaded: config.backend.max_loaded_models.max(1) as usize,
            http: build_client(&timeouts)?,
            timeouts,
            gate: ModelGate::default(),
            background_idle: std::time::Duration::from_millis(config.backend.background_idle_ms),
        })
    }

    /// Takes the gate at the request's priority; returns it with the token the call must
    /// obey (for a background call, also cancelled when an interactive call arrives).
    pub async fn acquire(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<(GateGuard, CancellationToken), LlmError> {
        match req.priority {
            Priority::Interactive => Ok((self.gate.acquire(cancel).await?, cancel.clone())),
            Priority::Background => self.gate.acquire_background(self.background_idle, cancel).await,
        }
    }

    /// Takes the gate for a raw completion: only while no chat call holds or wants it, and
    /// given up (the returned token is cancelled) as soon as one does.
    pub async fn acquire_for_completion(
        &self,
        cancel: &CancellationToken,
    ) -> Result<(GateGuard, CancellationToken), LlmError> {
        self.gate.acquire_background(std::time::Duration::ZERO, cancel).await
    }

    /// The model settings of the request's role.
    pub fn model(&self, req: &ChatRequest) -> &ModelConfig {
        self.models.get(req.role)
    }

    /// The reply cap of this request.
    pub fn reply_tokens(&self, req: &ChatRequest) -> u32 {
        reply_tokens(self.model(req), req.max_tokens)
    }

    /// The conservative estimate check, done before anything is sent.
    /// Returns the estimate's error so a caller with an exact tokenizer can retry with it.
    pub fn check_estimate(&self, req: &ChatRequest) -> Result<(), LlmError> {
        let size = PromptSize { tokens: estimate_tokens(&req.messages, &self.budget), exact: false };
        check_fits(req.role, self.model(req), size, self.reply_tokens(req))
    }
}

/// Runs `work` under the time cap `limit` (a [`LlmError::Timeout`] naming `what` past it).
pub async fn within<T>(
    limit: std::time::Duration,
    what: &str,
    work: impl std::future::Future<Output = Result<T, LlmError>>,
) -> Result<T, LlmError> {
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result,
        Err(_) => Err(LlmError::Timeout { what: what.to_string(), after_ms: limit.as_millis() as u64 }),
    }
}

/// The text of `stream` up to the first of `stops` (excluded); the stream is dropped
/// there, which ends the generation.
pub async fn text_until_stop(mut stream: ChatStream, stops: &[String]) -> Result<String, LlmError> {
    let mut text = String::new();
    while let Some(delta) = stream.next().await {
        text.push_str(&delta?);
        if let Some(at) = first_stop(&text, stops) {
            text.truncate(at);
            break;
        }
    }
    Ok(text)
}
