//! Keeps a session's history within its token budget: the `summarizer` role
//! model folds the older turns into a running summary; the newest turns stay verbatim.

use super::{SessionStore, StoreError};
use crate::config::{ModelRole, PromptError, PromptId, PromptLibrary};
use crate::llm::{ChatMessage, ChatRequest, LlmError, ModelClient};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Why summarizing failed (the session is left as it was).
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the summarizer model failed: {0}")]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("the summarizer model replied with nothing; the old summary is kept")]
    EmptyReply,
}

/// What [`SessionSummarizer::compress`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryOutcome {
    /// The unsummarized turns fit the budget (or only the kept-recent turns remain).
    WithinBudget { estimated_tokens: usize },
    /// Turns up to `through` were folded into a summary of about `summary_tokens` tokens.
    Summarized { through: u64, summary_tokens: usize },
}

/// Budgets of the summarizer (from `[store]`, counted with the `[budget]` estimator).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryBudget {
    /// Unsummarized turns above this many tokens trigger a summary.
    pub history_tokens: usize,
    /// Newest turns never folded.
    pub keep_recent_turns: usize,
    /// Cap of the summary.
    pub summary_tokens: usize,
    /// How tokens are estimated.
    pub estimator: crate::llm::TokenEstimator,
}

impl SummaryBudget {
    /// From the loaded configuration.
    pub fn from_config(c: &crate::config::Config) -> Self {
        Self {
            history_tokens: c.store.session_history_tokens as usize,
            keep_recent_turns: c.store.session_keep_recent_turns as usize,
            summary_tokens: c.store.session_summary_tokens as usize,
            estimator: crate::llm::TokenEstimator::new(&c.budget),
        }
    }

    fn estimate(&self, text: &str) -> usize {
        self.estimator.estimate(text)
    }
}

/// Compresses old session turns with the summarizer model.
#[derive(Clone)]
pub struct SessionSummarizer {
    sessions: SessionStore,
    client: Arc<dyn ModelClient>,
    prompts: Arc<PromptLibrary>,
    budget: SummaryBudget,
}

impl SessionSummarizer {
    /// A summarizer over `sessions`, calling `client`'s summarizer model.
    pub fn new(
        sessions: SessionStore,
        client: Arc<dyn ModelClient>,
        prompts: Arc<PromptLibrary>,
        budget: SummaryBudget,
    ) -> Self {
        Self { sessions, client, prompts, budget }
    }

    /// Folds the older unsummarized turns into the summary when they exceed the budget.
    pub async fn compress(
        &self,
        session_id: &str,
        cancel: CancellationToken,
    ) -> Result<SummaryOutcome, SummarizeError> {
        let session = self
            .sessions
            .get(session_id)
            .await?
            .ok_or_else(|| StoreError::NotFound { what: format!("session {session_id}") })?;
        let turns = self.sessions.turns(session_id, session.summarized_through).await?;
        let rendered: Vec<String> = turns
            .iter()
            .map(|t| {
                format!(
                    "{}: {}",
                    serde_json::to_value(t.role).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                    t.content
                )
            })
            .collect();
        let estimated_tokens = self.budget.estimate(&rendered.join("\n"));
        let foldable = turns.len().saturating_sub(self.budget.keep_recent_turns);
        if estimated_tokens <= self.budget.history_tokens || foldable == 0 {
            return Ok(SummaryOutcome::WithinBudget { estimated_tokens });
        }
        let through = turns[foldable - 1].turn;
        let max_tokens = self.budget.summary_tokens.to_string();
        let prompt = self.prompts.render(
            PromptId::SUMMARIZE_SESSION,
            &[
                ("previous_summary", session.summary.as_str()),
                ("turns", &rendered[..foldable].join("\n")),
                ("max_tokens", &max_tokens),
            ],
        )?;
        let mut request = ChatRequest::new(ModelRole::Summarizer, vec![ChatMessage::user(prompt)]);
        request.max_tokens = Some(self.budget.summary_tokens as u32);
        // Nobody waits for a summary: it runs when the client is idle and yields to requests.
        request.priority = crate::llm::Priority::Background;
        let reply = self.client.chat(request, cancel).await?;
        let mut summary = reply.text.trim().to_string();
        if summary.is_empty() {
            return Err(SummarizeError::EmptyReply);
        }
        // Small models overshoot: the budget is a hard cap.
        summary = self.budget.estimator.truncate(&summary, self.budget.summary_tokens).trim_end().to_string();
        let summary_tokens = self.budget.estimate(&summary);
        self.sessions.set_summary(session_id, &summary, through).await?;
        Ok(SummaryOutcome::Summarized { through, summary_tokens })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ChatStream, ModelInfo};
    use std::sync::Mutex;

    /// A scripted model double: replies from a list, records the prompts it got.
    struct ScriptedModel {
        replies: Mutex<Vec<Result<String, LlmError>>>,
        prompts: Mutex<Vec<ChatRequest>>,
    }

    #[async_trait::async_trait]
    impl ModelClient for ScriptedModel {
        fn backend(&self) -> crate::config::BackendKind {
            crate::config::BackendKind::Ollama
        }
        fn url(&self) -> &str {
            "scripted://"
        }
        async fn chat_stream(&self, req: ChatRequest, _cancel: CancellationToken) -> Result<ChatStream, LlmError> {
            self.prompts.lock().expect("lock").push(req);
            let next = self.replies.lock().expect("lock").remove(0);
            let text = next?;
            Ok(Box::pin(futures::stream::iter(vec![Ok(text)])))
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

    fn budget() -> SummaryBudget {
        SummaryBudget {
            history_tokens: 40,
            keep_recent_turns: 2,
            summary_tokens: 10,
            estimator: crate::llm::TokenEstimator::with_ratios(2.0, 2.0, 1.0),
        }
    }

    #[tokio::test]
    async fn folds_old_turns_keeps_recent_ones_and_caps_the_summary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = super::super::Store::open(&dir.path().join("db"), Default::default()).expect("open");
        let sessions = SessionStore::new(store);
        let s = sessions.create("chat").await.expect("create");
        let model = Arc::new(ScriptedModel {
            replies: Mutex::new(vec![Ok(
                "The user fixes total() which adds int and str; far too long a summary".into()
            )]),
            prompts: Mutex::new(Vec::new()),
        });
        let prompts = Arc::new(PromptLibrary::load(None).expect("prompts"));
        let summarizer = SessionSummarizer::new(sessions.clone(), model.clone(), prompts, budget());
        sessions.append_turn(&s.session_id, crate::llm::ChatRole::User, "hi").await.expect("turn");
        let outcome = summarizer.compress(&s.session_id, CancellationToken::new()).await.expect("compress");
        assert!(matches!(outcome, SummaryOutcome::WithinBudget { .. }), "{outcome:?}");
        assert!(model.prompts.lock().expect("lock").is_empty(), "no model call within budget");
        for i in 0..5 {
            sessions
                .append_turn(
                    &s.session_id,
                    crate::llm::ChatRole::User,
                    &format!("turn {i}: total() fails with a TypeError"),
                )
                .await
                .expect("turn");
        }
        let outcome = summarizer.compress(&s.session_id, CancellationToken::new()).await.expect("compress");
        assert_eq!(outcome, SummaryOutcome::Summarized { through: 4, summary_tokens: 9 });
        let sent = model.prompts.lock().expect("lock").remove(0);
        assert_eq!(sent.role, ModelRole::Summarizer);
        assert_eq!(sent.priority, crate::llm::Priority::Background, "summaries never make a request wait");
        let prompt = &sent.messages[0].content;
        assert!(prompt.contains("turn 2: total()") && !prompt.contains("turn 4:"), "recent turns stay out: {prompt}");
        let after = sessions.get(&s.session_id).await.expect("get").expect("session");
        assert_eq!(after.summarized_through, 4);
        // "The user fixes total() which" = The/us/er/fi/xe/s/to/ta/l/(/)/wh/ic/h + spaces: capped at 10 tokens.
        assert_eq!(after.summary, "The user fixes", "capped at summary_tokens by the estimator");
        assert!(budget().estimator.estimate(&after.summary) <= 10);
    }

    #[tokio::test]
    async fn a_failed_or_empty_reply_keeps_the_old_summary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = super::super::Store::open(&dir.path().join("db"), Default::default()).expect("open");
        let sessions = SessionStore::new(store);
        let s = sessions.create("chat").await.expect("create");
        for i in 0..6 {
            sessions
                .append_turn(&s.session_id, crate::llm::ChatRole::Assistant, &format!("a long enough turn number {i}"))
                .await
                .expect("turn");
        }
        let model = Arc::new(ScriptedModel {
            replies: Mutex::new(vec![Ok("   ".into()), Err(LlmError::Cancelled)]),
            prompts: Mutex::new(Vec::new()),
        });
        let prompts = Arc::new(PromptLibrary::load(None).expect("prompts"));
        let summarizer = SessionSummarizer::new(sessions.clone(), model, prompts, budget());
        let err = summarizer.compress(&s.session_id, CancellationToken::new()).await.expect_err("empty");
        assert!(matches!(err, SummarizeError::EmptyReply));
        let err = summarizer.compress(&s.session_id, CancellationToken::new()).await.expect_err("llm error");
        assert!(matches!(err, SummarizeError::Llm(_)));
        let after = sessions.get(&s.session_id).await.expect("get").expect("session");
        assert_eq!((after.summary.as_str(), after.summarized_through), ("", 0));
    }
}
