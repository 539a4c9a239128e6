//! Start-up handling of tasks a crash or kill left unfinished: resume from the
//! last valid checkpoint or end them as failed with the reason; none dangles.

use super::{tasks, EventBus, StoreError, TaskRecord};
use crate::contracts::TaskCheckpoint;

/// What to do with unfinished tasks at start-up (`store.on_unfinished`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumePolicy {
    /// Hand the tasks with a valid checkpoint to the caller to resume (the LSP asks the user first);
    /// those without one fail.
    Resume,
    /// End every unfinished task as failed.
    Fail,
}

impl ResumePolicy {
    /// From `store.on_unfinished` ("resume" | "fail").
    pub fn from_config(c: &crate::config::StoreConfig) -> Self {
        if c.on_unfinished == "fail" {
            Self::Fail
        } else {
            Self::Resume
        }
    }
}

/// An unfinished task and where it can resume from.
#[derive(Debug, Clone, PartialEq)]
pub struct UnfinishedTask {
    pub task: TaskRecord,
    /// Its newest checkpoint that decodes; `None` = it cannot resume.
    pub checkpoint: Option<TaskCheckpoint>,
}

/// The result of applying a [`ResumePolicy`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResumeOutcome {
    /// Tasks the caller must now resume, or end with [`EventBus::fail_task`] (e.g. when the user declines).
    pub to_resume: Vec<UnfinishedTask>,
    /// Tasks ended as failed: (task id, reason).
    pub failed: Vec<(String, String)>,
}

impl EventBus {
    /// Tasks not completed, failed or cancelled, each with its last valid checkpoint.
    pub async fn unfinished_tasks(&self) -> Result<Vec<UnfinishedTask>, StoreError> {
        self.store()
            .call(|c| {
                let records = tasks::list(c, true, usize::MAX >> 1)?;
                records
                    .into_iter()
                    .map(|task| {
                        let checkpoint = tasks::last_valid_checkpoint(c, &task.task_id)?;
                        Ok(UnfinishedTask { task, checkpoint })
                    })
                    .collect()
            })
            .await
    }

    /// Applies `policy` to every unfinished task: fails those that cannot or must not resume (with the reason)
    /// and returns the rest for the caller to resume.
    pub async fn apply_resume_policy(&self, policy: ResumePolicy) -> Result<ResumeOutcome, StoreError> {
        let mut outcome = ResumeOutcome::default();
        for unfinished in self.unfinished_tasks().await? {
            let status = unfinished.task.status.as_str();
            let reason = match (policy, &unfinished.checkpoint) {
                (ResumePolicy::Resume, Some(_)) => {
                    outcome.to_resume.push(unfinished);
                    continue;
                }
                (ResumePolicy::Resume, None) => {
                    format!("interrupted while {status}: tinycoder stopped before the task saved a checkpoint to resume from")
                }
                (ResumePolicy::Fail, _) => {
                    format!("interrupted while {status}: tinycoder stopped and store.on_unfinished is \"fail\"")
                }
            };
            self.fail_task(&unfinished.task.task_id, &reason).await?;
            outcome.failed.push((unfinished.task.task_id, reason));
        }
        Ok(outcome)
    }
}
