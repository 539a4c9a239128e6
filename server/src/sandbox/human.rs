//! The `HumanPort`: how a dangerous command reaches a person (LSP
//! showMessageRequest, CLI prompt) or a non-interactive policy.

use super::PermissionVerdict;
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

/// The user's answer (the shared contract type); `AllowAlways`/`Deny`/`AskAlways` persist.
pub use crate::contracts::PermissionChoice;

/// Asks a person. Implementations: LSP (window/showMessageRequest with the
/// `PermissionChoice::ALL` labels as actions), CLI terminal, non-interactive.
/// A dismissed question should answer `Deny`.
#[async_trait::async_trait]
pub trait HumanPort: Send + Sync {
    /// Asks about `request`; never fails (a lost connection answers Deny).
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice;
}

/// Answers without a person, from config `permissions.non_interactive`.
#[derive(Debug, Clone)]
pub struct NonInteractiveHuman {
    allow: bool,
}

impl NonInteractiveHuman {
    /// From the config value ("allow" or "deny").
    pub fn from_config(value: &str) -> Self {
        Self { allow: value == "allow" }
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
}
