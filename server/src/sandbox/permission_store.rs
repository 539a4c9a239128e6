//! Stored permission decisions. The trait is small so the SQLite store can
//! implement it; `JsonPermissionStore` is the file-based one.

use super::{PermissionDecision, SandboxError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A stored decision for a command pattern (the exact command line, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredDecision {
    /// The command pattern.
    pub pattern: String,
    /// The decision.
    pub decision: PermissionDecision,
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
        Self {
            path: data_dir.join("permissions.json"),
            lock: Mutex::new(()),
        }
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, reason: impl ToString) -> SandboxError {
        SandboxError::Store {
            path: self.path.clone(),
            reason: reason.to_string(),
        }
    }

    fn load(&self) -> Result<Vec<StoredDecision>, SandboxError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| self.err(format!("not valid JSON ({e}); fix or delete the file, or run `tinycoder permissions reset`"))),
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
        Ok(self
            .load()?
            .into_iter()
            .find(|d| d.pattern == pattern.trim()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_list_reset_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let s = JsonPermissionStore::new(d.path());
        assert!(s.get("rm x").unwrap().is_none());
        s.put(StoredDecision {
            pattern: "rm x".into(),
            decision: PermissionDecision::AllowAlways,
            rule: Some("rm".into()),
            decided_at: 1,
        })
        .unwrap();
        s.put(StoredDecision {
            pattern: "rm x".into(),
            decision: PermissionDecision::Deny,
            rule: Some("rm".into()),
            decided_at: 2,
        })
        .unwrap();
        assert_eq!(
            JsonPermissionStore::new(d.path())
                .get("rm x")
                .unwrap()
                .unwrap()
                .decision,
            PermissionDecision::Deny
        );
        assert_eq!(s.list().unwrap().len(), 1);
        assert_eq!(s.reset().unwrap(), 1);
        assert!(s.list().unwrap().is_empty());
        std::fs::write(s.path(), "{broken").unwrap();
        assert!(s
            .list()
            .unwrap_err()
            .to_string()
            .contains("permissions reset"));
    }
}
