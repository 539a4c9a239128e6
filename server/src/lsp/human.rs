//! `LspHuman`: the agent's questions to the person at the editor.
//! `window/showMessageRequest` with the choices as actions; a hint's text comes
//! from `tinycoder/inputText` when the client announced it
//! (`capabilities.experimental.tinycoderInputText`), else the hint is not offered.

use super::agent_flow::EditSupport;
use crate::contracts::{PermissionChoice, StrategyChoice, StrategyKind, StrategyQuestion};
use crate::sandbox::{HumanPort, PermissionRequest, StepConfirmation};
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};
use tower_lsp_server::Client;

/// `tinycoder/inputText`: the client asks the user for one line of text (`null`: dismissed).
pub enum InputText {}

/// The parameters of `tinycoder/inputText`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InputTextParams {
    /// What to ask.
    pub prompt: String,
}

impl tower_lsp_server::ls_types::request::Request for InputText {
    type Params = InputTextParams;
    type Result = Option<String>;
    const METHOD: &'static str = "tinycoder/inputText";
}

/// Asks through the editor; a dismissed or failed question answers `Stop` / `Deny`.
pub struct LspHuman {
    client: Client,
    input_text: bool,
}

impl LspHuman {
    /// A port over `client`, knowing what it supports.
    pub fn new(client: Client, support: EditSupport) -> Self {
        Self { client, input_text: support.input_text }
    }

    async fn pick(&self, message: String, titles: Vec<String>) -> Option<String> {
        let actions = titles.into_iter().map(|title| MessageActionItem { title, properties: Default::default() });
        match self.client.show_message_request(MessageType::WARNING, message, Some(actions.collect())).await {
            Ok(choice) => choice.map(|a| a.title),
            Err(e) => {
                tracing::warn!("the question could not be shown: {e}");
                None
            }
        }
    }
}

#[async_trait::async_trait]
impl HumanPort for LspHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        let titles = PermissionChoice::ALL.iter().map(|c| c.label().to_string()).collect();
        self.pick(request.message(), titles).await.and_then(|t| PermissionChoice::from_label(&t)).unwrap_or_else(|| {
            tracing::info!(command = %request.command, "the permission question was dismissed: denied");
            PermissionChoice::Deny
        })
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        let kinds: Vec<StrategyKind> =
            StrategyKind::ALL.into_iter().filter(|k| *k != StrategyKind::Hint || self.input_text).collect();
        let titles = kinds.iter().map(|k| k.label().to_string()).collect();
        let Some(kind) = self.pick(question.message(), titles).await.and_then(|t| StrategyKind::from_label(&t)) else {
            tracing::info!(task = %question.task_id, "the strategy question was dismissed: stop");
            return StrategyChoice::Stop;
        };
        let hint = if kind == StrategyKind::Hint {
            let params = InputTextParams { prompt: format!("A hint or an example for {}", question.file) };
            self.client.send_request::<InputText>(params).await.ok().flatten()
        } else {
            None
        };
        kind.choice(hint).unwrap_or(StrategyChoice::Stop)
    }

    async fn confirm_step(&self, question: &StepConfirmation) -> bool {
        let titles = vec![RUN_STEP.to_string(), SKIP_STEP.to_string()];
        self.pick(question.message(), titles).await.as_deref() == Some(RUN_STEP)
    }
}

/// The answers to a step's confirmation.
const RUN_STEP: &str = "Run step";
const SKIP_STEP: &str = "Skip it (the request stops)";
