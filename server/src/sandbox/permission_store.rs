//! Stored permission decisions. The trait is small and synchronous (the gate
//! asks it from blocking code); [`SqlitePermissionStore`] keeps the decisions in
//! the workspace's SQLite store, whose `store::PermissionStore` owns the SQL.

use super::SandboxError;
pub use crate::contracts::StoredDecision;
use std::path::PathBuf;

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

/// Decisions in the workspace's SQLite store (table `permission_decisions`).
#[derive(Debug, Clone)]
pub struct SqlitePermissionStore {
    decisions: crate::store::PermissionStore,
}

impl SqlitePermissionStore {
    /// Decisions in `store`.
    pub fn new(store: crate::store::Store) -> Self {
        Self { decisions: crate::store::PermissionStore::new(store) }
    }

    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&crate::store::PermissionStore) -> Result<T, crate::store::StoreError>,
    ) -> Result<T, SandboxError> {
        // The trait is synchronous; inside a multi-threaded runtime let tokio move
        // other tasks off this worker while the store thread answers.
        let run = || f(&self.decisions);
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

impl PermissionStore for SqlitePermissionStore {
    fn get(&self, pattern: &str) -> Result<Option<StoredDecision>, SandboxError> {
        self.call(|d| d.shell_decision_blocking(pattern))
    }

    fn put(&self, decision: StoredDecision) -> Result<(), SandboxError> {
        self.call(|d| d.put_shell_decision_blocking(decision))
    }

    fn list(&self) -> Result<Vec<StoredDecision>, SandboxError> {
        self.call(|d| d.shell_decisions_blocking())
    }

    fn reset(&self) -> Result<usize, SandboxError> {
        self.call(|d| d.reset_shell_decisions_blocking())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::PermissionChoice;

    #[test]
    fn sqlite_store_round_trips_and_keeps_the_rule() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&d.path().join("db.sqlite3"), Default::default()).unwrap();
        let s = SqlitePermissionStore::new(store.clone());
        assert!(s.get("rm x").unwrap().is_none());
        for decision in [PermissionChoice::AllowAlways, PermissionChoice::Deny] {
            s.put(StoredDecision { pattern: "rm x".into(), decision, rule: Some("rm".into()), decided_at: 7 }).unwrap();
        }
        let got = s.get(" rm x ").unwrap().unwrap();
        assert_eq!((got.decision, got.rule.as_deref(), got.decided_at), (PermissionChoice::Deny, Some("rm"), 7));
        assert_eq!(
            SqlitePermissionStore::new(store).list().unwrap().len(),
            1,
            "one row per pattern, seen by a new handle"
        );
        assert_eq!(s.reset().unwrap(), 1);
        assert!(s.list().unwrap().is_empty());
    }
}
