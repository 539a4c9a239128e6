//! The `permission_decisions` table: what the user decided about a class of
//! actions. Shell commands are stored under the action `shell` or
//! `shell:<rule>` (so the rule survives); the sandbox's gate reads and writes
//! them through the blocking `shell_*` calls.

use super::{Store, StoreError};
use crate::contracts::{format_rfc3339_ms, now_ms, PermissionChoice, PermissionDecision, StoredDecision};
use rusqlite::{params, OptionalExtension};

/// Persisted permission decisions; cheap to clone.
#[derive(Debug, Clone)]
pub struct PermissionStore {
    store: Store,
}

fn decode(action: String, pattern: String, decision: String, ms: i64) -> Result<PermissionDecision, StoreError> {
    let choice = PermissionChoice::parse(&decision)
        .ok_or_else(|| StoreError::InvalidData { what: "permission decision".into(), details: decision })?;
    Ok(PermissionDecision { action, pattern, decision: choice, created_at: format_rfc3339_ms(ms) })
}

impl PermissionStore {
    /// Decisions in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Records (or replaces) the decision for (`action`, `pattern`). Callers persist
    /// `allow_once` only if they want it remembered for this run's bookkeeping.
    pub async fn record(&self, action: &str, pattern: &str, decision: PermissionChoice) -> Result<(), StoreError> {
        let (a, p) = (action.to_string(), pattern.to_string());
        self.store
            .call(move |c| {
                c.execute(
                    "INSERT INTO permission_decisions (action, pattern, decision, created_ms) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(action, pattern) DO UPDATE SET decision = excluded.decision, created_ms = excluded.created_ms",
                    params![a, p, decision.as_str(), now_ms()],
                )?;
                Ok(())
            })
            .await
    }

    /// The decision for (`action`, `pattern`), if one was recorded.
    pub async fn lookup(&self, action: &str, pattern: &str) -> Result<Option<PermissionDecision>, StoreError> {
        let (a, p) = (action.to_string(), pattern.to_string());
        self.store
            .call(move |c| {
                let row = c
                    .query_row(
                        "SELECT action, pattern, decision, created_ms FROM permission_decisions WHERE action = ?1 AND pattern = ?2",
                        params![a, p],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                    )
                    .optional()?;
                row.map(|(a, p, d, ms)| decode(a, p, d, ms)).transpose()
            })
            .await
    }

    /// Every recorded decision, by action then pattern.
    pub async fn list(&self) -> Result<Vec<PermissionDecision>, StoreError> {
        self.store
            .call(|c| {
                let mut stmt = c.prepare(
                    "SELECT action, pattern, decision, created_ms FROM permission_decisions ORDER BY action, pattern",
                )?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
                let mut out = Vec::new();
                for r in rows {
                    let (a, p, d, ms) = r?;
                    out.push(decode(a, p, d, ms)?);
                }
                Ok(out)
            })
            .await
    }

    /// Forgets decisions: all, those of `action`, or the one (`action`, `pattern`); returns how many.
    pub async fn reset(&self, action: Option<&str>, pattern: Option<&str>) -> Result<usize, StoreError> {
        let (a, p) = (action.map(str::to_string), pattern.map(str::to_string));
        self.store
            .call(move |c| {
                Ok(c.execute(
                    "DELETE FROM permission_decisions WHERE (?1 IS NULL OR action = ?1) AND (?2 IS NULL OR pattern = ?2)",
                    params![a, p],
                )?)
            })
            .await
    }
}

fn decode_shell(action: String, pattern: String, decision: String, ms: i64) -> Option<StoredDecision> {
    Some(StoredDecision {
        pattern,
        decision: PermissionChoice::parse(&decision)?,
        rule: action.strip_prefix("shell:").map(str::to_string),
        decided_at: u64::try_from(ms / 1000).unwrap_or(0),
    })
}

const SELECT_SHELL: &str = "SELECT action, pattern, decision, created_ms FROM permission_decisions
     WHERE (action = 'shell' OR action LIKE 'shell:%')";

/// The shell-command decisions, for callers that cannot await (the gate's trait is synchronous).
impl PermissionStore {
    /// The latest decision for the command line `pattern` (trimmed).
    pub fn shell_decision_blocking(&self, pattern: &str) -> Result<Option<StoredDecision>, StoreError> {
        let pattern = pattern.trim().to_string();
        self.store.call_blocking(move |c| {
            let mut stmt = c.prepare(&format!("{SELECT_SHELL} AND pattern = ?1 ORDER BY created_ms DESC LIMIT 1"))?;
            let mut rows = stmt.query_map([pattern], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            Ok(rows.next().transpose()?.and_then(|(a, p, d, ms)| decode_shell(a, p, d, ms)))
        })
    }

    /// Stores (or replaces) the decision for a command line.
    pub fn put_shell_decision_blocking(&self, decision: StoredDecision) -> Result<(), StoreError> {
        self.store.call_blocking(move |c| {
            let tx = c.transaction()?;
            tx.execute(
                "DELETE FROM permission_decisions WHERE (action = 'shell' OR action LIKE 'shell:%') AND pattern = ?1",
                [&decision.pattern],
            )?;
            let action = decision.rule.as_ref().map(|r| format!("shell:{r}")).unwrap_or_else(|| "shell".into());
            tx.execute(
                "INSERT INTO permission_decisions (action, pattern, decision, created_ms) VALUES (?1, ?2, ?3, ?4)",
                params![action, decision.pattern, decision.decision.as_str(), decision.decided_at as i64 * 1000],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Every shell-command decision, by pattern.
    pub fn shell_decisions_blocking(&self) -> Result<Vec<StoredDecision>, StoreError> {
        self.store.call_blocking(|c| {
            let mut stmt = c.prepare(&format!("{SELECT_SHELL} ORDER BY pattern"))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (a, p, d, ms) = row?;
                out.extend(decode_shell(a, p, d, ms));
            }
            Ok(out)
        })
    }

    /// Forgets every shell-command decision; returns how many there were.
    pub fn reset_shell_decisions_blocking(&self) -> Result<usize, StoreError> {
        self.store.call_blocking(|c| {
            Ok(c.execute("DELETE FROM permission_decisions WHERE action = 'shell' OR action LIKE 'shell:%'", [])?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn decisions_persist_replace_and_reset() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        let store = Store::open(&path, Default::default()).expect("open");
        let perms = PermissionStore::new(store.clone());
        perms.record("shell_command", "rm", PermissionChoice::Deny).await.expect("record");
        perms.record("shell_command", "rm", PermissionChoice::AllowAlways).await.expect("replace");
        perms.record("shell_command", "sudo", PermissionChoice::AskAlways).await.expect("record");
        drop(perms);
        drop(store);
        let perms = PermissionStore::new(Store::open(&path, Default::default()).expect("reopen"));
        let rm = perms.lookup("shell_command", "rm").await.expect("lookup").expect("present");
        assert_eq!(rm.decision, PermissionChoice::AllowAlways);
        assert_eq!(perms.list().await.expect("list").len(), 2);
        assert_eq!(perms.reset(Some("shell_command"), Some("rm")).await.expect("reset"), 1);
        assert_eq!(perms.lookup("shell_command", "rm").await.expect("lookup"), None);
        assert_eq!(perms.reset(None, None).await.expect("reset all"), 1);
    }
}
