//! At start-up, tasks that did not finish in an earlier run are put to the user
//! (`window/showMessageRequest`) instead of being resumed or failed silently:
//! resume them from their last checkpoint (their patch comes back as any other),
//! or end them as failed with a reason; either way none is left unexplained.

use super::server::Backend;
use crate::store::EventBus;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

/// The action that ends the unfinished tasks as failed.
pub const MARK_FAILED: &str = "Mark as failed";
/// The action that leaves them as they are.
pub const KEEP: &str = "Resume";

impl Backend {
    /// Looks for `folder`'s unfinished tasks off the handler (store opened on a blocking thread) and asks the user.
    pub(super) fn ask_about_unfinished_tasks(&self, folder: &super::roots::WorkspaceRoot) {
        let Ok(open) = self.store_opener_in(folder) else { return };
        let client = self.client.clone();
        let launcher = self.launcher_in(folder);
        // With several folders, the question says which one the tasks belong to.
        let place = match self.roots().len() {
            0 | 1 => String::new(),
            _ => format!(" in {}", folder.root.display()),
        };
        tokio::spawn(async move {
            let opened = tokio::task::spawn_blocking(open).await;
            let store = match opened {
                Ok(Ok(store)) => store,
                Ok(Err(e)) => {
                    // Said once at start-up: every flow that needs the store fails with the same error.
                    tracing::warn!("unfinished tasks not checked: {e}");
                    let message = format!(
                        "tinycoder: {e}. Until then fixes, edits, answers, tasks and memory are unavailable and \
                         chats are not kept; symbols, code actions, indexing and tests still work."
                    );
                    return client.show_message(MessageType::WARNING, message).await;
                }
                Err(e) => return tracing::warn!("unfinished tasks not checked: {e}"),
            };
            let bus = EventBus::new(store);
            let tasks = match bus.unfinished_tasks().await {
                Ok(t) if !t.is_empty() => t,
                Ok(_) => return,
                Err(e) => return tracing::warn!("unfinished tasks not checked: {e}"),
            };
            let names: Vec<String> = tasks
                .iter()
                .take(3)
                .map(|t| {
                    format!("\"{}\" ({})", t.task.input.chars().take(50).collect::<String>(), t.task.status.as_str())
                })
                .collect();
            let more = if tasks.len() > 3 { format!(" and {} more", tasks.len() - 3) } else { String::new() };
            let message = format!(
                "tinycoder: {} task(s){place} did not finish in an earlier run: {}{more}. Resume them from \
                 their last checkpoint, or mark them as failed?",
                tasks.len(),
                names.join(", ")
            );
            let actions = [KEEP, MARK_FAILED]
                .map(|title| MessageActionItem { title: title.to_string(), properties: Default::default() })
                .to_vec();
            let answer = client.show_message_request(MessageType::WARNING, message, Some(actions)).await;
            if matches!(answer, Ok(Some(ref item)) if item.title == KEEP) {
                tracing::info!(count = tasks.len(), "resuming unfinished tasks");
                return match launcher {
                    Ok(l) => l.resume_all(tasks, bus.store().clone()),
                    Err(e) => tracing::warn!("unfinished tasks not resumed: {}", e.message),
                };
            }
            if !matches!(answer, Ok(Some(ref item)) if item.title == MARK_FAILED) {
                return tracing::info!(count = tasks.len(), "unfinished tasks left as they are");
            }
            for t in tasks {
                let reason =
                    format!("interrupted while {}; marked as failed by the user at start-up", t.task.status.as_str());
                if let Err(e) = bus.fail_task(&t.task.task_id, &reason).await {
                    tracing::warn!(task = t.task.task_id, "task not marked as failed: {e}");
                }
            }
        });
    }
}
