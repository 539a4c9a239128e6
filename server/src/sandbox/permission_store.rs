//! Stored permission decisions. The trait is small so the SQLite store can
//! implement it; `JsonPermissionStore` is the file-based one.

use super::{PermissionChoice, SandboxError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A stored decision for a command pattern (the exact command line, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredDecision {
    /// The command pattern.
    pub pattern: String,
    /// The decision.
    pub decision: PermissionChoice,
    /// The rule that made it dangerous.
    pub rule: Option<String>,
    /// Unix seconds when it was stored.
    pub decided_at: u64,
}

/// Where decisions persist (`get/put/list/reset`).
pub trait PermissionStore: Send + Sync {
    /// The stored decision for `pattern`, if any.
    fn get(&self, pattern: &str) -> Result<Option<StoredDecision>, SandboxError>;
    /// Stores (or replaces) a decision.
    fn put(&self, decision: StoredDecision) -> Result<(), SandboxError>;
    /// All stored decisions.
    fn list(&self) -> Result<Vec<StoredDecision>, SandboxError>;
    /// Deletes all decisions; returns how many there were.
    fn reset(&self) -> Result<usize, SandboxError>;
}

/// Decisions in `<data dir>/permissions.json`, written atomically (temp file + rename).
#[derive(Debug)]
pub struct JsonPermissionStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl JsonPermissionStore {
    /// The store in `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self { path: data_dir.join("permissions.json"), lock: Mutex::new(()) }
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, reason: impl ToString) -> SandboxError {
        SandboxError::Store { path: self.path.clone(), reason: reason.to_string() }
    }

    fn load(&self) -> Result<Vec<StoredDecision>, SandboxError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                self.err(format!("not valid JSON ({e}); fix or delete the file, or run `tinycoder permissions reset`"))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(self.err(e)),
        }
    }

    fn save(&self, all: &[StoredDecision]) -> Result<(), SandboxError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| self.err(e))?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(all).map_err(|e| self.err(e))?;
        std::fs::write(&tmp, text).map_err(|e| self.err(e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.err(e))
    }
}

impl PermissionStore for JsonPermissionStore {
    fn get(&self, pattern: &str) -> Result<Option<StoredDecision>, SandboxError> {
        let _g = self.lock.lock().map_err(|_| self.err("lock poisoned"))?;
        Ok(self.load()?.into_iter().find(|d| d.pattern == pattern.trim()))
    }

    fn put(&self, decision: StoredDecision) -> Result<(), SandboxError> {
        let _g = self.lock.lock().map_err(|_| self.err("lock poisoned"))?;
        let mut all = self.load()?;
        all.retain(|d| d.pattern != decision.pattern);
        all.push(decision);
        self.save(&all)
    }

    fn list(&self) -> Result<Vec<StoredDecision>, SandboxError> {
        let _g = self.lock.lock().map_err(|_| self.err("lock poisoned"))?;
        self.load()
    }

    fn reset(&self) -> Result<usize, SandboxError> {
        let _g = self.lock.lock().map_err(|_| self.err("lock poisoned"))?;
        let n = self.load().map(|v| v.len()).unwrap_or(0);
        self.save(&[])?;
        Ok(n)
    }
}

/// Decisions in the workspace's SQLite store (table `permission_decisions`),
/// under the action `shell` or `shell:<rule>` so the rule survives.
#[derive(Debug, Clone)]
pub struct SqlitePermissionStore {
    store: crate::store::Store,
}

impl SqlitePermissionStore {
    /// Decisions in `store`.
    pub fn new(store: crate::store::Store) -> Self {
        Self { store }
    }

    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T, crate::store::StoreError> + Send + 'static,
    ) -> Result<T, SandboxError> {
        let store = self.store.clone();
        // The trait is synchronous; inside a multi-threaded runtime let tokio move
        // other tasks off this worker while the store thread answers.
        let run = move || store.call_blocking(f);
        let result = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(run)
            }
            _ => run(),
        };
        result
            .map_err(|e| SandboxError::Store { path: PathBuf::from("(workspace SQLite store)"), reason: e.to_string() })
    }
}

fn decode_row(action: String, pattern: String, decision: String, ms: i64) -> Option<StoredDecision> {
    Some(StoredDecision {
        pattern,
        decision: PermissionChoice::parse(&decision)?,
        rule: action.strip_prefix("shell:").map(str::to_string),
        decided_at: u64::try_from(ms / 1000).unwrap_or(0),
    })
}

const SELECT_SHELL: &str = "SELECT action, pattern, decision, created_ms FROM permission_decisions
     WHERE (action = 'shell' OR action LIKE 'shell:%')";

impl PermissionStore for SqlitePermissionStore {
    fn get(&self, pattern: &str) -> Result<Option<StoredDecision>, SandboxError> {
        let pattern = pattern.trim().to_string();
        self.call(move |c| {
            let mut stmt = c.prepare(&format!("{SELECT_SHELL} AND pattern = ?1 ORDER BY created_ms DESC LIMIT 1"))?;
            let mut rows = stmt.query_map([pattern], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            Ok(rows.next().transpose()?.and_then(|(a, p, d, ms)| decode_row(a, p, d, ms)))
        })
    }

    fn put(&self, decision: StoredDecision) -> Result<(), SandboxError> {
        self.call(move |c| {
            let tx = c.transaction()?;
            tx.execute(
                "DELETE FROM permission_decisions WHERE (action = 'shell' OR action LIKE 'shell:%') AND pattern = ?1",
                [&decision.pattern],
            )?;
            let action = decision.rule.as_ref().map(|r| format!("shell:{r}")).unwrap_or_else(|| "shell".into());
            tx.execute(
                "INSERT INTO permission_decisions (action, pattern, decision, created_ms) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![
                    action,
                    decision.pattern,
                    decision.decision.as_str(),
                    decision.decided_at as i64 * 1000
                ],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn list(&self) -> Result<Vec<StoredDecision>, SandboxError> {
        self.call(|c| {
            let mut stmt = c.prepare(&format!("{SELECT_SHELL} ORDER BY pattern"))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (a, p, d, ms) = row?;
                out.extend(decode_row(a, p, d, ms));
            }
            Ok(out)
        })
    }

    fn reset(&self) -> Result<usize, SandboxError> {
        self.call(|c| {
            Ok(c.execute("DELETE FROM permission_decisions WHERE action = 'shell' OR action LIKE 'shell:%'", [])?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_store_round_trips_and_keeps_the_rule() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&d.path().join("db.sqlite3"), Default::default()).unwrap();
        let s = SqlitePermissionStore::new(store);
        assert!(s.get("rm x").unwrap().is_none());
        for decision in [PermissionChoice::AllowAlways, PermissionChoice::Deny] {
            s.put(StoredDecision { pattern: "rm x".into(), decision, rule: Some("rm".into()), decided_at: 7 }).unwrap();
        }
        let got = s.get(" rm x ").unwrap().unwrap();
        assert_eq!((got.decision, got.rule.as_deref(), got.decided_at), (PermissionChoice::Deny, Some("rm"), 7));
        assert_eq!(s.list().unwrap().len(), 1);
        assert_eq!(s.reset().unwrap(), 1);
        assert!(s.list().unwrap().is_empty());
    }

    #[test]
    fn put_get_list_reset_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let s = JsonPermissionStore::new(d.path());
        assert!(s.get("rm x").unwrap().is_none());
        s.put(StoredDecision {
            pattern: "rm x".into(),
            decision: PermissionChoice::AllowAlways,
            rule: Some("rm".into()),
            decided_at: 1,
        })
        .unwrap();
        s.put(StoredDecision {
            pattern: "rm x".into(),
            decision: PermissionChoice::Deny,
            rule: Some("rm".into()),
            decided_at: 2,
        })
        .unwrap();
        assert_eq!(JsonPermissionStore::new(d.path()).get("rm x").unwrap().unwrap().decision, PermissionChoice::Deny);
        assert_eq!(s.list().unwrap().len(), 1);
        assert_eq!(s.reset().unwrap(), 1);
        assert!(s.list().unwrap().is_empty());
        std::fs::write(s.path(), "{broken").unwrap();
        assert!(s.list().unwrap_err().to_string().contains("permissions reset"));
    }
}
