//! OpenAI-compatible servers (`/v1/chat/completions`, `/v1/models`,
//! `/v1/embeddings`; llama-server's `/tokenize` where present).
//!
//! Loading and unloading is the server's business here: llama-server in
//! router mode (`--models-dir`) started with `--models-max 1` unloads the
//! previous model itself when another is requested. The client's gate still
//! serialises calls so two roles never interleave.

use super::budget::{check_fits, PromptSize};
use super::gate::GateGuard;
use super::http::{drive, read_json, send, StreamHold};
use super::shared::{text_until_stop, ClientShared};
use super::wire::{clip, error_message, SseChatDecoder};
use super::{ChatReply, ChatRequest, ChatStream, CompletionRequest, LlmError, ModelClient, ModelInfo};
use crate::config::{BackendKind, Config, ModelRole};
use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Tokens a chat template adds per message (role markers), counted on top of an exact count.
const TEMPLATE_TOKENS_PER_MESSAGE: usize = 8;

/// A client of an OpenAI-compatible `/v1` server.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    shared: ClientShared,
    api_key: Option<String>,
    /// Send llama-server's `cache_prompt` (config `backend.prompt_cache`).
    prompt_cache: bool,
}

impl OpenAiClient {
    /// A client for `config.backend.url` (+ `/v1`), with the API key from the env var `backend.api_key_env` if set.
    pub fn new(config: &Config) -> Result<Self, LlmError> {
        let var = config.backend.api_key_env.trim();
        let api_key = if var.is_empty() {
            None
        } else {
            match std::env::var(var) {
                Ok(k) if !k.is_empty() => Some(k),
                _ => {
                    tracing::warn!(
                        var,
                        "backend.api_key_env names an environment variable that is not set; sending no API key"
                    );
                    None
                }
            }
        };
        Ok(Self { shared: ClientShared::new(config)?, api_key, prompt_cache: config.backend.prompt_cache })
    }

    fn v1(&self, path: &str) -> String {
        format!("{}/v1{path}", self.shared.url.trim_end_matches("/v1"))
    }

    fn root(&self, path: &str) -> String {
        format!("{}{path}", self.shared.url.trim_end_matches("/v1"))
    }

    fn post(&self, url: String) -> reqwest::RequestBuilder {
        let b = self.shared.http.post(url);
        match &self.api_key {
            Some(k) => b.bearer_auth(k),
            None => b,
        }
    }

    fn get(&self, url: String) -> reqwest::RequestBuilder {
        let b = self.shared.http.get(url);
        match &self.api_key {
            Some(k) => b.bearer_auth(k),
            None => b,
        }
    }

    fn status_error(&self, model: &str, status: u16, message: String) -> LlmError {
        let lower = message.to_lowercase();
        if (status == 400 || status == 404)
            && lower.contains("model")
            && (lower.contains("not found") || lower.contains("does not exist"))
        {
            LlmError::ModelMissing {
                model: model.to_string(),
                url: self.shared.url.clone(),
                hint: format!(
                    "the server's models are listed at {} (llama-server: put {model}.gguf in its --models-dir); or set the role's name in [models]",
                    self.v1("/models")
                ),
            }
        } else if status == 401 || status == 403 {
            LlmError::Server {
                status: Some(status),
                message: format!("{message} (set the API key in the env var named by backend.api_key_env)"),
            }
        } else {
            LlmError::Server { status: Some(status), message }
        }
    }

    fn chat_body(&self, req: &ChatRequest, stream: bool) -> Value {
        let m = self.shared.model(req);
        let mut body = json!({
            "model": m.name,
            "messages": req.messages,
            "stream": stream,
            "temperature": req.temperature.unwrap_or(m.temperature),
            "seed": req.seed.unwrap_or(m.seed),
            "max_tokens": self.shared.reply_tokens(req),
        });
        if self.prompt_cache {
            // llama-server's own fields (a server that rejects unknown fields has prompt_cache off):
            // reuse the longest prefix a slot already evaluated; follow the reply's grammar.
            body["cache_prompt"] = json!(true);
            if let (Some(g), None) = (&req.grammar, &req.json_schema) {
                body["grammar"] = json!(g);
            }
        }
        if let Some(schema) = &req.json_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": schema_name(schema), "schema": schema, "strict": true },
            });
        }
        body
    }

    /// Budget check (estimate, then the server's tokenizer when the estimate says no), then the gate.
    async fn prepare(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<(GateGuard, CancellationToken), LlmError> {
        let estimate = self.shared.check_estimate(req);
        let (gate, cancel) = self.shared.acquire(req, cancel).await?;
        let cancel = &cancel;
        if let Err(over) = estimate {
            // The estimate over-counts on purpose; an exact count may show the prompt fits.
            let text: String = req.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
            let exact = match self.tokenize(&self.shared.model(req).name, &text, cancel).await {
                Ok(Some(n)) => n + TEMPLATE_TOKENS_PER_MESSAGE * req.messages.len(),
                Ok(None) | Err(_) => return Err(over),
            };
            check_fits(
                req.role,
                self.shared.model(req),
                PromptSize { tokens: exact, exact: true },
                self.shared.reply_tokens(req),
            )?;
        }
        Ok((gate, cancel.clone()))
    }

    /// llama-server's `/tokenize` (model named, for router mode); `None` when the server has none.
    async fn tokenize(&self, model: &str, text: &str, cancel: &CancellationToken) -> Result<Option<usize>, LlmError> {
        let t = &self.shared.timeouts;
        let req = self.post(self.root("/tokenize")).json(&json!({ "model": model, "content": text }));
        let resp = match send(req, &self.shared.url, "token count", t.first_token, cancel).await? {
            Ok(r) => r,
            Err((404 | 405 | 501, _)) => return Ok(None),
            Err((status, message)) => return Err(self.status_error(model, status, message)),
        };
        let v = read_json(resp, &self.shared.url, "token count", t.first_token, cancel).await?;
        Ok(v.get("tokens").and_then(|t| t.as_array()).map(|a| a.len()))
    }

    async fn models_json(&self) -> Result<Value, LlmError> {
        let t = &self.shared.timeouts;
        let cancel = CancellationToken::new();
        let resp = send(self.get(self.v1("/models")), &self.shared.url, "the list of models", t.first_token, &cancel)
            .await?
            .map_err(|(status, message)| LlmError::Server { status: Some(status), message })?;
        read_json(resp, &self.shared.url, "the list of models", t.first_token, &cancel).await
    }
}

/// OpenAI wants a schema name of `[a-zA-Z0-9_-]`; schemars puts the type name in `title`.
fn schema_name(schema: &Value) -> String {
    let title = schema.get("title").and_then(|t| t.as_str()).unwrap_or("reply");
    let name: String = title.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').take(64).collect();
    if name.is_empty() {
        "reply".into()
    } else {
        name
    }
}

/// The context size a model entry reports: `meta.n_ctx_train`, or llama-server router's `--ctx-size` argument.
fn entry_context(m: &Value) -> Option<u64> {
    if let Some(n) = m.pointer("/meta/n_ctx_train").and_then(|n| n.as_u64()) {
        return Some(n);
    }
    let args = m.pointer("/status/args")?.as_array()?;
    let pos = args.iter().position(|a| matches!(a.as_str(), Some("--ctx-size" | "-c")))?;
    args.get(pos + 1)?.as_str()?.parse().ok()
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn backend(&self) -> BackendKind {
        BackendKind::Openai
    }

    fn url(&self) -> &str {
        &self.shared.url
    }

    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        let (mut gate, cancel) = self.prepare(&req, &cancel).await?;
        let model = self.shared.model(&req).name.clone();
        let started = Instant::now();
        let http = self.post(self.v1("/chat/completions")).json(&self.chat_body(&req, true));
        let resp =
            send(http, &self.shared.url, "the first token of the reply", self.shared.timeouts.first_token, &cancel)
                .await?
                .map_err(|(status, message)| self.status_error(&model, status, message))?;
        gate.touch(&model);
        Ok(drive(
            resp,
            SseChatDecoder::default(),
            cancel,
            self.shared.timeouts,
            &self.shared.url,
            started,
            StreamHold { guard: Some(Box::new(gate)), usage: req.usage.clone() },
        ))
    }

    async fn chat(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatReply, LlmError> {
        let (mut gate, cancel) = self.prepare(&req, &cancel).await?;
        let model = self.shared.model(&req).name.clone();
        let t = self.shared.timeouts;
        let http = self.post(self.v1("/chat/completions")).json(&self.chat_body(&req, false));
        let resp = send(http, &self.shared.url, "the reply", t.request, &cancel)
            .await?
            .map_err(|(status, message)| self.status_error(&model, status, message))?;
        gate.touch(&model);
        let v = read_json(resp, &self.shared.url, "the reply", t.request, &cancel).await?;
        if let (Some(slot), Some(u)) = (&req.usage, super::PromptUsage::from_reply(&v)) {
            if let Ok(mut s) = slot.lock() {
                *s = Some(u);
            }
        }
        if let Some(message) = error_message(&v) {
            return Err(LlmError::Server { status: None, message });
        }
        let text = v.pointer("/choices/0/message/content").and_then(|c| c.as_str()).ok_or_else(|| {
            LlmError::Protocol(format!("reply without choices[0].message.content: {}", clip(&v.to_string())))
        })?;
        Ok(ChatReply { text: text.to_string() })
    }

    /// Streamed, though only the whole text is wanted: llama-server (the router too) stops
    /// generating when a stream's connection closes, but finishes a plain request a
    /// cancelled client left, holding the model meanwhile.
    async fn complete(&self, req: CompletionRequest, cancel: CancellationToken) -> Result<String, LlmError> {
        let work = async {
            let (mut gate, cancel) = self.shared.acquire_for_completion(&cancel).await?;
            let model = self.shared.models.get(req.role).name.clone();
            let started = Instant::now();
            let mut body = json!({
                "model": model,
                "prompt": req.prompt,
                "max_tokens": req.max_tokens,
                "temperature": 0.0,
                "stream": true,
            });
            if !req.stop.is_empty() {
                body["stop"] = json!(req.stop);
            }
            if self.prompt_cache {
                body["cache_prompt"] = json!(true);
            }
            let http = self.post(self.v1("/completions")).json(&body);
            let resp = send(http, &self.shared.url, "the completion", req.timeout, &cancel)
                .await?
                .map_err(|(status, message)| self.status_error(&model, status, message))?;
            gate.touch(&model);
            let held = StreamHold { guard: Some(Box::new(gate)), usage: req.usage.clone() };
            let stream =
                drive(resp, SseChatDecoder::default(), cancel, self.shared.timeouts, &self.shared.url, started, held);
            // Not every server honours `stop`; dropping the stream at one ends the generation.
            text_until_stop(stream, &req.stop).await
        };
        super::shared::within(req.timeout, "the completion", work).await
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let v = self.models_json().await?;
        Ok(v.get("data")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let name = m.get("id")?.as_str()?.to_string();
                Some(ModelInfo {
                    name,
                    context_length: entry_context(m),
                    size_bytes: m.pointer("/meta/size").and_then(|s| s.as_u64()),
                })
            })
            .collect())
    }

    async fn check_ready(&self, _role: ModelRole) -> Result<(), LlmError> {
        // Only reachability: a single-model server answers for any model name, so a
        // name missing from `/v1/models` is left to the call itself to report.
        match self.models_json().await {
            Err(e @ (LlmError::ServerDown { .. } | LlmError::Timeout { .. })) => Err(e),
            Err(e) => {
                tracing::debug!("the model list is not available ({e}); the first call will tell");
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }

    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        let v = self.models_json().await?;
        let data = v.get("data").and_then(|d| d.as_array()).cloned().unwrap_or_default();
        // Only llama-server's router mode reports per-model status.
        if !data.iter().any(|m| m.pointer("/status/value").is_some()) {
            return Ok(None);
        }
        Ok(Some(
            data.iter()
                .filter(|m| m.pointer("/status/value").and_then(|s| s.as_str()) == Some("loaded"))
                .filter_map(|m| m.get("id").and_then(|i| i.as_str()).map(str::to_string))
                .collect(),
        ))
    }

    async fn count_tokens(&self, role: ModelRole, text: &str) -> Result<Option<usize>, LlmError> {
        let cancel = CancellationToken::new();
        let _gate = self.shared.gate.acquire(&cancel).await?; // tokenizing may load the model
        self.tokenize(&self.shared.models.get(role).name, text, &cancel).await
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let cancel = CancellationToken::new();
        let _gate = self.shared.gate.acquire(&cancel).await?;
        let t = self.shared.timeouts;
        let req = self.post(self.v1("/embeddings")).json(&json!({ "model": model, "input": inputs }));
        let resp = send(req, &self.shared.url, "embeddings", t.request, &cancel)
            .await?
            .map_err(|(status, message)| self.status_error(model, status, message))?;
        let v = read_json(resp, &self.shared.url, "embeddings", t.request, &cancel).await?;
        v.get("data")
            .and_then(|d| d.as_array())
            .ok_or_else(|| LlmError::Protocol("embeddings reply without data".into()))?
            .iter()
            .map(|d| {
                serde_json::from_value(d.get("embedding").cloned().unwrap_or(Value::Null))
                    .map_err(|e| LlmError::Protocol(format!("embeddings reply: {e}")))
            })
            .collect()
    }
}
