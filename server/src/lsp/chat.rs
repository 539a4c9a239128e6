//! `tinycoder/chat`: a streamed chat with the coder model about the project
//! (`chat_context.rs` builds its prompt); turns kept per session in memory as a
//! fallback of the store. [`build_messages`] serves when no workspace is open.

use crate::config::{Config, ModelRole, PromptId, PromptLibrary};
use crate::llm::ChatMessage;
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{notification::Notification, Position, Range, TextDocumentIdentifier};

/// Parameters of `tinycoder/chat`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatParams {
    /// The session to continue; a new one is started when absent.
    pub session_id: Option<String>,
    /// The id put on this reply's deltas; generated when absent.
    pub request_id: Option<String>,
    pub message: String,
    /// The file the user is looking at.
    pub text_document: Option<TextDocumentIdentifier>,
    /// The selection in that file; the whole file when absent.
    pub range: Option<Range>,
    /// The cursor in that file (its symbol is shown when there is no selection).
    pub position: Option<Position>,
}

/// Result of `tinycoder/chat`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatResult {
    pub session_id: String,
    pub request_id: String,
    pub reply: String,
    /// Whether the file context was shortened to fit the model's context window.
    pub context_trimmed: bool,
}

/// Parameters of the `tinycoder/chatDelta` notification.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatDeltaParams {
    pub session_id: String,
    pub request_id: String,
    pub delta: String,
}

/// The `tinycoder/chatDelta` notification: one piece of a streamed reply.
pub enum ChatDelta {}

impl Notification for ChatDelta {
    type Params = ChatDeltaParams;
    const METHOD: &'static str = "tinycoder/chatDelta";
}

/// Chat sessions and their turns in memory, the fallback when the store is
/// unavailable; bounded by `store.session_cache_sessions` and `…_messages`.
pub struct ChatSessions {
    /// Turns per session, the least recently recorded first to go.
    sessions: lru::LruCache<String, Vec<ChatMessage>>,
}

impl Default for ChatSessions {
    fn default() -> Self {
        Self { sessions: lru::LruCache::unbounded() }
    }
}

impl ChatSessions {
    /// The turns of `id` so far.
    pub fn history(&self, id: &str) -> Vec<ChatMessage> {
        self.sessions.peek(id).cloned().unwrap_or_default()
    }

    /// Appends a finished exchange, keeping at most `max_messages` of the
    /// session (oldest dropped, whole exchanges) and `max_sessions` sessions
    /// (the least recently used dropped).
    pub fn record(
        &mut self,
        id: &str,
        user: ChatMessage,
        assistant: ChatMessage,
        max_sessions: usize,
        max_messages: usize,
    ) {
        let cap = std::num::NonZeroUsize::new(max_sessions.max(1)).unwrap_or(std::num::NonZeroUsize::MIN);
        self.sessions.resize(cap);
        let turns = self.sessions.get_or_insert_mut(id.to_string(), Vec::new);
        turns.push(user);
        turns.push(assistant);
        let keep = max_messages.max(2) / 2 * 2;
        if turns.len() > keep {
            turns.drain(..turns.len() - keep);
        }
    }

    /// How many sessions are kept.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is kept.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The file (or selection) the user is looking at.
pub struct FileContext {
    pub path: String,
    pub language: String,
    pub code: String,
}

/// Estimated tokens of `text`: the calibrated over-counting estimate.
fn estimate_tokens(text: &str, config: &Config) -> usize {
    crate::llm::TokenEstimator::new(&config.budget).estimate(text)
}

/// Builds the messages of one chat turn within the coder's context window:
/// system prompt, as many recent turns as fit, the file context (code trimmed to
/// whole lines to fit), and the user's message. Returns the messages and whether
/// anything was trimmed. The one place a budgeted context builder would replace.
pub fn build_messages(
    config: &Config,
    prompts: &PromptLibrary,
    history: &[ChatMessage],
    file: Option<&FileContext>,
    message: &str,
) -> Result<(Vec<ChatMessage>, bool), crate::llm::LlmError> {
    let model = config.models.get(ModelRole::Coder);
    let system = prompts.render(PromptId::CHAT_SYSTEM, &[])?;
    let total = model.num_ctx as usize;
    let reserved = (config.budget.reserved_output_tokens + config.budget.safety_margin_tokens) as usize;
    let fixed = estimate_tokens(&system, config) + estimate_tokens(message, config);
    let mut available = total.saturating_sub(reserved);
    if fixed > available {
        return Err(crate::llm::LlmError::OverBudget {
            role: "coder".into(),
            model: model.name.clone(),
            needed: fixed + reserved,
            num_ctx: model.num_ctx,
            reserved: reserved as u32,
        });
    }
    available -= fixed;
    let mut trimmed = false;
    let mut user = message.to_string();
    if let Some(f) = file {
        let frame = prompts
            .render(PromptId::CHAT_FILE_CONTEXT, &[("path", &f.path), ("language", &f.language), ("code", "")])?;
        let frame_tokens = estimate_tokens(&frame, config);
        if frame_tokens < available {
            let mut code = String::new();
            let mut used = frame_tokens;
            for line in f.code.split_inclusive('\n') {
                let t = estimate_tokens(line, config);
                if used + t > available {
                    trimmed = true;
                    break;
                }
                used += t;
                code.push_str(line);
            }
            available -= used;
            let rendered = prompts.render(
                PromptId::CHAT_FILE_CONTEXT,
                &[("path", &f.path), ("language", &f.language), ("code", code.trim_end())],
            )?;
            user = format!("{rendered}\n\n{message}");
        } else {
            trimmed = true;
        }
    }
    // Most recent turns first, as many as fit.
    let mut kept = Vec::new();
    for m in history.iter().rev() {
        let t = estimate_tokens(&m.content, config);
        if t > available {
            trimmed = true;
            break;
        }
        available -= t;
        kept.push(m.clone());
    }
    kept.reverse();
    let mut messages = vec![ChatMessage::system(system)];
    messages.extend(kept);
    messages.push(ChatMessage::user(user));
    Ok((messages, trimmed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInputs, LoadedConfig};

    #[test]
    fn the_in_memory_sessions_are_bounded() {
        let mut chats = ChatSessions::default();
        let turn = |i: usize| (ChatMessage::user(format!("q{i}")), ChatMessage::assistant(format!("a{i}")));
        for i in 0..5 {
            let (q, a) = turn(i);
            chats.record("s1", q, a, 2, 4);
        }
        let kept: Vec<String> = chats.history("s1").into_iter().map(|m| m.content).collect();
        assert_eq!(kept, ["q3", "a3", "q4", "a4"], "the oldest exchanges go first");
        let (q, a) = turn(9);
        chats.record("s2", q, a, 2, 4);
        let (q, a) = turn(10);
        chats.record("s1", q, a, 2, 4);
        let (q, a) = turn(11);
        chats.record("s3", q, a, 2, 4);
        assert_eq!(chats.len(), 2);
        assert!(chats.history("s2").is_empty(), "the least recently used session goes first");
        assert_eq!(chats.history("s1").len(), 4);
        assert_eq!(chats.history("s3").len(), 2);
    }

    #[test]
    fn code_is_trimmed_to_whole_lines_within_the_window() {
        let mut config = LoadedConfig::load(&ConfigInputs::default()).unwrap().config;
        config.models.coder.num_ctx = 2600;
        let prompts = PromptLibrary::load(None).unwrap();
        let code: String = (0..2000).map(|i| format!("x{i} = {i}\n")).collect();
        let file = FileContext { path: "a.py".into(), language: "python".into(), code };
        let (msgs, trimmed) = build_messages(&config, &prompts, &[], Some(&file), "what is this?").unwrap();
        assert!(trimmed);
        let tokens: usize = msgs.iter().map(|m| estimate_tokens(&m.content, &config)).sum();
        let budget = (config.models.coder.num_ctx
            - config.budget.reserved_output_tokens
            - config.budget.safety_margin_tokens) as usize;
        assert!(tokens <= budget, "{tokens} estimated tokens over {budget}");
        let user = &msgs.last().unwrap().content;
        assert!(user.contains("x0 = 0\n") && user.ends_with("what is this?"));
        let small = FileContext { path: "a.py".into(), language: "python".into(), code: "x = 1\n".into() };
        let (_, trimmed) = build_messages(&config, &prompts, &[], Some(&small), "hi").unwrap();
        assert!(!trimmed);
    }
}
