//! The event chain of a planned task: each event caused by the one before.

use crate::agent::{AgentEnv, AgentError};
use crate::store::NewEvent;

/// Appends a task's events in order, linking each to the previous one.
#[derive(Debug, Clone)]
pub struct TaskLog {
    pub task_id: String,
    last_event: Option<String>,
}

impl TaskLog {
    /// The log of `task_id`, continuing after `last_event`.
    pub fn new(task_id: &str, last_event: Option<String>) -> Self {
        Self { task_id: task_id.to_string(), last_event }
    }

    /// Appends `events` (in order, atomically).
    pub async fn record(&mut self, env: &AgentEnv, events: Vec<NewEvent>) -> Result<(), AgentError> {
        if events.is_empty() {
            return Ok(());
        }
        let events = events
            .into_iter()
            .map(|mut e| {
                e.causation_id = self.last_event.clone();
                e
            })
            .collect();
        let done = env.bus.append_all(&self.task_id, events).await?;
        self.last_event = done.last().map(|e| e.event_id.clone()).or(self.last_event.take());
        Ok(())
    }
}
