//! Workspace trust: the user's recorded decisions about workspaces whose own
//! settings loosen a security key. A decision is keyed by the workspace's
//! canonical path, the source of the settings (its `.tinycoder.toml`, or the
//! editor's settings for it) and the SHA-256 of what that source says, so any
//! change to the file asks again.
//!
//! The records live in `trust.json` under the user's data root, never inside a
//! workspace (nor under `store.dir`, which a workspace may not move on its own).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// File name of the trust records under the data root.
pub const TRUST_FILE: &str = "trust.json";

/// Where the settings that loosen a security key come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum TrustSource {
    /// The workspace's `.tinycoder.toml`.
    WorkspaceFile,
    /// The editor's `initializationOptions` / settings for this workspace.
    EditorSettings,
}

impl std::fmt::Display for TrustSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TrustSource::WorkspaceFile => "the workspace's .tinycoder.toml",
            TrustSource::EditorSettings => "the editor's settings for this workspace",
        })
    }
}

/// What the user decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustDecision {
    /// Apply the source's loosenings.
    Trusted,
    /// Keep ignoring them, and do not ask again for this content.
    Declined,
}

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// Canonical workspace root.
    pub workspace: PathBuf,
    /// Which settings of it.
    pub source: TrustSource,
    /// SHA-256 (hex) of those settings when the user decided.
    pub sha256: String,
    /// The decision.
    pub decision: TrustDecision,
    /// Seconds since the Unix epoch when it was recorded.
    pub at: u64,
}

/// The trust records could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error(
        "cannot read the workspace trust records: {source}; fix or delete the file (it only holds trust decisions)"
    )]
    Read { path: PathBuf, source: crate::paths::SettingsFileError },
    #[error(
        "the workspace trust records {path} are corrupt ({message}); delete the file and trust the workspaces again"
    )]
    Corrupt { path: PathBuf, message: String },
    #[error("cannot save the workspace trust records to {path}: {source}; check that the data directory is writable (TINYCODER_DATA_DIR)")]
    Write { path: PathBuf, source: std::io::Error },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    records: Vec<TrustRecord>,
}

/// The user's trust records (a snapshot of `trust.json`; writes re-read the file first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceTrust {
    /// The file the records come from (`None`: in memory only).
    pub path: Option<PathBuf>,
    /// All records, any workspace.
    pub records: Vec<TrustRecord>,
}

/// The canonical form of a workspace root (as given when it does not exist).
pub fn canonical_workspace(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl WorkspaceTrust {
    /// The records in `path`; a missing file means none.
    pub fn load(path: &Path) -> Result<Self, TrustError> {
        let records = read_records(path)?;
        Ok(Self { path: Some(path.to_path_buf()), records })
    }

    /// The records of the user's data root (`$TINYCODER_DATA_DIR` or `$XDG_DATA_HOME/tinycoder`).
    /// Unreadable records count as no trust at all (the safe side), with a warning.
    pub fn load_user() -> Self {
        let path = crate::paths::data_root().join(TRUST_FILE);
        Self::load(&path).unwrap_or_else(|e| {
            tracing::warn!("{e}; no workspace is trusted until then");
            Self { path: Some(path), records: Vec::new() }
        })
    }

    /// The decision recorded for `workspace`'s `source` with content hash `sha256`.
    pub fn decision(&self, workspace: &Path, source: TrustSource, sha256: &str) -> Option<TrustDecision> {
        let workspace = canonical_workspace(workspace);
        self.records
            .iter()
            .find(|r| r.workspace == workspace && r.source == source && r.sha256 == sha256)
            .map(|r| r.decision)
    }

    /// The records of one workspace.
    pub fn records_for(&self, workspace: &Path) -> Vec<&TrustRecord> {
        let workspace = canonical_workspace(workspace);
        self.records.iter().filter(|r| r.workspace == workspace).collect()
    }

    /// Records `decision` for `workspace`'s `source` at content `sha256` (replacing an
    /// earlier decision for that source) and saves the file atomically.
    pub fn record(
        &mut self,
        workspace: &Path,
        source: TrustSource,
        sha256: &str,
        decision: TrustDecision,
    ) -> Result<(), TrustError> {
        let workspace = canonical_workspace(workspace);
        self.reload()?;
        self.records.retain(|r| !(r.workspace == workspace && r.source == source));
        let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        self.records.push(TrustRecord { workspace, source, sha256: sha256.to_string(), decision, at });
        self.save()
    }

    /// Removes every record of `workspace`; returns how many there were.
    pub fn revoke(&mut self, workspace: &Path) -> Result<usize, TrustError> {
        let workspace = canonical_workspace(workspace);
        self.reload()?;
        let before = self.records.len();
        self.records.retain(|r| r.workspace != workspace);
        let removed = before - self.records.len();
        if removed > 0 {
            self.save()?;
        }
        Ok(removed)
    }

    fn reload(&mut self) -> Result<(), TrustError> {
        if let Some(path) = &self.path {
            self.records = read_records(path)?;
        }
        Ok(())
    }

    fn save(&self) -> Result<(), TrustError> {
        let Some(path) = &self.path else { return Ok(()) };
        let write_err = |source| TrustError::Write { path: path.clone(), source };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let file = TrustFile { version: 1, records: self.records.clone() };
        let text = serde_json::to_string_pretty(&file).map_err(|e| write_err(std::io::Error::other(e)))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
        std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(write_err)?;
        tmp.persist(path).map_err(|e| write_err(e.error))?;
        Ok(())
    }
}

fn read_records(path: &Path) -> Result<Vec<TrustRecord>, TrustError> {
    // No file, or a folder on its way that is a file: there can be no records.
    let bytes = match crate::paths::read_settings_file(path) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(Vec::new()),
        Err(source) => return Err(TrustError::Read { path: path.to_path_buf(), source }),
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| TrustError::Corrupt { path: path.to_path_buf(), message: "not UTF-8 text".into() })?;
    let file: TrustFile = serde_json::from_str(&text)
        .map_err(|e| TrustError::Corrupt { path: path.to_path_buf(), message: e.to_string() })?;
    Ok(file.records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_keyed_by_workspace_source_and_hash_and_persist() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("data").join(TRUST_FILE);
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).expect("ws");
        let mut trust = WorkspaceTrust::load(&file).expect("no file yet");
        assert!(trust.records.is_empty());
        trust.record(&ws, TrustSource::WorkspaceFile, "aa", TrustDecision::Trusted).expect("record");
        let again = WorkspaceTrust::load(&file).expect("load");
        assert_eq!(again.decision(&ws, TrustSource::WorkspaceFile, "aa"), Some(TrustDecision::Trusted));
        assert_eq!(again.decision(&ws.join("."), TrustSource::WorkspaceFile, "aa"), Some(TrustDecision::Trusted));
        assert_eq!(again.decision(&ws, TrustSource::WorkspaceFile, "bb"), None, "other content");
        assert_eq!(again.decision(&ws, TrustSource::EditorSettings, "aa"), None, "other source");
        assert_eq!(again.decision(dir.path(), TrustSource::WorkspaceFile, "aa"), None, "other workspace");
        // A new decision for the same source replaces the old one.
        trust.record(&ws, TrustSource::WorkspaceFile, "bb", TrustDecision::Declined).expect("record");
        let again = WorkspaceTrust::load(&file).expect("load");
        assert_eq!(again.records.len(), 1);
        assert_eq!(again.decision(&ws, TrustSource::WorkspaceFile, "bb"), Some(TrustDecision::Declined));
        assert_eq!(trust.revoke(&ws).expect("revoke"), 1);
        assert!(WorkspaceTrust::load(&file).expect("load").records.is_empty());
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(TRUST_FILE);
        std::fs::write(&file, "{not json").expect("write");
        let err = WorkspaceTrust::load(&file).expect_err("corrupt").to_string();
        assert!(err.contains(TRUST_FILE) && err.contains("delete the file"), "{err}");
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
