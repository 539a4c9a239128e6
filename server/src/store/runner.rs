//! A small real multi-step task executor over the bus and checkpoints.
//!
//! It stands in for the agent runtime in crash tests (`tinycoder debug-task`)
//! and shows the recording discipline the runtime follows: every step records
//! `step_started` → `tool_called` → (real work) → `tool_completed` + a
//! checkpoint in one transaction, and a restart resumes from the last valid
//! checkpoint. Each step's "tool" writes `step-N.txt` in a work directory,
//! chaining a digest of the previous step's file, so a wrong resume shows.

use super::{CheckpointDraft, EventBus, NewEvent, NewTask, StoreError, UnfinishedTask};
use crate::contracts::{EventType, RuntimeEvent, TaskStatus};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("step {step} could not write {path}: {source}")]
    Io { step: u32, path: PathBuf, source: std::io::Error },
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    Completed { digest: String },
    Failed { reason: String },
}

/// The digest step `step` writes, given the previous step's digest (the task input for step 1).
pub fn step_digest(previous: &str, step: u32) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(format!("{previous}\n{step}").as_bytes()))
}

/// Runs a task of `steps` real steps, recording everything through the bus.
pub struct StepTaskRunner {
    bus: EventBus,
    work_dir: PathBuf,
    steps: u32,
    /// Time each step's tool takes (widens the windows a crash test hits).
    step_delay: Duration,
}

impl StepTaskRunner {
    /// A runner writing into `work_dir`.
    pub fn new(bus: EventBus, work_dir: &Path, steps: u32, step_delay: Duration) -> Self {
        Self { bus, work_dir: work_dir.to_path_buf(), steps, step_delay }
    }

    fn input(task_id: &str) -> String {
        format!("debug task {task_id}")
    }

    /// Starts `task_id` afresh, or resumes it when `unfinished` has it; calls
    /// `committed` with every event after it is durably committed.
    pub async fn run(
        &self,
        task_id: &str,
        resume_from: Option<&UnfinishedTask>,
        committed: &mut dyn FnMut(&RuntimeEvent),
    ) -> Result<RunOutcome, RunnerError> {
        let (mut next_step, mut digest) = match resume_from {
            Some(u) => {
                let Some(cp) = &u.checkpoint else {
                    let reason = "no checkpoint to resume from";
                    if let Some(e) = self.bus.fail_task(task_id, reason).await? {
                        committed(&e);
                    }
                    return Ok(RunOutcome::Failed { reason: reason.into() });
                };
                let next = cp.plan_snapshot.get("next_step").and_then(|v| v.as_u64()).unwrap_or(1) as u32;
                let digest = cp.plan_snapshot.get("digest").and_then(|v| v.as_str()).map(str::to_string);
                (next, digest.unwrap_or_else(|| Self::input(task_id)))
            }
            None => {
                let (_, received) = self
                    .bus
                    .create_task(NewTask {
                        task_id: Some(task_id.to_string()),
                        input: Self::input(task_id),
                        ..Default::default()
                    })
                    .await?;
                committed(&received);
                let plan: Vec<String> = (1..=self.steps).map(|i| format!("step-{i}")).collect();
                let events = self
                    .bus
                    .checkpoint(
                        task_id,
                        vec![NewEvent::new(EventType::PlanCreated, json!({"plan": plan})).caused_by(&received)],
                        CheckpointDraft {
                            status: TaskStatus::Planning,
                            active_step_id: None,
                            plan_snapshot: json!({"steps": self.steps, "next_step": 1, "digest": Self::input(task_id)}),
                            context_snapshot: json!({"summary": "planned"}),
                        },
                    )
                    .await?;
                events.iter().for_each(&mut *committed);
                (1, Self::input(task_id))
            }
        };
        while next_step <= self.steps {
            let step_id = format!("step-{next_step}");
            let started = self.bus.append(task_id, EventType::StepStarted, json!({"step_id": step_id}), None).await?;
            committed(&started);
            let path = self.work_dir.join(format!("{step_id}.txt"));
            let called = self
                .bus
                .append(
                    task_id,
                    EventType::ToolCalled,
                    json!({"step_id": step_id, "tool": "file_write", "path": path}),
                    Some(&started.event_id),
                )
                .await?;
            committed(&called);
            let new_digest = step_digest(&digest, next_step);
            self.write_step(next_step, &path, &new_digest).await?;
            let events = self
                .bus
                .checkpoint(
                    task_id,
                    vec![NewEvent::new(
                        EventType::ToolCompleted,
                        json!({"step_id": step_id, "ok": true, "digest": new_digest}),
                    )
                    .caused_by(&called)],
                    CheckpointDraft {
                        status: TaskStatus::ExecutingStep,
                        active_step_id: Some(step_id.clone()),
                        plan_snapshot: json!({"steps": self.steps, "next_step": next_step + 1, "digest": new_digest}),
                        context_snapshot: json!({"summary": format!("{step_id} done")}),
                    },
                )
                .await?;
            events.iter().for_each(&mut *committed);
            digest = new_digest;
            next_step += 1;
        }
        let done = self.bus.append(task_id, EventType::TaskCompleted, json!({"digest": digest}), None).await?;
        committed(&done);
        Ok(RunOutcome::Completed { digest })
    }

    /// The step's tool: an atomic file write (temp + rename), so a kill leaves the old file or the new one.
    async fn write_step(&self, step: u32, path: &Path, digest: &str) -> Result<(), RunnerError> {
        tokio::time::sleep(self.step_delay).await;
        let tmp = path.with_extension("tmp");
        let io = |source| RunnerError::Io { step, path: path.to_path_buf(), source };
        tokio::fs::create_dir_all(&self.work_dir).await.map_err(io)?;
        tokio::fs::write(&tmp, format!("{digest}\n")).await.map_err(io)?;
        tokio::fs::rename(&tmp, path).await.map_err(io)?;
        Ok(())
    }
}
