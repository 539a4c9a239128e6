//! The embedded backend: llama.cpp inside tinycoder's process (`llama-cpp-2`),
//! so a GGUF on disk is enough and no model server runs.
//!
//! Each loaded model lives on its own OS thread ([`worker::ModelWorker`]); the
//! async side only queues jobs and reads deltas, so inference never blocks the
//! LSP loop. One model file is loaded once and shared by every role that names
//! it; loading another beyond `backend.max_loaded_models` ends the least
//! recently used model's thread, which frees it. Token counts come from the
//! model's own tokenizer, JSON-schema replies from llama.cpp's grammar
//! sampling, prompts from the chat template the GGUF carries. Inline
//! completion sends its fill-in-the-middle prompt as raw text (the model's FIM
//! tokens parsed), greedy, at background priority: any chat or agent call
//! cancels it and takes the model. Chat replies evaluate prompt-lookup drafts
//! (`lookup.rs`): tokens copied from the prompt, checked in one batch.

mod lookup;
mod worker;

use super::gate::GateGuard;
use super::local_models::{ModelLocator, ModelSource};
use super::shared::{text_until_stop, ClientShared};
use super::{ChatStream, CompletionRequest, LlmError, ModelClient, ModelInfo};
use crate::config::{BackendKind, Config, ModelRole};
use async_trait::async_trait;
use llama_cpp_2::llama_backend::LlamaBackend;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use worker::{GenerationJob, JobPrompt, JobSpec, ModelWorker};

/// What [`ModelClient::url`] says for this backend.
const WHERE: &str = "tinycoder's embedded llama.cpp";

/// llama.cpp's process-wide state: initialised once, never torn down.
fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::Embedded(format!("llama.cpp did not start: {e}")))
}

/// The machine's physical cores (hyper-threads share a core's vector units, so more threads only contend).
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else { return logical };
    let mut cores = std::collections::HashSet::new();
    let mut physical = "0";
    for line in cpuinfo.lines() {
        if let Some((k, v)) = line.split_once(':') {
            match k.trim() {
                "physical id" => physical = v.trim(),
                "core id" => {
                    cores.insert((physical.to_string(), v.trim().to_string()));
                }
                _ => {}
            }
        }
    }
    if cores.is_empty() {
        logical
    } else {
        cores.len().min(logical)
    }
}

/// A [`ModelClient`] that runs GGUF models in this process.
pub struct EmbeddedClient {
    shared: ClientShared,
    config: Config,
    locator: ModelLocator,
    threads: i32,
    /// How chat replies draft tokens from their prompt (`backend.lookup_*`).
    lookup: lookup::LookupSettings,
    /// Loaded models, least recently used first.
    workers: Mutex<Vec<Arc<ModelWorker>>>,
}

impl EmbeddedClient {
    /// A client for the roles of `config`; nothing is loaded until the first call.
    pub fn new(config: &Config) -> Result<Self, LlmError> {
        let threads = match config.backend.threads {
            0 => physical_cores(),
            n => n as usize,
        };
        Ok(Self {
            shared: ClientShared::new(config)?,
            config: config.clone(),
            locator: ModelLocator::new(&config.backend),
            threads: threads.max(1) as i32,
            lookup: lookup::LookupSettings {
                draft_tokens: config.backend.lookup_draft_tokens as usize,
                ngram_min: config.backend.lookup_ngram_min as usize,
                ngram_max: config.backend.lookup_ngram_max as usize,
            },
            workers: Mutex::new(Vec::new()),
        })
    }

    fn missing(&self, role: ModelRole, why: String) -> LlmError {
        LlmError::ModelMissing { model: self.config.models.get(role).name.clone(), url: WHERE.into(), hint: why }
    }

    /// The loaded worker of `role`'s model, loading it (and unloading the least recently used
    /// beyond `backend.max_loaded_models`) when needed. Call with the gate held.
    async fn worker(&self, role: ModelRole) -> Result<Arc<ModelWorker>, LlmError> {
        let found = self.locator.find_role(&self.config, role).map_err(|why| self.missing(role, why))?;
        let path = canonical(found.path.clone());
        {
            let mut workers = self.workers.lock().map_err(|_| poisoned())?;
            workers.retain(|w| w.is_alive());
            if let Some(i) = workers.iter().position(|w| w.path == path) {
                let w = workers.remove(i);
                workers.push(w.clone());
                return Ok(w);
            }
            while workers.len() >= self.shared.max_loaded {
                let old = workers.remove(0);
                tracing::info!(model = %old.path.display(), "unloading an embedded model to load another");
            }
        }
        tracing::info!(role = %role, model = %found.name, path = %path.display(), source = found.source.describe(), "loading an embedded model");
        let keep_alive = match crate::config::parse_keep_alive(&self.config.models.get(role).keep_alive) {
            Ok(-1) => None,
            Ok(secs) => Some(std::time::Duration::from_secs(secs.max(0) as u64)),
            Err(e) => return Err(LlmError::Embedded(format!("models.{role}.keep_alive: {e}"))),
        };
        let worker = Arc::new(ModelWorker::start(path, self.threads, keep_alive).await?);
        let num_ctx = self.config.models.get(role).num_ctx;
        if num_ctx > worker.info.context_length {
            tracing::warn!(
                "models.{role}.num_ctx is {num_ctx} but `{}` was trained with {} tokens of context; replies past that degrade",
                found.name,
                worker.info.context_length
            );
        }
        let mut workers = self.workers.lock().map_err(|_| poisoned())?;
        workers.push(worker.clone());
        Ok(worker)
    }

    /// Queues `req` on its model's thread and waits for the prompt to be accepted.
    async fn start(&self, req: &super::ChatRequest, cancel: &CancellationToken) -> Result<Started, LlmError> {
        let (gate, cancel) = self.shared.acquire(req, cancel).await?;
        let m = self.shared.model(req);
        let grammar = match &req.json_schema {
            Some(schema) => Some(llama_cpp_2::json_schema_to_grammar(&schema.to_string()).map_err(|e| {
                LlmError::Embedded(format!("the reply's JSON schema cannot be turned into a grammar: {e}"))
            })?),
            None => req.grammar.clone(),
        };
        let call = Call {
            role: req.role,
            spec: JobSpec {
                prompt: JobPrompt::Chat(req.messages.clone()),
                max_tokens: self.shared.reply_tokens(req),
                temperature: req.temperature.unwrap_or(m.temperature),
                seed: req.seed.unwrap_or(m.seed),
                grammar,
                lookup: Some(self.lookup),
                usage: req.usage.clone(),
            },
        };
        self.start_call(&call, gate, &cancel).await
    }

    /// Queues `call` with the gate held; loads the model again, once, if its thread ended meanwhile.
    async fn start_call(&self, call: &Call, gate: GateGuard, cancel: &CancellationToken) -> Result<Started, LlmError> {
        match self.start_on_worker(call, gate, cancel).await {
            // The model's thread ended (idle past its keep-alive) just as the job was queued: load it again, once.
            Err(Retry::ThreadEnded(gate)) => self.start_on_worker(call, gate, cancel).await.map_err(Retry::into_error),
            other => other.map_err(Retry::into_error),
        }
    }

    async fn start_on_worker(
        &self,
        call: &Call,
        mut gate: GateGuard,
        cancel: &CancellationToken,
    ) -> Result<Started, Retry> {
        let worker = tokio::select! {
            w = self.worker(call.role) => w?,
            _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
        };
        let m = self.config.models.get(call.role);
        gate.touch(&m.name);
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (deltas, rx) = mpsc::unbounded_channel();
        let queued = worker.generate(
            GenerationJob { spec: call.spec.clone(), num_ctx: m.num_ctx, deltas, cancel: cancel.clone() },
            started_tx,
        );
        if queued.is_err() {
            return Err(Retry::ThreadEnded(gate));
        }
        let started = tokio::select! {
            s = started_rx => match s {
                Ok(s) => s,
                Err(_) if !worker.is_alive() => return Err(Retry::ThreadEnded(gate)),
                Err(_) => return Err(LlmError::Embedded("the model thread stopped before the reply".into()).into()),
            },
            _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
        };
        match started {
            Ok(_prompt_tokens) => Ok(Started { gate, rx, cancel: cancel.clone() }),
            Err(LlmError::OverBudget { needed, num_ctx, reserved, .. }) => Err(LlmError::OverBudget {
                role: call.role.to_string(),
                model: m.name.clone(),
                needed,
                num_ctx,
                reserved,
            }
            .into()),
            Err(e) => Err(e.into()),
        }
    }

    /// A raw completion of `req.prompt`, greedy, cut before the first of `req.stop`.
    async fn complete_raw(&self, req: &CompletionRequest, cancel: &CancellationToken) -> Result<String, LlmError> {
        let (gate, cancel) = self.shared.acquire_for_completion(cancel).await?;
        let call = Call {
            role: req.role,
            spec: JobSpec {
                prompt: JobPrompt::Raw(req.prompt.clone()),
                max_tokens: req.max_tokens,
                temperature: 0.0,
                seed: self.config.models.get(req.role).seed,
                grammar: None,
                // A suggestion is short and latency-bound: a wrong draft would only slow it.
                lookup: None,
                usage: req.usage.clone(),
            },
        };
        // Dropping the stream at a stop string stops the model's thread at its next token.
        text_until_stop(self.start_call(&call, gate, &cancel).await?.into_stream(), &req.stop).await
    }
}

/// One call for a role's model (kept to queue it again if the thread ended).
struct Call {
    role: ModelRole,
    spec: JobSpec,
}

/// Why starting a call on a model's thread did not work.
enum Retry {
    /// The thread ended before taking the job; the gate is handed back for a second try.
    ThreadEnded(GateGuard),
    Failed(LlmError),
}

impl From<LlmError> for Retry {
    fn from(e: LlmError) -> Self {
        Self::Failed(e)
    }
}

impl Retry {
    fn into_error(self) -> LlmError {
        match self {
            Self::ThreadEnded(_) => LlmError::Embedded("the model thread stopped before the reply".into()),
            Self::Failed(e) => e,
        }
    }
}

/// The path a loaded model is known by: links (a models dir of symlinks) resolved, so one file loads once.
fn canonical(path: std::path::PathBuf) -> std::path::PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

fn poisoned() -> LlmError {
    LlmError::Embedded("the embedded backend's state was poisoned by an earlier failure; restart tinycoder".into())
}

/// A reply in progress: the gate stays held until the stream ends or is dropped.
struct Started {
    gate: GateGuard,
    rx: mpsc::UnboundedReceiver<Result<String, LlmError>>,
    cancel: CancellationToken,
}

impl Started {
    fn into_stream(self) -> ChatStream {
        Box::pin(futures::stream::unfold(Some(self), |state| async move {
            let mut s = state?;
            tokio::select! {
                biased;
                _ = s.cancel.cancelled() => Some((Err(LlmError::Cancelled), None)),
                item = s.rx.recv() => match item {
                    Some(Err(e)) => Some((Err(e), None)),
                    Some(Ok(text)) => Some((Ok(text), Some(s))),
                    None => {
                        drop(s.gate);
                        None
                    }
                },
            }
        }))
    }
}

#[async_trait]
impl ModelClient for EmbeddedClient {
    fn backend(&self) -> BackendKind {
        BackendKind::Embedded
    }

    fn url(&self) -> &str {
        WHERE
    }

    async fn chat_stream(&self, req: super::ChatRequest, cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        Ok(self.start(&req, &cancel).await?.into_stream())
    }

    async fn complete(&self, req: CompletionRequest, cancel: CancellationToken) -> Result<String, LlmError> {
        super::shared::within(req.timeout, "the completion", self.complete_raw(&req, &cancel)).await
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let mut out: Vec<ModelInfo> = Vec::new();
        let mut add = |name: String, path: &std::path::Path| {
            if out.iter().any(|m| m.name == name) {
                return;
            }
            let context_length = super::local_models::read_gguf_info(path).ok().and_then(|i| i.context_length);
            out.push(ModelInfo { name, context_length, size_bytes: std::fs::metadata(path).ok().map(|m| m.len()) });
        };
        for role in ModelRole::ALL {
            if let Ok(m) = self.locator.find_role(&self.config, role) {
                if m.source == ModelSource::ConfiguredPath {
                    add(m.name, &m.path);
                }
            }
        }
        for m in self.locator.list() {
            add(m.name, &m.path);
        }
        Ok(out)
    }

    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        let workers = self.workers.lock().map_err(|_| poisoned())?;
        let mut names = Vec::new();
        for role in ModelRole::ALL {
            if let Ok(m) = self.locator.find_role(&self.config, role) {
                let path = canonical(m.path);
                if workers.iter().any(|w| w.path == path && w.is_alive()) && !names.contains(&m.name) {
                    names.push(m.name);
                }
            }
        }
        Ok(Some(names))
    }

    async fn count_tokens(&self, role: ModelRole, text: &str) -> Result<Option<usize>, LlmError> {
        let cancel = CancellationToken::new();
        let _gate = self.shared.gate.acquire(&cancel).await?;
        let worker = self.worker(role).await?;
        Ok(Some(worker.count_tokens(text).await?))
    }

    async fn embed(&self, model: &str, _inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Err(LlmError::Embedded(format!(
            "the embedded backend does not compute embeddings (asked for `{model}`); memory search uses its lexical ranking instead"
        )))
    }

    async fn check_ready(&self, role: ModelRole) -> Result<(), LlmError> {
        self.locator.find_role(&self.config, role).map(|_| ()).map_err(|why| self.missing(role, why))
    }
}
