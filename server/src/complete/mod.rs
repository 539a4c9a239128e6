//! Inline completion: the ghost text a model writes at the cursor, from the text
//! before and after it (fill-in-the-middle).
//!
//! Start reading at [`suggest`]: [`window::FimWindow`] cuts the prefix and suffix
//! around the cursor within `[completion]`'s character budgets, the
//! `complete_fim` prompt puts them in the model's FIM format, the model client
//! completes the raw prompt greedily ([`crate::llm::ModelClient::complete`]), and
//! [`stop`] cuts the reply to one line or one block and drops what repeats the
//! suffix. [`cache`] answers the rest of a suggestion the user is typing
//! through without asking the model again. Nothing here knows LSP: the adapter passes the document's rope and a
//! char index, and gets plain text back.

pub mod cache;
pub mod stop;
pub mod window;

use crate::config::{CompletionConfig, PromptError, PromptId, PromptLibrary};
use crate::llm::{CompletionRequest, LlmError, ModelClient};
pub use cache::SuggestionCache;
pub use stop::{finish_suggestion, stop_strings, StopMode};
use tokio_util::sync::CancellationToken;
pub use window::FimWindow;

/// Why no suggestion could be made (a suggestion that is empty is `Ok(None)`, not an error).
#[derive(Debug, thiserror::Error)]
pub enum CompletionError {
    #[error("inline completion: no suggestion within {after_ms} ms; raise completion.timeout_ms, or pick a smaller model for models.{role}")]
    TimedOut { after_ms: u64, role: String },
    #[error("inline completion failed: {0}")]
    Model(#[from] LlmError),
    #[error("inline completion prompt: {0}")]
    Prompt(#[from] PromptError),
}

impl CompletionError {
    /// Whether the completion was cancelled (by a newer request or the client), which is no failure.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Model(LlmError::Cancelled))
    }
}

/// The raw FIM prompt of `window` (the `complete_fim` template).
pub fn fim_prompt(prompts: &PromptLibrary, window: &FimWindow) -> Result<String, PromptError> {
    prompts.render(PromptId::COMPLETE_FIM, &[("prefix", &window.prefix), ("suffix", &window.suffix)])
}

/// The model's suggestion to insert at the cursor of `window`, or `None` when it has nothing to add.
pub async fn suggest(
    model: &dyn ModelClient,
    prompts: &PromptLibrary,
    config: &CompletionConfig,
    window: &FimWindow,
    cancel: CancellationToken,
) -> Result<Option<String>, CompletionError> {
    let mode = StopMode::at(config.stop, &window.prefix);
    let req = CompletionRequest {
        role: config.role,
        prompt: fim_prompt(prompts, window)?,
        max_tokens: config.max_tokens,
        stop: stop_strings(mode),
        timeout: std::time::Duration::from_millis(config.timeout_ms),
        usage: Some(Default::default()),
    };
    let usage = req.usage.clone();
    let started = std::time::Instant::now();
    let raw = match model.complete(req, cancel).await {
        Ok(raw) => raw,
        Err(LlmError::Timeout { after_ms, .. }) => {
            return Err(CompletionError::TimedOut { after_ms, role: config.role.to_string() })
        }
        Err(e) => return Err(e.into()),
    };
    let suggestion = finish_suggestion(&raw, mode, window.line_before_cursor(), &window.suffix);
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        raw_chars = raw.chars().count(),
        kept = suggestion.as_ref().map(|s| s.chars().count()),
        prompt = ?usage.and_then(|u| *u.lock().ok()?),
        "inline completion"
    );
    Ok(suggestion)
}

#[cfg(test)]
mod tests;
