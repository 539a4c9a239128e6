//! `AcpHuman`: the agent's questions to the person at the agent panel, as
//! `session/request_permission` with one option per choice. A panel has no
//! text box in that request, so a hint is not offered there (the next prompt
//! can carry it).

use super::sources::ClientFiles;
use super::updates::text;
use crate::contracts::{PermissionChoice, StrategyChoice, StrategyKind, StrategyQuestion};
use crate::sandbox::{HumanPort, PermissionRequest, StepConfirmation};
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};

/// Asks through the client; a dismissed, cancelled or failed question answers `Stop` / `Deny`.
pub struct AcpHuman {
    files: ClientFiles,
}

impl AcpHuman {
    /// A port over the session's connection.
    pub fn new(files: ClientFiles) -> Self {
        Self { files }
    }

    /// Shows tool call `id` with `body`, then asks; the chosen option's id.
    async fn pick(&self, id: String, title: String, body: String, options: Vec<PermissionOption>) -> Option<String> {
        let call = ToolCall::new(id.clone(), title.clone()).kind(ToolKind::Think).status(ToolCallStatus::Pending);
        let n = SessionNotification::new(self.files.session_id.clone(), SessionUpdate::ToolCall(call));
        if let Err(e) = self.files.conn.send_notification(n) {
            tracing::warn!("session/update not sent: {}", e.message);
        }
        let fields =
            ToolCallUpdateFields::new().title(title).status(ToolCallStatus::Pending).content(vec![text(&body)]);
        let req = RequestPermissionRequest::new(
            self.files.session_id.clone(),
            ToolCallUpdate::new(id.clone(), fields),
            options,
        );
        let answer = match self.files.conn.send_request(req).block_task().await {
            Ok(r) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => Some(s.option_id.to_string()),
                _ => None,
            },
            Err(e) => {
                tracing::warn!("session/request_permission failed: {}", e.message);
                None
            }
        };
        let done = ToolCallUpdateFields::new().status(ToolCallStatus::Completed);
        let n = SessionNotification::new(
            self.files.session_id.clone(),
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, done)),
        );
        if let Err(e) = self.files.conn.send_notification(n) {
            tracing::warn!("session/update not sent: {}", e.message);
        }
        answer
    }
}

#[async_trait::async_trait]
impl HumanPort for AcpHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        let options = [PermissionChoice::AllowOnce, PermissionChoice::Deny]
            .iter()
            .map(|c| {
                let kind = if c.allows() { PermissionOptionKind::AllowOnce } else { PermissionOptionKind::RejectOnce };
                PermissionOption::new(c.as_str(), c.label(), kind)
            })
            .collect();
        let id = format!("permission-{}", uuid::Uuid::new_v4());
        let chosen = self.pick(id, request.message(), request.command.clone(), options).await;
        chosen.and_then(|c| PermissionChoice::parse(&c)).unwrap_or(PermissionChoice::Deny)
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        let options = StrategyKind::ALL
            .into_iter()
            .filter(|k| *k != StrategyKind::Hint)
            .map(|k| {
                let kind = if k == StrategyKind::Stop {
                    PermissionOptionKind::RejectOnce
                } else {
                    PermissionOptionKind::AllowOnce
                };
                PermissionOption::new(k.as_str(), k.label(), kind)
            })
            .collect();
        let body = match &question.best_diff {
            Some(diff) => format!("The best attempt so far (its tests fail):\n```diff\n{diff}\n```"),
            None => "No attempt produced an edit that applies.".to_string(),
        };
        let id = format!("strategy-{}-{}", question.task_id, question.attempts);
        let chosen = self.pick(id, question.message(), body, options).await;
        chosen.and_then(|c| StrategyKind::parse(&c)).and_then(|k| k.choice(None)).unwrap_or(StrategyChoice::Stop)
    }

    async fn confirm_step(&self, question: &StepConfirmation) -> bool {
        let options = vec![
            PermissionOption::new("run_step", "Run step", PermissionOptionKind::AllowOnce),
            PermissionOption::new("skip_step", "Skip it (the request stops)", PermissionOptionKind::RejectOnce),
        ];
        let id = format!("step-{}-{}", question.task_id, question.step_id);
        let chosen = self.pick(id, question.message(), question.description.clone(), options).await;
        chosen.as_deref() == Some("run_step")
    }
}
