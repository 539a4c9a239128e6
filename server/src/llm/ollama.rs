//! Ollama's native API (`/api/chat`, `/api/tags`, `/api/show`, `/api/ps`, `/api/embed`).
//!
//! Plain reqwest rather than ollama-rs: one HTTP client with our timeouts, the
//! HTTP status kept for error mapping (404 → "run `ollama pull`"), our own
//! NDJSON reader (ollama-rs's drops chunks that split a UTF-8 character), and
//! every option we must send (`num_ctx`, `keep_alive` as seconds) under our control.

use super::gate::{GateGuard, GateState, Priority};
use super::http::{drive, read_json, send, StreamHold};
use super::shared::ClientShared;
use super::wire::NdjsonChatDecoder;
use super::{ChatReply, ChatRequest, ChatStream, CompletionRequest, LlmError, ModelClient, ModelInfo};
use crate::config::{parse_keep_alive, BackendKind, Config, ModelRole};
use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A client of Ollama's native API.
#[derive(Debug, Clone)]
pub struct OllamaClient {
    shared: ClientShared,
}

/// Ollama names a model `name:tag`; a bare name means `name:latest`.
pub fn full_name(model: &str) -> String {
    if model.contains(':') {
        model.to_string()
    } else {
        format!("{model}:latest")
    }
}

impl OllamaClient {
    /// A client for `config.backend.url`, with roles from `config.models`.
    pub fn new(config: &Config) -> Result<Self, LlmError> {
        Ok(Self { shared: ClientShared::new(config)? })
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.shared.url)
    }

    fn model_missing(&self, model: &str) -> LlmError {
        LlmError::ModelMissing {
            model: model.to_string(),
            url: self.shared.url.clone(),
            hint: format!("run `ollama pull {model}` (or `ollama create {model} -f Modelfile`), or set the role's name in [models]"),
        }
    }

    fn status_error(&self, model: &str, status: u16, message: String) -> LlmError {
        if status == 404 && message.contains("not found") {
            self.model_missing(model)
        } else {
            LlmError::Server { status: Some(status), message }
        }
    }

    fn chat_body(&self, req: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let m = self.shared.model(req);
        let keep_alive = parse_keep_alive(&m.keep_alive)
            .map_err(|e| LlmError::Protocol(format!("models.{}.keep_alive: {e}", req.role)))?;
        let mut body = json!({
            "model": m.name,
            "messages": req.messages,
            "stream": stream,
            "keep_alive": keep_alive,
            "options": {
                "num_ctx": m.num_ctx,
                "temperature": req.temperature.unwrap_or(m.temperature),
                "seed": req.seed.unwrap_or(m.seed),
                "num_predict": self.shared.reply_tokens(req),
            },
        });
        if let Some(schema) = &req.json_schema {
            body["format"] = schema.clone();
        }
        Ok(body)
    }

    /// Checks the budget, takes the gate at the request's priority and makes room for
    /// the role's model; returns the gate and the token the call must obey.
    async fn prepare(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<(GateGuard, CancellationToken), LlmError> {
        self.shared.check_estimate(req)?;
        let (mut gate, cancel) = self.shared.acquire(req, cancel).await?;
        let model = self.shared.model(req).name.clone();
        self.make_room(&mut gate, &model, &cancel).await?;
        Ok((gate, cancel))
    }

    /// Records a finished call's model as loaded (and as the interactive one).
    fn loaded(gate: &mut GateGuard, model: &str) {
        let name = full_name(model);
        gate.touch(&name);
        if gate.priority() == Priority::Interactive {
            gate.interactive_model = Some(name);
        }
    }

    /// Unloads models this client loaded so that `model` loads with at most
    /// `max_loaded_models` of them in memory; models of other applications stay.
    async fn make_room(&self, gate: &mut GateState, model: &str, cancel: &CancellationToken) -> Result<(), LlmError> {
        let target = full_name(model);
        if gate.loaded.last() == Some(&target) {
            return Ok(());
        }
        let server = self.ps(cancel).await?;
        gate.observe(&target, &server);
        for victim in gate.to_unload(&target, self.shared.max_loaded) {
            tracing::info!(model = %victim, next = %target, "unloading a model tinycoder loaded, to keep one loaded");
            self.unload(&victim, cancel).await?;
            gate.loaded.retain(|m| m != &victim);
        }
        Ok(())
    }

    /// Asks Ollama to unload `model` now (`keep_alive: 0`).
    pub async fn unload(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlmError> {
        let t = &self.shared.timeouts;
        let req = self.shared.http.post(self.endpoint("/api/generate")).json(&json!({"model": model, "keep_alive": 0}));
        match send(req, &self.shared.url, "unloading a model", t.first_token, cancel).await? {
            Ok(_) => {
                // Ollama unloads in the background: loading the next model before
                // this one is gone can make Ollama evict another application's.
                let started = std::time::Instant::now();
                while started.elapsed() < t.first_token {
                    let same = |m: &String| m == model || m.strip_suffix(":latest") == Some(model);
                    if !self.ps(cancel).await?.iter().any(same) {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Ok(())
            }
            Err((404, _)) => Ok(()), // already gone
            Err((status, message)) => Err(LlmError::Server { status: Some(status), message }),
        }
    }

    async fn ps(&self, cancel: &CancellationToken) -> Result<Vec<String>, LlmError> {
        let v = self.get_json("/api/ps", "the list of loaded models", cancel).await?;
        Ok(names(&v))
    }

    async fn get_json(&self, path: &str, what: &str, cancel: &CancellationToken) -> Result<Value, LlmError> {
        let t = &self.shared.timeouts;
        let resp = send(self.shared.http.get(self.endpoint(path)), &self.shared.url, what, t.first_token, cancel)
            .await?
            .map_err(|(status, message)| LlmError::Server { status: Some(status), message })?;
        read_json(resp, &self.shared.url, what, t.first_token, cancel).await
    }

    /// The trained context length of `model` (`/api/show`, `<arch>.context_length`).
    pub async fn context_length(&self, model: &str, cancel: &CancellationToken) -> Result<Option<u64>, LlmError> {
        let t = &self.shared.timeouts;
        let req = self.shared.http.post(self.endpoint("/api/show")).json(&json!({ "model": model }));
        let resp = send(req, &self.shared.url, "model details", t.first_token, cancel)
            .await?
            .map_err(|(status, message)| self.status_error(model, status, message))?;
        let v = read_json(resp, &self.shared.url, "model details", t.first_token, cancel).await?;
        Ok(v.get("model_info")
            .and_then(|i| i.as_object())
            .and_then(|i| i.iter().find(|(k, _)| k.ends_with(".context_length")))
            .and_then(|(_, v)| v.as_u64()))
    }
}

fn names(v: &Value) -> Vec<String> {
    v.get("models")
        .and_then(|m| m.as_array())
        .map(|a| a.iter().filter_map(|m| m.get("name").and_then(|n| n.as_str()).map(str::to_string)).collect())
        .unwrap_or_default()
}

#[async_trait]
impl ModelClient for OllamaClient {
    fn backend(&self) -> BackendKind {
        BackendKind::Ollama
    }

    fn url(&self) -> &str {
        &self.shared.url
    }

    async fn chat_stream(&self, req: ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        let (mut gate, cancel) = self.prepare(&req, &cancel).await?;
        let model = self.shared.model(&req).name.clone();
        let started = Instant::now();
        let http = self.shared.http.post(self.endpoint("/api/chat")).json(&self.chat_body(&req, true)?);
        let resp =
            send(http, &self.shared.url, "the first token of the reply", self.shared.timeouts.first_token, &cancel)
                .await?
                .map_err(|(status, message)| self.status_error(&model, status, message))?;
        Self::loaded(&mut gate, &model);
        Ok(drive(
            resp,
            NdjsonChatDecoder::default(),
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
        let http = self.shared.http.post(self.endpoint("/api/chat")).json(&self.chat_body(&req, false)?);
        let resp = send(http, &self.shared.url, "the reply", t.request, &cancel)
            .await?
            .map_err(|(status, message)| self.status_error(&model, status, message))?;
        Self::loaded(&mut gate, &model);
        let v = read_json(resp, &self.shared.url, "the reply", t.request, &cancel).await?;
        if let (Some(slot), Some(u)) = (&req.usage, super::PromptUsage::from_reply(&v)) {
            if let Ok(mut s) = slot.lock() {
                *s = Some(u);
            }
        }
        if let Some(message) = super::wire::error_message(&v) {
            return Err(LlmError::Server { status: None, message });
        }
        let text = v.pointer("/message/content").and_then(|c| c.as_str()).ok_or_else(|| {
            LlmError::Protocol(format!("reply without message.content: {}", super::wire::clip(&v.to_string())))
        })?;
        Ok(ChatReply { text: text.to_string() })
    }

    async fn complete(&self, req: CompletionRequest, cancel: CancellationToken) -> Result<String, LlmError> {
        let work = async {
            let (mut gate, cancel) = self.shared.acquire_for_completion(&cancel).await?;
            let m = self.shared.models.get(req.role).clone();
            self.make_room(&mut gate, &m.name, &cancel).await?;
            let keep_alive = parse_keep_alive(&m.keep_alive)
                .map_err(|e| LlmError::Protocol(format!("models.{}.keep_alive: {e}", req.role)))?;
            let body = json!({
                "model": m.name,
                "prompt": req.prompt,
                "raw": true,
                "stream": false,
                "keep_alive": keep_alive,
                "options": {
                    "num_ctx": m.num_ctx,
                    "temperature": 0.0,
                    "num_predict": req.max_tokens,
                    "stop": req.stop,
                },
            });
            let http = self.shared.http.post(self.endpoint("/api/generate")).json(&body);
            let resp = send(http, &self.shared.url, "the completion", req.timeout, &cancel)
                .await?
                .map_err(|(status, message)| self.status_error(&m.name, status, message))?;
            gate.touch(&full_name(&m.name));
            let v = read_json(resp, &self.shared.url, "the completion", req.timeout, &cancel).await?;
            if let Some(message) = super::wire::error_message(&v) {
                return Err(LlmError::Server { status: None, message });
            }
            v.get("response").and_then(|t| t.as_str()).map(str::to_string).ok_or_else(|| {
                LlmError::Protocol(format!("completion reply without response: {}", super::wire::clip(&v.to_string())))
            })
        };
        super::shared::within(req.timeout, "the completion", work).await
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let cancel = CancellationToken::new();
        let v = self.get_json("/api/tags", "the list of models", &cancel).await?;
        let mut out = Vec::new();
        for m in v.get("models").and_then(|m| m.as_array()).into_iter().flatten() {
            let Some(name) = m.get("name").and_then(|n| n.as_str()) else {
                continue;
            };
            let context_length = self.context_length(name, &cancel).await.unwrap_or(None);
            out.push(ModelInfo {
                name: name.to_string(),
                context_length,
                size_bytes: m.get("size").and_then(|s| s.as_u64()),
            });
        }
        Ok(out)
    }

    async fn check_ready(&self, role: ModelRole) -> Result<(), LlmError> {
        let model = self.shared.models.get(role).name.clone();
        let v = self.get_json("/api/tags", "the list of models", &CancellationToken::new()).await?;
        let names = v.get("models").and_then(|m| m.as_array()).into_iter().flatten();
        let mut names = names.filter_map(|m| m.get("name").and_then(|n| n.as_str()));
        if names.any(|n| full_name(n) == full_name(&model)) {
            Ok(())
        } else {
            Err(self.model_missing(&model))
        }
    }

    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        Ok(Some(self.ps(&CancellationToken::new()).await?))
    }

    async fn count_tokens(&self, _role: ModelRole, _text: &str) -> Result<Option<usize>, LlmError> {
        Ok(None) // Ollama's native API has no tokenize endpoint.
    }

    async fn restore_interactive_model(&self, cancel: CancellationToken) -> Result<(), LlmError> {
        let (mut gate, cancel) = self.shared.gate.acquire_background(std::time::Duration::ZERO, &cancel).await?;
        let Some(model) = gate.interactive_model.clone() else { return Ok(()) };
        if gate.loaded.last() == Some(&model) {
            return Ok(());
        }
        self.make_room(&mut gate, &model, &cancel).await?;
        if gate.loaded.contains(&model) || gate.shared.contains(&model) {
            return Ok(());
        }
        let keep_alive = crate::config::ModelRole::ALL
            .iter()
            .map(|r| self.shared.models.get(*r))
            .find(|m| full_name(&m.name) == model)
            .and_then(|m| parse_keep_alive(&m.keep_alive).ok())
            .unwrap_or(300);
        tracing::info!(%model, "loading the interactive model again after background work");
        let t = &self.shared.timeouts;
        let req = self
            .shared
            .http
            .post(self.endpoint("/api/generate"))
            .json(&json!({"model": model, "keep_alive": keep_alive}));
        send(req, &self.shared.url, "loading a model", t.first_token, &cancel)
            .await?
            .map_err(|(status, message)| self.status_error(&model, status, message))?;
        gate.touch(&model);
        Ok(())
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let cancel = CancellationToken::new();
        let mut gate = self.shared.gate.acquire(&cancel).await?;
        self.make_room(&mut gate, model, &cancel).await?;
        let t = self.shared.timeouts;
        let req = self.shared.http.post(self.endpoint("/api/embed")).json(&json!({ "model": model, "input": inputs }));
        let resp = send(req, &self.shared.url, "embeddings", t.request, &cancel)
            .await?
            .map_err(|(status, message)| self.status_error(model, status, message))?;
        gate.touch(&full_name(model));
        let v = read_json(resp, &self.shared.url, "embeddings", t.request, &cancel).await?;
        serde_json::from_value(v.get("embeddings").cloned().unwrap_or(Value::Null))
            .map_err(|e| LlmError::Protocol(format!("embeddings reply: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInputs, LoadedConfig};
    use crate::llm::ChatMessage;

    /// A TCP peer that accepts connections and never answers (not a model server: it says nothing).
    async fn silent_peer() -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((sock, _)) = listener.accept().await {
                held.push(sock);
            }
        });
        (url, task)
    }

    fn config(url: &str) -> Config {
        let mut c = LoadedConfig::load(&ConfigInputs::default()).expect("defaults").config;
        c.backend.url = url.into();
        c.backend.first_token_timeout_ms = 300;
        c
    }

    fn small_request() -> ChatRequest {
        let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user("hi")]);
        req.max_tokens = Some(8);
        req
    }

    #[tokio::test]
    async fn a_server_that_never_answers_times_out_waiting_for_the_first_token() {
        let (url, task) = silent_peer().await;
        let client = OllamaClient::new(&config(&url)).expect("client");
        let started = std::time::Instant::now();
        match client.chat_stream(small_request(), CancellationToken::new()).await {
            Err(LlmError::Timeout { after_ms: 300, .. }) => {}
            Err(other) => panic!("expected Timeout, got {other:?}"),
            Ok(_) => panic!("expected Timeout, got a stream"),
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        task.abort();
    }

    #[tokio::test]
    async fn cancelling_while_waiting_for_the_server_returns_cancelled() {
        let (url, task) = silent_peer().await;
        let mut c = config(&url);
        c.backend.first_token_timeout_ms = 60_000;
        let client = OllamaClient::new(&c).expect("client");
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            trigger.cancel();
        });
        assert!(matches!(client.chat(small_request(), cancel).await, Err(LlmError::Cancelled)));
        task.abort();
    }

    #[test]
    fn bare_names_mean_latest() {
        assert_eq!(full_name("smollm2"), "smollm2:latest");
        assert_eq!(full_name("qwen2.5-coder:1.5b"), "qwen2.5-coder:1.5b");
    }
}
