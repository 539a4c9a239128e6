//! Why the agent could not run a task at all (as opposed to a task that failed).

/// An error that stops the runtime itself; a task that merely fails is a report, not this.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the task store failed: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("a prompt could not be rendered: {0}")]
    Prompt(#[from] crate::config::PromptError),
    #[error("the context could not be built: {0}")]
    Context(#[from] crate::context::ContextError),
    #[error("{0}")]
    Request(String),
    #[error("task {task_id} cannot be resumed: {reason}")]
    Resume { task_id: String, reason: String },
}
