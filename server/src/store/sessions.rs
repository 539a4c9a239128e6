//! Chat sessions and their turns (`sessions` + `messages`).

use super::{Store, StoreError};
use crate::contracts::{format_rfc3339_ms, now_ms};
use crate::llm::ChatRole;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// A chat session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    pub title: String,
    /// The running summary of turns 1..=`summarized_through`.
    pub summary: String,
    /// The last turn folded into `summary` (0 = none).
    pub summarized_through: u64,
    pub turns: u64,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
}

/// One message of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// 1-based position in the session.
    pub turn: u64,
    pub role: ChatRole,
    pub content: String,
    /// RFC 3339 UTC.
    pub timestamp: String,
}

fn role_name(role: ChatRole) -> &'static str {
    match role {
        ChatRole::System => "system",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
    }
}

fn parse_role(s: &str) -> Result<ChatRole, StoreError> {
    match s {
        "system" => Ok(ChatRole::System),
        "user" => Ok(ChatRole::User),
        "assistant" => Ok(ChatRole::Assistant),
        other => Err(StoreError::InvalidData { what: "message role".into(), details: other.into() }),
    }
}

/// Sessions persisted in the store; cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionStore {
    store: Store,
}

const SESSION_SELECT: &str =
    "SELECT s.session_id, s.title, s.summary, s.summarized_through, s.created_ms, s.updated_ms,
     (SELECT COALESCE(MAX(turn), 0) FROM messages m WHERE m.session_id = s.session_id) FROM sessions s";

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    let through: i64 = r.get(3)?;
    let turns: i64 = r.get(6)?;
    Ok(Session {
        session_id: r.get(0)?,
        title: r.get(1)?,
        summary: r.get(2)?,
        summarized_through: through.max(0) as u64,
        turns: turns.max(0) as u64,
        created_at: format_rfc3339_ms(r.get(4)?),
        updated_at: format_rfc3339_ms(r.get(5)?),
    })
}

impl SessionStore {
    /// Sessions in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Creates a session.
    pub async fn create(&self, title: &str) -> Result<Session, StoreError> {
        self.ensure(&uuid::Uuid::new_v4().to_string(), title).await
    }

    /// The session `id`, created with `title` if it does not exist yet (an editor names its own sessions).
    pub async fn ensure(&self, id: &str, title: &str) -> Result<Session, StoreError> {
        let title = title.to_string();
        let sid = id.to_string();
        self.store
            .call(move |c| {
                let now = now_ms();
                c.execute(
                    "INSERT OR IGNORE INTO sessions (session_id, title, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
                    params![sid, title, now],
                )?;
                Ok(())
            })
            .await?;
        self.get(id).await?.ok_or_else(|| StoreError::NotFound { what: format!("session {id}") })
    }

    /// One session.
    pub async fn get(&self, session_id: &str) -> Result<Option<Session>, StoreError> {
        let id = session_id.to_string();
        self.store
            .call(move |c| {
                Ok(c.query_row(&format!("{SESSION_SELECT} WHERE s.session_id = ?1"), [id], session_row).optional()?)
            })
            .await
    }

    /// Sessions, most recently updated first.
    pub async fn list(&self, limit: usize) -> Result<Vec<Session>, StoreError> {
        self.store
            .call(move |c| {
                let mut stmt = c.prepare(&format!("{SESSION_SELECT} ORDER BY s.updated_ms DESC LIMIT ?1"))?;
                let rows = stmt.query_map([limit as i64], session_row)?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
    }

    /// Appends a turn; returns it with its number.
    pub async fn append_turn(&self, session_id: &str, role: ChatRole, content: &str) -> Result<Turn, StoreError> {
        let id = session_id.to_string();
        let content = content.to_string();
        self.store
            .call(move |c| {
                let tx = c.transaction()?;
                let now = now_ms();
                let updated =
                    tx.execute("UPDATE sessions SET updated_ms = ?2 WHERE session_id = ?1", params![id, now])?;
                if updated == 0 {
                    return Err(StoreError::NotFound { what: format!("session {id}") });
                }
                let turn: i64 = tx.query_row(
                    "SELECT COALESCE(MAX(turn), 0) + 1 FROM messages WHERE session_id = ?1",
                    [&id],
                    |r| r.get(0),
                )?;
                tx.execute(
                    "INSERT INTO messages (session_id, turn, role, content, ts_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, turn, role_name(role), content, now],
                )?;
                tx.commit()?;
                Ok(Turn { turn: turn as u64, role, content, timestamp: format_rfc3339_ms(now) })
            })
            .await
    }

    /// Turns after `after` (0 = all), in order.
    pub async fn turns(&self, session_id: &str, after: u64) -> Result<Vec<Turn>, StoreError> {
        let id = session_id.to_string();
        self.store
            .call(move |c| {
                let mut stmt = c.prepare(
                    "SELECT turn, role, content, ts_ms FROM messages WHERE session_id = ?1 AND turn > ?2 ORDER BY turn",
                )?;
                let rows = stmt.query_map(params![id, after as i64], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
                })?;
                let mut out = Vec::new();
                for r in rows {
                    let (turn, role, content, ms) = r?;
                    out.push(Turn {
                        turn: turn as u64,
                        role: parse_role(&role)?,
                        content,
                        timestamp: format_rfc3339_ms(ms),
                    });
                }
                Ok(out)
            })
            .await
    }

    /// Replaces the running summary, covering turns up to `through`. Refuses to go backwards
    /// (a concurrent summarizer that finished later with older input loses).
    pub async fn set_summary(&self, session_id: &str, summary: &str, through: u64) -> Result<bool, StoreError> {
        let id = session_id.to_string();
        let summary = summary.to_string();
        self.store
            .call(move |c| {
                let n = c.execute(
                    "UPDATE sessions SET summary = ?2, summarized_through = ?3, updated_ms = ?4
                     WHERE session_id = ?1 AND summarized_through < ?3",
                    params![id, summary, through as i64, now_ms()],
                )?;
                Ok(n == 1)
            })
            .await
    }

    /// Deletes a session and its turns; false when it did not exist.
    pub async fn delete(&self, session_id: &str) -> Result<bool, StoreError> {
        let id = session_id.to_string();
        self.store.call(move |c| Ok(c.execute("DELETE FROM sessions WHERE session_id = ?1", [id])? == 1)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_and_turns_persist_across_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        let sessions = SessionStore::new(Store::open(&path, Default::default()).expect("open"));
        let a = sessions.create("first").await.expect("create");
        let b = sessions.create("second").await.expect("create");
        sessions.append_turn(&a.session_id, ChatRole::User, "why does total() fail?").await.expect("turn");
        let t = sessions.append_turn(&a.session_id, ChatRole::Assistant, "it adds int and str").await.expect("turn");
        assert_eq!(t.turn, 2);
        let missing = sessions.append_turn("nope", ChatRole::User, "x").await.expect_err("no session");
        assert!(matches!(missing, StoreError::NotFound { .. }));
        assert!(sessions.set_summary(&a.session_id, "total() bug", 1).await.expect("summary"));
        assert!(!sessions.set_summary(&a.session_id, "older", 1).await.expect("summary"), "never goes backwards");
        drop(sessions);
        let sessions = SessionStore::new(Store::open(&path, Default::default()).expect("reopen"));
        let got = sessions.get(&a.session_id).await.expect("get").expect("session");
        assert_eq!((got.turns, got.summarized_through, got.summary.as_str()), (2, 1, "total() bug"));
        let turns = sessions.turns(&a.session_id, 1).await.expect("turns");
        assert_eq!(
            turns.iter().map(|t| (t.role, t.content.as_str())).collect::<Vec<_>>(),
            vec![(ChatRole::Assistant, "it adds int and str")]
        );
        assert_eq!(sessions.list(10).await.expect("list").len(), 2);
        assert!(sessions.delete(&b.session_id).await.expect("delete"));
        assert_eq!(sessions.list(10).await.expect("list").len(), 1);
    }
}
