//! The `tasks` and `checkpoints` tables.

use super::StoreError;
use crate::contracts::{format_rfc3339_ms, now_ms, TaskCheckpoint, TaskStatus};
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

/// A task as the `tasks` table holds it (its status mirrors the event reducer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub session_id: Option<String>,
    pub input: String,
    pub status: TaskStatus,
    /// Why it failed (failed tasks only).
    pub failure_reason: Option<String>,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
}

/// What creating a task needs.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    /// The id to use; `None` = a fresh uuid.
    pub task_id: Option<String>,
    pub session_id: Option<String>,
    /// The user's request.
    pub input: String,
    /// Payload of the `task_received` event (e.g. the request's context).
    pub context: serde_json::Value,
}

/// A checkpoint to save (the store fills in the task, sequence and time).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointDraft {
    pub status: TaskStatus,
    pub active_step_id: Option<String>,
    pub plan_snapshot: serde_json::Value,
    pub context_snapshot: serde_json::Value,
}

/// What retention removes for finished tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Events and checkpoints of finished tasks older than this many days go (0 = never).
    pub max_age_days: u32,
    /// Newest events kept per finished task (0 = all).
    pub max_events_per_task: u32,
    /// Newest checkpoints kept per task (0 = all).
    pub max_checkpoints_per_task: u32,
}

impl RetentionPolicy {
    /// From the `[store]` config section.
    pub fn from_config(c: &crate::config::StoreConfig) -> Self {
        Self {
            max_age_days: c.retention_days,
            max_events_per_task: c.retention_max_events_per_task,
            max_checkpoints_per_task: c.retention_max_checkpoints_per_task,
        }
    }
}

const TASK_COLUMNS: &str = "task_id, session_id, input, status, failure_reason, created_ms, updated_ms";

fn task_from_row(row: &Row<'_>) -> rusqlite::Result<Result<TaskRecord, StoreError>> {
    let status: String = row.get(3)?;
    let Some(status) = TaskStatus::parse(&status) else {
        return Ok(Err(StoreError::InvalidData { what: "task status".into(), details: status }));
    };
    Ok(Ok(TaskRecord {
        task_id: row.get(0)?,
        session_id: row.get(1)?,
        input: row.get(2)?,
        status,
        failure_reason: row.get(4)?,
        created_at: format_rfc3339_ms(row.get(5)?),
        updated_at: format_rfc3339_ms(row.get(6)?),
    }))
}

/// Inserts a task row (status `received`); the caller appends `task_received` in the same transaction.
pub(crate) fn insert(conn: &Connection, task_id: &str, new: &NewTask) -> Result<(), StoreError> {
    let now = now_ms();
    let inserted = conn.execute(
        "INSERT OR IGNORE INTO tasks (task_id, session_id, input, status, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![task_id, new.session_id, new.input, TaskStatus::Received.as_str(), now],
    )?;
    if inserted == 0 {
        return Err(StoreError::Conflict(format!("task {task_id} already exists")));
    }
    Ok(())
}

/// One task.
pub(crate) fn get(conn: &Connection, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
    let row = conn
        .query_row(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?1"), [task_id], task_from_row)
        .optional()?;
    row.transpose()
}

/// Tasks, newest first; `unfinished_only` keeps those not completed, failed or cancelled.
pub(crate) fn list(conn: &Connection, unfinished_only: bool, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
    let filter = if unfinished_only { "WHERE status NOT IN ('completed', 'failed', 'cancelled')" } else { "" };
    let mut stmt =
        conn.prepare(&format!("SELECT {TASK_COLUMNS} FROM tasks {filter} ORDER BY created_ms DESC, task_id LIMIT ?1"))?;
    let rows = stmt.query_map([limit as i64], task_from_row)?;
    let mut out = Vec::new();
    for r in rows {
        out.push(r??);
    }
    Ok(out)
}

/// Sets the status (and the failure reason, for failed tasks).
pub(crate) fn set_status(
    conn: &Connection,
    task_id: &str,
    status: TaskStatus,
    reason: Option<&str>,
) -> Result<(), StoreError> {
    let now = now_ms();
    let finished = status.is_terminal().then_some(now);
    conn.execute(
        "UPDATE tasks SET status = ?2, failure_reason = COALESCE(?3, failure_reason), updated_ms = ?4,
         finished_ms = COALESCE(?5, finished_ms) WHERE task_id = ?1",
        params![task_id, status.as_str(), reason, now, finished],
    )?;
    Ok(())
}

/// Saves a checkpoint covering events up to `last_sequence`; returns its id.
pub(crate) fn insert_checkpoint(
    conn: &Connection,
    task_id: &str,
    draft: &CheckpointDraft,
    last_sequence: u64,
) -> Result<i64, StoreError> {
    let plan = serde_json::to_string(&draft.plan_snapshot).map_err(|e| StoreError::json("plan snapshot", e))?;
    let context =
        serde_json::to_string(&draft.context_snapshot).map_err(|e| StoreError::json("context snapshot", e))?;
    conn.execute(
        "INSERT INTO checkpoints (task_id, status, active_step_id, plan_snapshot, context_snapshot, last_sequence, ts_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![task_id, draft.status.as_str(), draft.active_step_id, plan, context, last_sequence as i64, now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The newest checkpoint of `task_id` whose snapshots decode (an undecodable one is skipped, not trusted).
pub(crate) fn last_valid_checkpoint(conn: &Connection, task_id: &str) -> Result<Option<TaskCheckpoint>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT status, active_step_id, plan_snapshot, context_snapshot, last_sequence, ts_ms
         FROM checkpoints WHERE task_id = ?1 ORDER BY checkpoint_id DESC",
    )?;
    let mut rows = stmt.query([task_id])?;
    while let Some(row) = rows.next()? {
        let status: String = row.get(0)?;
        let plan: String = row.get(2)?;
        let context: String = row.get(3)?;
        let (Some(status), Ok(plan_snapshot), Ok(context_snapshot)) =
            (TaskStatus::parse(&status), serde_json::from_str(&plan), serde_json::from_str(&context))
        else {
            tracing::warn!("skipping an undecodable checkpoint of task {task_id}");
            continue;
        };
        let last: i64 = row.get(4)?;
        return Ok(Some(TaskCheckpoint {
            task_id: task_id.to_string(),
            status,
            active_step_id: row.get(1)?,
            plan_snapshot,
            context_snapshot,
            last_sequence: last.max(0) as u64,
            updated_at: format_rfc3339_ms(row.get(5)?),
        }));
    }
    Ok(None)
}

/// How many events `task_id` has after its newest checkpoint.
pub(crate) fn events_since_checkpoint(conn: &Connection, task_id: &str) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM events WHERE task_id = ?1 AND sequence >
           COALESCE((SELECT MAX(last_sequence) FROM checkpoints WHERE task_id = ?1), 0)",
        [task_id],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Applies retention to finished tasks (and checkpoint caps to all); returns (events, checkpoints) deleted.
pub(crate) fn prune(conn: &mut Connection, policy: RetentionPolicy) -> Result<(usize, usize), StoreError> {
    let tx = conn.transaction()?;
    let finished = "SELECT task_id FROM tasks WHERE status IN ('completed', 'failed', 'cancelled')";
    let mut events = 0;
    let mut checkpoints = 0;
    if policy.max_age_days > 0 {
        let cutoff = now_ms() - i64::from(policy.max_age_days) * 86_400_000;
        events += tx.execute(&format!("DELETE FROM events WHERE ts_ms < ?1 AND task_id IN ({finished})"), [cutoff])?;
        checkpoints +=
            tx.execute(&format!("DELETE FROM checkpoints WHERE ts_ms < ?1 AND task_id IN ({finished})"), [cutoff])?;
    }
    if policy.max_events_per_task > 0 {
        events += tx.execute(
            &format!(
                "DELETE FROM events WHERE task_id IN ({finished}) AND sequence <=
                 (SELECT MAX(e2.sequence) FROM events e2 WHERE e2.task_id = events.task_id) - ?1"
            ),
            [i64::from(policy.max_events_per_task)],
        )?;
    }
    if policy.max_checkpoints_per_task > 0 {
        checkpoints += tx.execute(
            "DELETE FROM checkpoints WHERE checkpoint_id NOT IN (
               SELECT checkpoint_id FROM (
                 SELECT checkpoint_id, ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY checkpoint_id DESC) AS rn
                 FROM checkpoints) WHERE rn <= ?1)",
            [i64::from(policy.max_checkpoints_per_task)],
        )?;
    }
    tx.commit()?;
    Ok((events, checkpoints))
}
