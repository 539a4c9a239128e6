//! The `HumanPort`: how a dangerous command reaches a person (LSP
//! showMessageRequest, CLI prompt) or a non-interactive policy.

use super::PermissionVerdict;
use serde::{Deserialize, Serialize};

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
            "tinycoder wants to run `{}`: {} (rule {}{})",
            self.command,
            self.verdict.reason,
            self.verdict.rule.as_deref().unwrap_or("?"),
            self.verdict
                .sub_command
                .as_deref()
                .map(|s| format!(", in `{s}`"))
                .unwrap_or_default()
        )
    }
}

/// The user's answer. `AllowAlways`/`Deny` persist; `AskAlways` persists "ask every time".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    /// Run it this once.
    AllowOnce,
    /// Run it now and whenever the same command comes again.
    AllowAlways,
    /// Do not run it (remembered).
    Deny,
    /// Ask again each time (remembered, overrides an earlier allow/deny).
    AskAlways,
}

impl PermissionDecision {
    /// All choices, in the order a UI offers them.
    pub const ALL: [PermissionDecision; 4] = [
        Self::AllowOnce,
        Self::AllowAlways,
        Self::Deny,
        Self::AskAlways,
    ];

    /// The label shown to the user (LSP MessageActionItem title, CLI choice).
    pub fn label(self) -> &'static str {
        match self {
            Self::AllowOnce => "Allow once",
            Self::AllowAlways => "Allow always",
            Self::Deny => "Deny",
            Self::AskAlways => "Ask always",
        }
    }

    /// The decision whose label is `label` (for mapping a MessageActionItem back).
    pub fn from_label(label: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|d| d.label().eq_ignore_ascii_case(label.trim()))
    }

    /// True when the command may run now.
    pub fn allows(self) -> bool {
        matches!(self, Self::AllowOnce | Self::AllowAlways)
    }
}

/// Asks a person. Implementations: LSP (window/showMessageRequest with the
/// `PermissionDecision::ALL` labels as actions), CLI terminal, non-interactive.
/// A dismissed question should answer `Deny`.
#[async_trait::async_trait]
pub trait HumanPort: Send + Sync {
    /// Asks about `request`; never fails (a lost connection answers Deny).
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionDecision;
}

/// Answers without a person, from config `permissions.non_interactive`.
#[derive(Debug, Clone)]
pub struct NonInteractiveHuman {
    allow: bool,
}

impl NonInteractiveHuman {
    /// From the config value ("allow" or "deny").
    pub fn from_config(value: &str) -> Self {
        Self {
            allow: value == "allow",
        }
    }
}

#[async_trait::async_trait]
impl HumanPort for NonInteractiveHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionDecision {
        tracing::info!(command = %request.command, allow = self.allow, "non-interactive permission decision");
        if self.allow {
            PermissionDecision::AllowOnce
        } else {
            PermissionDecision::Deny
        }
    }
}
