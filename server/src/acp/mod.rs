//! The Agent Client Protocol adapter (`tinycoder acp`): the agent in the agent
//! panels of Zed, JetBrains IDEs, Neovim (CodeCompanion, avante) and terminal
//! clients, over JSON-RPC on stdio. A third adapter beside `lsp/` and `cli/`.
//!
//! Start reading at `server.rs` (the handlers), then `turn.rs` (one prompt
//! turn: a question, a fix, an edit, a planned request that spans files, or a
//! test run), then `updates.rs` (the
//! task's events as `session/update`s) and `writes.rs` (permission, then
//! `fs/write_text_file`).
//!
//! Architecture Invariant: only this module knows ACP types. The agent core
//! gets plain requests (`AgentRequest`, a question) and a `SourceView`
//! (`sources.rs`) that reads through the client, so unsaved buffers are seen.
//! A user's file changes only after `session/request_permission` allowed it,
//! through the client's `fs/write_text_file` when it offers one.

mod human;
mod intent;
mod server;
mod session;
mod sources;
mod transport;
mod turn;
mod updates;
mod writes;

pub use intent::{classify, Intent};
pub use server::serve;

/// Why the ACP adapter could not run or open a workspace.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("the configuration of {root} is invalid: {source}")]
    Config { root: String, source: Box<crate::config::ConfigError> },
    #[error("{0}")]
    Workspace(#[from] Box<crate::agent::WorkspaceError>),
    #[error("the model call failed: {0}")]
    Model(#[from] Box<crate::llm::LlmError>),
    #[error("the workspace `{0}` is not an absolute path to a folder")]
    BadRoot(String),
    #[error("{0}")]
    Agent(#[from] Box<crate::agent::AgentError>),
    #[error("the tests could not run: {0}")]
    Sandbox(#[from] Box<crate::sandbox::SandboxError>),
    #[error("the connection to the client failed: {0}")]
    Protocol(String),
}

impl From<crate::agent::AgentError> for AcpError {
    fn from(e: crate::agent::AgentError) -> Self {
        Self::Agent(Box::new(e))
    }
}

impl From<crate::sandbox::SandboxError> for AcpError {
    fn from(e: crate::sandbox::SandboxError) -> Self {
        Self::Sandbox(Box::new(e))
    }
}

impl From<crate::llm::LlmError> for AcpError {
    fn from(e: crate::llm::LlmError) -> Self {
        Self::Model(Box::new(e))
    }
}

impl From<crate::agent::WorkspaceError> for AcpError {
    fn from(e: crate::agent::WorkspaceError) -> Self {
        Self::Workspace(Box::new(e))
    }
}
