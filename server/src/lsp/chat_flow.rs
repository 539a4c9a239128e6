//! The `tinycoder/chat` handler: builds the turn within the budget, streams the
//! coder model's reply as `tinycoder/chatDelta`, and keeps the session's turns in
//! the workspace store (summarized in the background).

use super::chat::{build_messages, ChatDelta, ChatDeltaParams, ChatParams, ChatResult, FileContext};
use super::commands::request_failed;
use super::convert::to_text_range;
use super::progress::ProgressHandle;
use super::server::{lock_err, uri_key, Backend, Settings};
use crate::config::{ModelRole, PromptId, PromptLibrary};
use crate::llm::{ChatMessage, ChatRequest, LlmError};
use crate::store::SummarizeError;
use futures::StreamExt;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};

impl Backend {
    /// `tinycoder/chat`: streams the reply as `tinycoder/chatDelta` notifications and returns it whole.
    pub async fn chat(&self, params: ChatParams) -> Result<ChatResult> {
        let session_id = params.session_id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let request_id = params.request_id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let settings = self.settings().ok_or_else(|| request_failed("the server is not initialized"))?;
        // The store is the source of truth for a session (its summary plus the turns not yet
        // folded into it); the in-memory turns serve when the store is unavailable.
        let history = match self.persisted_history(&session_id, &settings.prompts).await {
            Some(h) => h,
            None => self.chats.lock().map_err(lock_err)?.history(&session_id),
        };
        // A named document must be open, whichever way the turn is built.
        let file = self.file_context(&params)?;
        let (messages, context_trimmed, footer) = match self.project_turn(&params, &history).await? {
            Some((turn, root)) => {
                (turn.messages, turn.trimmed, super::chat_context::sources_footer(&root, &turn.sources))
            }
            None => {
                let (messages, trimmed) = build_messages(
                    &settings.loaded.config,
                    &settings.prompts,
                    &history,
                    file.as_ref(),
                    &params.message,
                )
                .map_err(|e| request_failed(e.to_string()))?;
                (messages, trimmed, String::new())
            }
        };
        let model = settings.model.clone().map_err(request_failed)?;
        // Dropping this future ($/cancelRequest) drops the guard, which cancels the model call;
        // cancelling the progress (window/workDoneProgress/cancel or tinycoder.cancel) stops it too.
        let progress = ProgressHandle::start(&self.client, &self.jobs, "tinycoder: chat", self.progress_supported());
        let cancel = progress.cancel_token();
        let _guard = cancel.clone().drop_guard();
        let mut stream = tokio::select! {
            s = model.chat_stream(ChatRequest::new(ModelRole::Coder, messages), cancel.clone()) => s.map_err(|e| llm_error(&e))?,
            _ = cancel.cancelled() => return Err(Error::request_cancelled()),
        };
        let mut reply = String::new();
        loop {
            let delta = tokio::select! {
                d = stream.next() => d,
                _ = cancel.cancelled() => return Err(Error::request_cancelled()),
            };
            let Some(delta) = delta else { break };
            let delta = delta.map_err(|e| llm_error(&e))?;
            if delta.is_empty() {
                continue;
            }
            reply.push_str(&delta);
            progress.report(format!("{} characters", reply.chars().count()), None);
            self.client
                .send_notification::<ChatDelta>(ChatDeltaParams {
                    session_id: session_id.clone(),
                    request_id: request_id.clone(),
                    delta,
                })
                .await;
        }
        if !footer.is_empty() {
            reply.push_str(&footer);
            self.client
                .send_notification::<ChatDelta>(ChatDeltaParams {
                    session_id: session_id.clone(),
                    request_id: request_id.clone(),
                    delta: footer,
                })
                .await;
        }
        let limits = &settings.loaded.config.store;
        self.chats.lock().map_err(lock_err)?.record(
            &session_id,
            ChatMessage::user(params.message.clone()),
            ChatMessage::assistant(reply.clone()),
            limits.session_cache_sessions as usize,
            limits.session_cache_messages as usize,
        );
        self.persist_turns(&session_id, &params.message, &reply, &settings).await;
        Ok(ChatResult { session_id, request_id, reply, context_trimmed })
    }

    /// A session's history from the store: its summary (as a system message) and the turns
    /// after it. `None` when the store is unavailable.
    async fn persisted_history(&self, session_id: &str, prompts: &PromptLibrary) -> Option<Vec<ChatMessage>> {
        let sessions = crate::store::SessionStore::new(self.store().ok()?);
        let loaded = async {
            let session = sessions.get(session_id).await?;
            let through = session.as_ref().map(|s| s.summarized_through).unwrap_or(0);
            Ok::<_, crate::store::StoreError>((session, sessions.turns(session_id, through).await?))
        };
        match loaded.await {
            Ok((session, turns)) => {
                let mut history = Vec::new();
                if let Some(summary) = session.map(|s| s.summary).filter(|s| !s.trim().is_empty()) {
                    match prompts.render(PromptId::CHAT_SESSION_SUMMARY, &[("summary", &summary)]) {
                        Ok(text) => history.push(ChatMessage::system(text)),
                        Err(e) => tracing::warn!("session summary not shown: {e}"),
                    }
                }
                history.extend(turns.into_iter().map(|t| ChatMessage { role: t.role, content: t.content }));
                Some(history)
            }
            Err(e) => {
                tracing::warn!(session_id, "chat history not loaded from the store: {e}");
                None
            }
        }
    }

    /// Saves one exchange, then schedules the summarizer to fold old turns in the background
    /// (a model call only once the history passes `store.session_history_tokens`).
    /// A store failure is logged, never fails the chat the user already saw.
    ///
    /// The summary is a tracked job (`summary-<session>-<id>`, cancellable with
    /// `tinycoder.cancel`); a newer turn of the same session replaces it. Its model call
    /// has background priority: it starts only after `backend.background_idle_ms` without
    /// an interactive request, yields to any that arrives (and runs again at the next idle
    /// moment), and afterwards the interactive model is loaded again if it was switched out.
    async fn persist_turns(&self, session_id: &str, user: &str, reply: &str, settings: &Settings) {
        let store = match self.store() {
            Ok(s) => s,
            Err(e) => return tracing::warn!(session_id, "chat turn not persisted: {}", e.message),
        };
        let sessions = crate::store::SessionStore::new(store);
        let title: String = user.chars().take(60).collect();
        let result = async {
            sessions.ensure(session_id, &title).await?;
            sessions.append_turn(session_id, crate::llm::ChatRole::User, user).await?;
            sessions.append_turn(session_id, crate::llm::ChatRole::Assistant, reply).await
        }
        .await;
        if let Err(e) = result {
            return tracing::warn!(session_id, "chat turn not persisted: {e}");
        }
        let Ok(model) = settings.model.clone() else { return };
        let summarizer = crate::store::SessionSummarizer::new(
            sessions,
            model.clone(),
            Arc::new(settings.prompts.clone()),
            crate::store::SummaryBudget::from_config(&settings.loaded.config),
        );
        let id = session_id.to_string();
        let prefix = format!("summary-{id}-");
        for job in self.jobs.list().into_iter().filter(|j| j.id.starts_with(&prefix)) {
            self.jobs.cancel(&job.id);
        }
        let job_id = format!("{prefix}{}", uuid::Uuid::new_v4());
        let token = self.jobs.register(&job_id, "tinycoder: session summary");
        let jobs = self.jobs.clone();
        tokio::spawn(async move {
            loop {
                match summarizer.compress(&id, token.clone()).await {
                    Err(SummarizeError::Llm(LlmError::Cancelled)) if !token.is_cancelled() => {
                        tracing::debug!(session_id = id, "session summary yielded to a request; runs again when idle");
                    }
                    Err(SummarizeError::Llm(LlmError::Cancelled)) => {
                        tracing::debug!(session_id = id, "session summary cancelled")
                    }
                    Ok(outcome) => {
                        tracing::debug!(session_id = id, ?outcome, "session summary");
                        if matches!(outcome, crate::store::SummaryOutcome::Summarized { .. }) {
                            if let Err(e) = model.restore_interactive_model(token.clone()).await {
                                tracing::debug!("interactive model not reloaded after the summary: {e}");
                            }
                        }
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(session_id = id, "session summary not updated: {e}");
                        break;
                    }
                }
                if token.is_cancelled() {
                    break;
                }
            }
            jobs.finish(&job_id);
        });
    }

    fn file_context(&self, params: &ChatParams) -> Result<Option<FileContext>> {
        let Some(td) = &params.text_document else {
            return Ok(None);
        };
        let enc = self.encoding();
        let docs = self.docs.lock().map_err(lock_err)?;
        let key = uri_key(&td.uri);
        let Some(open) = docs.get(&key) else {
            return Err(Error::invalid_params(format!("document {key} is not open; open it before asking about it")));
        };
        let code = match params.range {
            Some(r) => open.doc.slice_text(to_text_range(r), enc),
            None => open.doc.text(),
        };
        let path = td.uri.to_file_path().map(|p| p.display().to_string()).unwrap_or(key);
        Ok(Some(FileContext { path, language: open.doc.language_id().to_string(), code }))
    }
}

fn llm_error(e: &LlmError) -> Error {
    match e {
        LlmError::Cancelled => Error::request_cancelled(),
        other => request_failed(other.to_string()),
    }
}
