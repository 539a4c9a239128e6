//! Errors a user can act on.

/// Why a model call failed, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the model server at {url} is not reachable ({detail}); start it (Ollama: `ollama serve`; llama.cpp: `llama-server --models-dir DIR`) or set backend.url")]
    ServerDown { url: String, detail: String },
    #[error("model `{model}` is not on the server at {url}; {hint}")]
    ModelMissing { model: String, url: String, hint: String },
    #[error("the prompt needs {needed} tokens but {role}'s model `{model}` has a context window of {num_ctx} ({reserved} kept for the reply); shorten the request or raise models.{role}.num_ctx")]
    OverBudget { role: String, model: String, needed: usize, num_ctx: u32, reserved: u32 },
    #[error("the model server timed out after {after_ms} ms waiting for {what}")]
    Timeout { what: String, after_ms: u64 },
    #[error("the model server reported an error: {message}")]
    Server { status: Option<u16>, message: String },
    #[error("the model server sent a reply tinycoder cannot read: {0}")]
    Protocol(String),
    #[error("the model's reply did not match the required JSON schema after {attempts} attempts: {last_error}")]
    InvalidStructuredOutput { attempts: u32, last_error: String },
    #[error("the embedded model failed: {0}")]
    Embedded(String),
    #[error("this tinycoder was built without the embedded backend; rebuild it with `cargo build --release --features embedded` (needs cmake and libclang), or set backend.kind to \"ollama\" or \"openai\"")]
    EmbeddedNotBuilt,
    #[error("the {backend} backend has no raw text completion; set backend.kind to \"ollama\" or \"openai\" for inline completion")]
    CompletionUnsupported { backend: String },
    #[error("the request was cancelled")]
    Cancelled,
    #[error(transparent)]
    Prompt(#[from] crate::config::PromptError),
}
