//! The undo history on disk: one folder per point under `<data dir>/undo/`,
//! named by an increasing sequence number, holding `point.json` (paths, sizes,
//! summary) and each file's exact bytes (`<i>.before`, `<i>.after`).
//!
//! A point is written into a hidden temp folder and renamed into place, and a
//! removed point is renamed away before it is deleted, so a crash never leaves
//! half a point where the history looks.

use super::{inside, UndoError, UndoPoint};
use crate::config::UndoConfig;
use crate::paths::WorkspacePaths;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

const MANIFEST: &str = "point.json";
/// The on-disk format this build writes and reads.
const FORMAT: u32 = 1;
const TMP_PREFIX: &str = ".tmp-";
const GONE_PREFIX: &str = ".gone-";

#[derive(Serialize, Deserialize)]
struct Manifest {
    format: u32,
    created_unix_ms: u64,
    summary: String,
    task_id: Option<String>,
    files: Vec<ManifestFile>,
}

#[derive(Serialize, Deserialize)]
struct ManifestFile {
    path: String,
    existed_before: bool,
    before_len: u64,
    after_len: u64,
}

/// The workspace's undo points, oldest to newest, at most `undo.max_points` of them.
#[derive(Debug, Clone)]
pub struct UndoHistory {
    dir: PathBuf,
    max_points: usize,
}

/// A folder that does not exist (or sits under a file) holds no history.
fn absent(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Best effort: makes a rename or a new entry in `dir` durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Whether the process `pid` still runs (a temp folder of a live writer is not stale).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}

impl UndoHistory {
    /// The history of the workspace in `paths` (under its data directory).
    pub fn new(paths: &WorkspacePaths, config: &UndoConfig) -> Self {
        Self::in_dir(paths.data_dir.join("undo"), config)
    }

    /// A history kept in `dir`.
    pub fn in_dir(dir: PathBuf, config: &UndoConfig) -> Self {
        Self { dir, max_points: config.max_points.max(1) as usize }
    }

    /// The folder that holds the points.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn history_err(&self, source: std::io::Error) -> UndoError {
        UndoError::History { dir: self.dir.clone(), source }
    }

    /// The points' ids, oldest first (none when the folder does not exist yet).
    pub fn ids(&self) -> Result<Vec<String>, UndoError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if absent(&e) => return Ok(Vec::new()),
            Err(e) => return Err(self.history_err(e)),
        };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        ids.sort_by_key(|id| id.parse::<u128>().unwrap_or(0));
        Ok(ids)
    }

    /// The newest point, if any.
    pub fn last(&self) -> Result<Option<UndoPoint>, UndoError> {
        match self.ids()?.last() {
            Some(id) => self.load(id).map(Some),
            None => Ok(None),
        }
    }

    /// Stores `point` as the newest one, drops the oldest beyond `undo.max_points`;
    /// returns the new point's id.
    pub fn record(&self, point: &UndoPoint) -> Result<String, UndoError> {
        if let Some(f) = point.files.iter().find(|f| !inside(&f.path)) {
            return Err(UndoError::OutsideWorkspace { path: f.path.clone() });
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| self.history_err(e))?;
        self.sweep();
        let tmp = self.dir.join(format!("{TMP_PREFIX}{}-{}", std::process::id(), uuid::Uuid::new_v4()));
        let written = self.write_point(&tmp, point);
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(self.history_err(e));
        }
        // Another process may take the same number at the same moment: the rename
        // of a full folder onto an existing one fails, and the next number is tried.
        let id = loop {
            let next = self.ids()?.last().and_then(|id| id.parse::<u64>().ok()).map_or(1, |n| n + 1);
            let id = format!("{next:020}");
            match std::fs::rename(&tmp, self.dir.join(&id)) {
                Ok(()) => break id,
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists || e.raw_os_error() == Some(libc::ENOTEMPTY) =>
                {
                    continue
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return Err(self.history_err(e));
                }
            }
        };
        sync_dir(&self.dir);
        let ids = self.ids()?;
        for old in ids.iter().take(ids.len().saturating_sub(self.max_points)) {
            if let Err(e) = self.remove(old) {
                tracing::warn!("an old undo point was not dropped: {e}");
            }
        }
        Ok(id)
    }

    fn write_point(&self, tmp: &Path, point: &UndoPoint) -> std::io::Result<()> {
        std::fs::create_dir(tmp)?;
        let mut files = Vec::new();
        for (i, f) in point.files.iter().enumerate() {
            write_synced(&tmp.join(format!("{i}.after")), &f.after)?;
            if let Some(before) = &f.before {
                write_synced(&tmp.join(format!("{i}.before")), before)?;
            }
            files.push(ManifestFile {
                path: f.path.clone(),
                existed_before: f.before.is_some(),
                before_len: f.before.as_ref().map_or(0, |b| b.len() as u64),
                after_len: f.after.len() as u64,
            });
        }
        let manifest = Manifest {
            format: FORMAT,
            created_unix_ms: point.created_unix_ms,
            summary: point.summary.clone(),
            task_id: point.task_id.clone(),
            files,
        };
        write_synced(&tmp.join(MANIFEST), &serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?)?;
        sync_dir(tmp);
        Ok(())
    }

    /// Reads the point `id`, checking every file's bytes are all there.
    pub fn load(&self, id: &str) -> Result<UndoPoint, UndoError> {
        let dir = self.dir.join(id);
        let damaged = |why: String| UndoError::Damaged { dir: dir.clone(), why };
        let raw = std::fs::read(dir.join(MANIFEST)).map_err(|e| damaged(format!("{MANIFEST}: {e}")))?;
        let m: Manifest = serde_json::from_slice(&raw).map_err(|e| damaged(format!("{MANIFEST}: {e}")))?;
        if m.format != FORMAT {
            return Err(damaged(format!("format {} is not the format {FORMAT} this tinycoder reads", m.format)));
        }
        let read = |name: String, len: u64| -> Result<Vec<u8>, UndoError> {
            let bytes = std::fs::read(dir.join(&name)).map_err(|e| damaged(format!("{name}: {e}")))?;
            if bytes.len() as u64 != len {
                return Err(damaged(format!("{name} holds {} bytes, not {len}", bytes.len())));
            }
            Ok(bytes)
        };
        let mut files = Vec::new();
        for (i, f) in m.files.iter().enumerate() {
            if !inside(&f.path) {
                return Err(damaged(format!("`{}` is not a path inside the workspace", f.path)));
            }
            let before = if f.existed_before { Some(read(format!("{i}.before"), f.before_len)?) } else { None };
            let after = read(format!("{i}.after"), f.after_len)?;
            files.push(super::FileSnapshot { path: f.path.clone(), before, after });
        }
        Ok(UndoPoint {
            id: id.to_string(),
            created_unix_ms: m.created_unix_ms,
            summary: m.summary,
            task_id: m.task_id,
            files,
        })
    }

    /// Drops the point `id` (one already gone is fine: another undo took it).
    pub fn remove(&self, id: &str) -> Result<(), UndoError> {
        let gone = self.dir.join(format!("{GONE_PREFIX}{id}-{}", uuid::Uuid::new_v4()));
        match std::fs::rename(self.dir.join(id), &gone) {
            Ok(()) => {}
            Err(e) if absent(&e) => return Ok(()),
            Err(e) => return Err(self.history_err(e)),
        }
        sync_dir(&self.dir);
        if let Err(e) = std::fs::remove_dir_all(&gone) {
            tracing::warn!("{} was not deleted: {e}", gone.display());
        }
        Ok(())
    }

    /// Deletes what a crash left behind: removed points and temp folders of dead writers.
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let stale = name.starts_with(GONE_PREFIX)
                || name
                    .strip_prefix(TMP_PREFIX)
                    .and_then(|rest| rest.split('-').next()?.parse::<i32>().ok())
                    .is_some_and(|pid| !alive(pid));
            if stale {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}
