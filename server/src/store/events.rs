//! The `events` table: appending with the per-task sequence, and reading back.

use super::StoreError;
use crate::contracts::{format_rfc3339_ms, now_ms, EventType, RuntimeEvent};
use rusqlite::{params, Connection, OptionalExtension, Row};

/// Columns in the order [`from_row`] reads them.
pub(crate) const COLUMNS: &str =
    "event_id, task_id, session_id, sequence, type, ts_ms, payload, causation_id, correlation_id";

/// Appends one event to `task_id` inside the caller's transaction: the next
/// sequence is MAX+1 of that task, and UNIQUE(task_id, sequence) rejects a
/// racing writer instead of duplicating a number.
pub(crate) fn insert(
    conn: &Connection,
    task_id: &str,
    event_type: EventType,
    payload: &serde_json::Value,
    causation_id: Option<&str>,
    correlation_id: Option<&str>,
) -> Result<RuntimeEvent, StoreError> {
    let session_id: Option<Option<String>> =
        conn.query_row("SELECT session_id FROM tasks WHERE task_id = ?1", [task_id], |r| r.get(0)).optional()?;
    let Some(session_id) = session_id else {
        return Err(StoreError::NotFound { what: format!("task {task_id}") });
    };
    let sequence: i64 =
        conn.query_row("SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE task_id = ?1", [task_id], |r| {
            r.get(0)
        })?;
    let ts = now_ms();
    let event = RuntimeEvent {
        event_id: uuid::Uuid::new_v4().to_string(),
        task_id: task_id.to_string(),
        session_id,
        sequence: sequence as u64,
        event_type,
        timestamp: format_rfc3339_ms(ts),
        payload: payload.clone(),
        causation_id: causation_id.map(str::to_string),
        correlation_id: correlation_id.unwrap_or(task_id).to_string(),
    };
    let payload_text = serde_json::to_string(payload).map_err(|e| StoreError::json("event payload", e))?;
    conn.execute(
        "INSERT INTO events (event_id, task_id, session_id, sequence, type, ts_ms, payload, causation_id, correlation_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            event.event_id,
            event.task_id,
            event.session_id,
            sequence,
            event_type.as_str(),
            ts,
            payload_text,
            event.causation_id,
            event.correlation_id
        ],
    )?;
    Ok(event)
}

/// Decodes one row selected with [`COLUMNS`].
pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Result<RuntimeEvent, StoreError>> {
    let type_name: String = row.get(4)?;
    let payload_text: String = row.get(6)?;
    let ts: i64 = row.get(5)?;
    let sequence: i64 = row.get(3)?;
    let Some(event_type) = EventType::parse(&type_name) else {
        return Ok(Err(StoreError::InvalidData { what: "event type".into(), details: type_name }));
    };
    let payload = match serde_json::from_str(&payload_text) {
        Ok(p) => p,
        Err(e) => return Ok(Err(StoreError::json("event payload", e))),
    };
    Ok(Ok(RuntimeEvent {
        event_id: row.get(0)?,
        task_id: row.get(1)?,
        session_id: row.get(2)?,
        sequence: sequence.max(0) as u64,
        event_type,
        timestamp: format_rfc3339_ms(ts),
        payload,
        causation_id: row.get(7)?,
        correlation_id: row.get(8)?,
    }))
}

/// The events of `task_id` with a sequence greater than `after`, in order.
pub(crate) fn list(conn: &Connection, task_id: &str, after: u64) -> Result<Vec<RuntimeEvent>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM events WHERE task_id = ?1 AND sequence > ?2 ORDER BY sequence"
    ))?;
    let rows = stmt.query_map(params![task_id, after as i64], from_row)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row??);
    }
    Ok(out)
}

/// The highest sequence of `task_id` (0 when it has none).
pub(crate) fn last_sequence(conn: &Connection, task_id: &str) -> Result<u64, StoreError> {
    let n: i64 =
        conn.query_row("SELECT COALESCE(MAX(sequence), 0) FROM events WHERE task_id = ?1", [task_id], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}
