//! One loaded model on its own OS thread: the thread owns the `LlamaModel`
//! and its context (which borrows it), takes jobs from a channel and streams
//! text back. Nothing here runs on the async runtime's threads.
//!
//! The context's KV cache is kept between calls: a call whose prompt starts
//! with what the last call evaluated (a retry, a sibling step, the next chat
//! turn, the next inline completion in the same file) evaluates only the rest,
//! as llama-server's `cache_prompt` does. A cancelled call keeps what it
//! evaluated: the completion that replaces it starts from there.

use super::backend;
use super::lookup::{LookupSettings, PromptLookup};
use crate::llm::{ChatMessage, LlmError, PromptUsage, PromptUsageSink};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use tokio::sync::{mpsc as tmpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Prompt tokens evaluated per decode call: small enough that a cancel during a
/// long prompt is seen within a fraction of a second.
const PROMPT_CHUNK: usize = 512;

/// What the model reads.
#[derive(Debug, Clone)]
pub enum JobPrompt {
    /// Chat messages, through the model's own chat template.
    Chat(Vec<ChatMessage>),
    /// Text as it is, its special tokens parsed (a fill-in-the-middle prompt).
    Raw(String),
}

/// What one generation asks of the model: kept whole so a call can be queued again.
#[derive(Clone)]
pub struct JobSpec {
    pub prompt: JobPrompt,
    pub max_tokens: u32,
    pub temperature: f32,
    pub seed: i64,
    /// A llama.cpp grammar (the request's own, or from its JSON schema) the reply must follow.
    pub grammar: Option<String>,
    /// Prompt-lookup drafts (`None`: one token per decode).
    pub lookup: Option<LookupSettings>,
    pub usage: Option<PromptUsageSink>,
}

/// A generation for the worker (a chat reply or a raw completion) and where its text goes.
pub struct GenerationJob {
    pub spec: JobSpec,
    /// The role's context window; the prompt plus `max_tokens` must fit.
    pub num_ctx: u32,
    pub deltas: tmpsc::UnboundedSender<Result<String, LlmError>>,
    pub cancel: CancellationToken,
}

/// Where the worker answers with the prompt's exact size once templated and tokenized, or why it cannot run.
pub type StartedSender = oneshot::Sender<Result<usize, LlmError>>;

enum Job {
    Generate(Box<GenerationJob>, StartedSender),
    Tokenize { text: String, reply: oneshot::Sender<usize> },
}

/// Facts about the loaded model.
#[derive(Debug, Clone)]
pub struct LoadedInfo {
    pub context_length: u32,
}

/// The handle of a model's thread; dropping it ends the thread and frees the model.
pub struct ModelWorker {
    jobs: mpsc::Sender<Job>,
    pub path: PathBuf,
    pub info: LoadedInfo,
    /// Cleared when the thread ends (idle past its keep-alive, or dropped).
    alive: Arc<AtomicBool>,
}

impl ModelWorker {
    /// Starts a thread that loads `path` with `threads` inference threads and waits for the load.
    /// The thread unloads the model after `keep_alive` without a job (`None`: never).
    pub async fn start(path: PathBuf, threads: i32, keep_alive: Option<Duration>) -> Result<Self, LlmError> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (loaded_tx, loaded_rx) = oneshot::channel();
        let alive = Arc::new(AtomicBool::new(true));
        let (p, flag) = (path.clone(), alive.clone());
        std::thread::Builder::new()
            .name("tinycoder-model".into())
            .spawn(move || {
                run(&p, threads, keep_alive, rx, loaded_tx);
                flag.store(false, Ordering::SeqCst);
            })
            .map_err(|e| LlmError::Embedded(format!("cannot start the model thread: {e}")))?;
        let info = loaded_rx.await.map_err(|_| {
            LlmError::Embedded(format!("the model thread for {} ended while loading", path.display()))
        })??;
        Ok(Self { jobs, path, info, alive })
    }

    /// Whether the model is still loaded (its thread has not ended).
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Queues a generation; `started` learns whether its prompt fits.
    pub fn generate(&self, job: GenerationJob, started: StartedSender) -> Result<(), LlmError> {
        self.jobs.send(Job::Generate(Box::new(job), started)).map_err(|_| gone())
    }

    /// Exact token count of `text` with the model's tokenizer (no special tokens added,
    /// special tokens in the text parsed: as llama-server's `/tokenize`).
    pub async fn count_tokens(&self, text: &str) -> Result<usize, LlmError> {
        let (reply, rx) = oneshot::channel();
        self.jobs.send(Job::Tokenize { text: text.to_string(), reply }).map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }
}

fn gone() -> LlmError {
    LlmError::Embedded("the model thread has stopped; the next request loads the model again".into())
}

fn run(
    path: &Path,
    threads: i32,
    keep_alive: Option<Duration>,
    rx: mpsc::Receiver<Job>,
    loaded: oneshot::Sender<Result<LoadedInfo, LlmError>>,
) {
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = loaded.send(Err(e));
            return;
        }
    };
    let model = match LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()) {
        Ok(m) => m,
        Err(e) => {
            let _ = loaded.send(Err(LlmError::Embedded(format!(
                "cannot load {} ({e}); is it a GGUF model file llama.cpp supports?",
                path.display()
            ))));
            return;
        }
    };
    let info = LoadedInfo { context_length: model.n_ctx_train() };
    if loaded.send(Ok(info)).is_err() {
        return;
    }
    let template = model.chat_template(None).ok();
    let mut session = Session { model: &model, template, threads, ctx: None, cached: Vec::new() };
    loop {
        let job = match keep_alive {
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(idle) => rx.recv_timeout(idle),
        };
        let job = match job {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                tracing::info!(model = %path.display(), "unloading an idle embedded model (models.<role>.keep_alive)");
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match job {
            Job::Tokenize { text, reply } => {
                let _ = reply.send(model.vocab().tokenize(text.as_bytes(), false, true).len());
            }
            Job::Generate(job, started) => session.run(*job, started),
        }
    }
    tracing::debug!(model = %path.display(), "embedded model unloaded");
}

/// The model, its context and what the context's KV cache holds.
struct Session<'m> {
    model: &'m LlamaModel,
    template: Option<LlamaChatTemplate>,
    threads: i32,
    ctx: Option<(LlamaContext<'m>, u32)>,
    /// The tokens whose keys and values are in the context's cache, in order.
    cached: Vec<LlamaToken>,
}

impl<'m> Session<'m> {
    fn run(&mut self, job: GenerationJob, started: StartedSender) {
        let prompt = match &job.spec.prompt {
            JobPrompt::Chat(messages) => self.prompt_tokens(messages),
            JobPrompt::Raw(text) => Ok(self.model.vocab().tokenize(text.as_bytes(), true, true)),
        };
        let prompt = match prompt {
            Ok(t) => t,
            Err(e) => {
                let _ = started.send(Err(e));
                return;
            }
        };
        if prompt.is_empty() {
            let _ = started.send(Err(LlmError::Embedded("the prompt is empty: nothing to continue".into())));
            return;
        }
        if prompt.len() + job.spec.max_tokens as usize > job.num_ctx as usize {
            let _ = started.send(Err(LlmError::OverBudget {
                role: String::new(),
                model: String::new(),
                needed: prompt.len(),
                num_ctx: job.num_ctx,
                reserved: job.spec.max_tokens,
            }));
            return;
        }
        if job.cancel.is_cancelled() {
            let _ = started.send(Err(LlmError::Cancelled));
            return;
        }
        if started.send(Ok(prompt.len())).is_err() {
            return;
        }
        if let Err(e) = self.generate(&job, &prompt) {
            // A cancel leaves the cache as evaluated; a failed decode may not.
            if !matches!(e, LlmError::Cancelled) {
                self.cached.clear();
            }
            let _ = job.deltas.send(Err(e));
        }
    }

    /// The messages through the model's own chat template (ChatML when it has none), tokenized.
    fn prompt_tokens(&self, messages: &[ChatMessage]) -> Result<Vec<LlamaToken>, LlmError> {
        let chat = messages
            .iter()
            .map(|m| {
                let role = serde_json::to_value(m.role).ok().and_then(|v| v.as_str().map(String::from));
                LlamaChatMessage::new(role.unwrap_or_else(|| "user".into()), m.content.clone())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LlmError::Embedded(format!("a message cannot be passed to llama.cpp: {e}")))?;
        let chatml;
        let template = match &self.template {
            Some(t) => t,
            None => {
                chatml = LlamaChatTemplate::new("chatml").map_err(|e| LlmError::Embedded(e.to_string()))?;
                &chatml
            }
        };
        let text = self
            .model
            .apply_chat_template(template, &chat, true)
            .map_err(|e| LlmError::Embedded(format!("the model's chat template could not be applied: {e}")))?;
        Ok(self.model.vocab().tokenize(text.as_bytes(), true, true))
    }

    /// A context of at least `n_ctx` tokens (the last one when it is big enough).
    fn context(&mut self, n_ctx: u32) -> Result<&mut LlamaContext<'m>, LlmError> {
        if self.ctx.as_ref().is_none_or(|(_, have)| *have < n_ctx) {
            self.ctx = None;
            self.cached.clear();
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(n_ctx))
                .with_n_batch(PROMPT_CHUNK as u32)
                .with_n_ubatch(PROMPT_CHUNK as u32)
                .with_n_threads(self.threads)
                .with_n_threads_batch(self.threads);
            let ctx = self
                .model
                .new_context(backend()?, params)
                .map_err(|e| LlmError::Embedded(format!("cannot make a context of {n_ctx} tokens: {e}")))?;
            self.ctx = Some((ctx, n_ctx));
        }
        Ok(&mut self.ctx.as_mut().expect("set above").0)
    }

    fn generate(&mut self, job: &GenerationJob, prompt: &[LlamaToken]) -> Result<(), LlmError> {
        self.context(job.num_ctx)?;
        // Reuse the cached prefix, but evaluate at least the prompt's last token (its logits start the reply).
        let keep = self.cached.iter().zip(prompt).take_while(|(a, b)| a == b).count().min(prompt.len() - 1);
        let (ctx, _) = self.ctx.as_mut().expect("made above");
        if ctx.clear_kv_cache_seq(Some(0), Some(keep as u32), None).ok() != Some(true) {
            ctx.clear_kv_cache();
            self.cached.clear();
            return self.generate_from(job, prompt, 0);
        }
        self.cached.truncate(keep);
        self.generate_from(job, prompt, keep)
    }

    fn generate_from(&mut self, job: &GenerationJob, prompt: &[LlamaToken], keep: usize) -> Result<(), LlmError> {
        let model = self.model;
        let (ctx, _) = self.ctx.as_mut().expect("made by generate");
        tracing::debug!(evaluated = prompt.len() - keep, cached = keep, "embedded prompt");
        if let Some(sink) = &job.spec.usage {
            if let Ok(mut slot) = sink.lock() {
                *slot = Some(PromptUsage { evaluated: prompt.len() - keep, cached: Some(keep), drafted: None });
            }
        }
        let decode_err =
            |e: llama_cpp_2::DecodeError| LlmError::Embedded(format!("llama.cpp could not evaluate the prompt: {e}"));
        let mut batch = LlamaBatch::new(PROMPT_CHUNK, 1);
        let mut pos = keep;
        for chunk in prompt[keep..].chunks(PROMPT_CHUNK) {
            if job.cancel.is_cancelled() || job.deltas.is_closed() {
                return Err(LlmError::Cancelled);
            }
            batch.clear();
            for (i, t) in chunk.iter().enumerate() {
                let last = pos + i + 1 == prompt.len();
                batch.add(*t, (pos + i) as i32, &[0], last).map_err(|e| LlmError::Embedded(e.to_string()))?;
            }
            ctx.decode(&mut batch).map_err(decode_err)?;
            self.cached.extend_from_slice(chunk);
            pos += chunk.len();
        }
        let mut sampler = sampler(model, job)?;
        let mut lookup = job.spec.lookup.and_then(PromptLookup::new);
        let mut text = Utf8Pieces::default();
        let mut produced = 0u32;
        let mut from_drafts = 0usize;
        let mut token = sampler.sample(ctx, batch.n_tokens() - 1);
        // `token` is sampled, not yet handed out nor evaluated.
        'reply: loop {
            if model.vocab().is_eog(token) {
                break;
            }
            if !send_piece(&mut text, model, token, &job.deltas) {
                return Ok(()); // the stream was dropped: nobody reads the rest
            }
            produced += 1;
            if produced >= job.spec.max_tokens {
                break;
            }
            if job.cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            // Evaluate the token with a draft of what may follow it; a draft token is kept only
            // where the model's own sampler picks it on that position's logits.
            self.cached.push(token);
            let room = (job.spec.max_tokens - produced) as usize;
            let draft = lookup.as_mut().map(|l| l.draft(&self.cached, room)).unwrap_or_default();
            batch.clear();
            batch.add(token, pos as i32, &[0], true).map_err(|e| LlmError::Embedded(e.to_string()))?;
            for (i, d) in draft.iter().enumerate() {
                batch.add(*d, (pos + 1 + i) as i32, &[0], true).map_err(|e| LlmError::Embedded(e.to_string()))?;
            }
            // A failed decode clears `cached` in `run`, so nothing is undone here.
            ctx.decode(&mut batch).map_err(decode_err)?;
            pos += 1;
            let mut kept = 0;
            let mut next = sampler.sample(ctx, 0);
            while kept < draft.len() && next == draft[kept] {
                if model.vocab().is_eog(next) {
                    break 'reply;
                }
                if !send_piece(&mut text, model, next, &job.deltas) {
                    return Ok(());
                }
                self.cached.push(next);
                pos += 1;
                kept += 1;
                produced += 1;
                from_drafts += 1;
                if produced >= job.spec.max_tokens {
                    break;
                }
                next = sampler.sample(ctx, kept as i32);
            }
            if kept < draft.len() {
                // The rejected tail of the draft leaves the cache: the next batch starts at `pos`.
                if ctx.clear_kv_cache_seq(Some(0), Some(pos as u32), None).ok() != Some(true) {
                    return Err(LlmError::Embedded("llama.cpp could not drop a rejected draft from its cache".into()));
                }
            }
            if produced >= job.spec.max_tokens {
                break;
            }
            if let Some(l) = lookup.as_mut() {
                l.kept(kept);
            }
            token = next;
        }
        if let (Some(sink), Some(_)) = (&job.spec.usage, &lookup) {
            if let Ok(mut slot) = sink.lock() {
                if let Some(u) = slot.as_mut() {
                    u.drafted = Some(from_drafts);
                }
            }
        }
        tracing::debug!(produced, from_drafts, "embedded reply");
        let rest = text.finish();
        if !rest.is_empty() {
            let _ = job.deltas.send(Ok(rest));
        }
        Ok(())
    }
}

/// Hands out `token`'s text (whole characters only); false when nobody reads the stream any more.
fn send_piece(
    text: &mut Utf8Pieces,
    model: &LlamaModel,
    token: LlamaToken,
    deltas: &tmpsc::UnboundedSender<Result<String, LlmError>>,
) -> bool {
    let piece = text.push(&model.vocab().token_to_piece(token, false, None));
    piece.is_empty() || deltas.send(Ok(piece)).is_ok()
}

/// Greedy at temperature 0, else top-k / top-p / min-p with the seed; a grammar first when one is given.
fn sampler(model: &LlamaModel, job: &GenerationJob) -> Result<LlamaSampler, LlmError> {
    let mut chain = Vec::new();
    if let Some(g) = &job.spec.grammar {
        chain.push(LlamaSampler::grammar(model, g, "root").map_err(|e| {
            LlmError::Embedded(format!(
                "llama.cpp refused the reply's grammar (from its JSON schema or prompts/reply_grammar_*.md): {e}"
            ))
        })?);
    }
    if job.spec.temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
    } else {
        chain.extend([
            LlamaSampler::top_k(40),
            LlamaSampler::top_p(0.95, 1),
            LlamaSampler::min_p(0.05, 1),
            LlamaSampler::temp(job.spec.temperature),
            LlamaSampler::dist(job.spec.seed as u32),
        ]);
    }
    Ok(LlamaSampler::chain_simple(chain))
}

/// Token pieces are bytes and may split a character: text is handed out only up to the last whole character.
#[derive(Default)]
struct Utf8Pieces {
    pending: Vec<u8>,
}

impl Utf8Pieces {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            // An invalid sequence (not just an unfinished one) is replaced, never held forever.
            Err(_) => {
                let s = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                return s;
            }
        };
        let rest = self.pending.split_off(valid);
        String::from_utf8(std::mem::replace(&mut self.pending, rest)).unwrap_or_default()
    }

    fn finish(&mut self) -> String {
        let s = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Pieces;

    #[test]
    fn a_character_split_across_tokens_comes_out_whole() {
        let mut p = Utf8Pieces::default();
        let e_acute = "é".as_bytes();
        assert_eq!(p.push(b"caf"), "caf");
        assert_eq!(p.push(&e_acute[..1]), "");
        assert_eq!(p.push(&e_acute[1..]), "é");
        assert_eq!(p.push(&[0xff, b'a']), "\u{fffd}a");
        assert_eq!(p.push(&"→".as_bytes()[..2]), "");
        assert_eq!(p.finish(), "\u{fffd}");
    }
}
