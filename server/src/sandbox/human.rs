//! The `HumanPort`: how a question reaches a person (LSP showMessageRequest,
//! ACP session/request_permission, CLI prompt) or a non-interactive policy:
//! a dangerous command's permission, and the strategy after repeated failure.

use super::PermissionVerdict;
use crate::contracts::{StrategyChoice, StrategyQuestion};
use serde::Serialize;

/// A question for the user about one command.
#[derive(Debug, Clone, Serialize)]
pub struct PermissionRequest {
    /// The full command line.
    pub command: String,
    /// Why the policy stopped it.
    pub verdict: PermissionVerdict,
}

impl PermissionRequest {
    /// One-line text for a prompt or a message box.
    pub fn message(&self) -> String {
        format!(
            "tinycoder wants to run `{}`, which {}: {} (rule {}{})",
            self.command,
            self.verdict.effect.as_deref().unwrap_or("cannot be checked").replace('-', " "),
            self.verdict.reason,
            self.verdict.rule.as_deref().unwrap_or("?"),
            self.verdict.sub_command.as_deref().map(|s| format!(", in `{s}`")).unwrap_or_default()
        )
    }
}

/// A question for the user about a planned step the planner marked `requires_confirmation`.
#[derive(Debug, Clone, Serialize)]
pub struct StepConfirmation {
    pub task_id: String,
    pub step_id: String,
    /// The step's file, or its command line for a command step.
    pub subject: String,
    pub description: String,
}

impl StepConfirmation {
    /// One-line text for a prompt or a message box.
    pub fn message(&self) -> String {
        format!("Run step {} of the plan ({}): {}?", self.step_id, self.subject, self.description.trim_end_matches('.'))
    }
}

/// The user's answer (the shared contract type); `AllowAlways`/`Deny`/`AskAlways` persist.
pub use crate::contracts::PermissionChoice;

/// Asks a person. Implementations: LSP (window/showMessageRequest with the
/// `PermissionChoice::ALL` labels as actions), CLI terminal, non-interactive.
/// A dismissed question should answer `Deny`.
#[async_trait::async_trait]
pub trait HumanPort: Send + Sync {
    /// Asks about `request`; never fails (a lost connection answers Deny).
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice;

    /// Asks what to do after repeated failed attempts; never fails (a dismissed or
    /// lost question answers `Stop`).
    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice;

    /// Asks whether a planned step marked `requires_confirmation` may run; never
    /// fails (a dismissed or lost question answers false: the step does not run).
    async fn confirm_step(&self, question: &StepConfirmation) -> bool;

    /// The answer every strategy question gets without asking anyone, if fixed
    /// (a policy that always stops makes the question pointless).
    fn fixed_strategy(&self) -> Option<StrategyChoice> {
        None
    }

    /// Whether a person answers (a policy's answers are not remembered as the user's).
    fn asks_a_person(&self) -> bool {
        true
    }
}

/// A `HumanPort` that asks one question at a time: steps of one request that
/// run side by side must not put two questions before the user at once (two
/// terminal prompts would read the same line).
pub struct OneQuestionAtATime {
    inner: std::sync::Arc<dyn HumanPort>,
    turn: tokio::sync::Mutex<()>,
}

impl OneQuestionAtATime {
    /// Wraps `inner`.
    pub fn new(inner: std::sync::Arc<dyn HumanPort>) -> Self {
        Self { inner, turn: tokio::sync::Mutex::new(()) }
    }
}

#[async_trait::async_trait]
impl HumanPort for OneQuestionAtATime {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        let _turn = self.turn.lock().await;
        self.inner.ask_permission(request).await
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        let _turn = self.turn.lock().await;
        self.inner.choose_strategy(question).await
    }

    async fn confirm_step(&self, question: &StepConfirmation) -> bool {
        let _turn = self.turn.lock().await;
        self.inner.confirm_step(question).await
    }

    fn fixed_strategy(&self) -> Option<StrategyChoice> {
        self.inner.fixed_strategy()
    }

    fn asks_a_person(&self) -> bool {
        self.inner.asks_a_person()
    }
}

/// Answers without a person, from config `permissions.non_interactive`.
#[derive(Debug, Clone)]
pub struct NonInteractiveHuman {
    allow: bool,
    strategy: StrategyChoice,
}

impl NonInteractiveHuman {
    /// From the config value ("allow" or "deny"); the strategy after repeated failure is `Stop`.
    pub fn from_config(value: &str) -> Self {
        Self { allow: value == "allow", strategy: StrategyChoice::Stop }
    }

    /// The answer to give after repeated failure (config `runtime.non_interactive_strategy`;
    /// a hint needs a person, so it reads as `Stop`).
    pub fn with_strategy(mut self, name: &str) -> Self {
        self.strategy =
            crate::contracts::StrategyKind::parse(name).and_then(|k| k.choice(None)).unwrap_or(StrategyChoice::Stop);
        self
    }

    /// From the whole configuration (`permissions.non_interactive`, `runtime.non_interactive_strategy`).
    pub fn from(config: &crate::config::Config) -> Self {
        Self::from_config(&config.permissions.non_interactive).with_strategy(&config.runtime.non_interactive_strategy)
    }
}

#[async_trait::async_trait]
impl HumanPort for NonInteractiveHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        tracing::info!(command = %request.command, allow = self.allow, "non-interactive permission decision");
        if self.allow {
            PermissionChoice::AllowOnce
        } else {
            PermissionChoice::Deny
        }
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        tracing::info!(task = %question.task_id, choice = ?self.strategy, "non-interactive strategy decision");
        self.strategy.clone()
    }

    /// A step that asks for confirmation runs when the policy allows commands (`permissions.non_interactive`).
    async fn confirm_step(&self, question: &StepConfirmation) -> bool {
        tracing::info!(task = %question.task_id, step = %question.step_id, run = self.allow, "non-interactive step confirmation");
        self.allow
    }

    fn fixed_strategy(&self) -> Option<StrategyChoice> {
        Some(self.strategy.clone())
    }

    fn asks_a_person(&self) -> bool {
        false
    }
}
