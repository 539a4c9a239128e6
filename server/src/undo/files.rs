//! Writing a patch into the user's files and writing an undo back: each file
//! atomically (a temp file next to it, then a rename), its permissions kept,
//! and only after every file was checked, so a refusal writes nothing.

use super::{inside, FileSnapshot, FileUndo, PatchInfo, UndoAction, UndoError, UndoHistory, UndoPoint};
use crate::config::UndoConfig;
use crate::edits::Patch;
use crate::paths::WorkspacePaths;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The bytes of `rel` under `root` now; `None` when the file does not exist.
pub fn read_current(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, UndoError> {
    let path = root.join(rel);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UndoError::Read { path, source }),
    }
}

/// Replaces `path` with `bytes` in one rename; an existing file keeps its
/// permissions, a new one gets the usual mode for new files (0666 less the umask).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), UndoError> {
    let err = |source: std::io::Error| UndoError::Write { path: path.to_path_buf(), source };
    let dir = path.parent().ok_or_else(|| err(std::io::Error::other("the file has no parent folder")))?;
    std::fs::create_dir_all(dir).map_err(err)?;
    let kept = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(".tinycoder-")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    if let Some(perms) = kept {
        std::fs::set_permissions(tmp.path(), perms).map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn remove(path: &Path) -> Result<(), UndoError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(UndoError::Write { path: path.to_path_buf(), source }),
    }
}

/// Each changed file of `patch` as it is now and as the patch makes it; refuses
/// when a file is no longer the text the patch was made from.
fn snapshots(root: &Path, patch: &Patch) -> Result<Vec<FileSnapshot>, UndoError> {
    let changed: Vec<_> = patch.changes.iter().filter(|c| c.before != c.after).collect();
    // Every path first, before any is read or written: one outside refuses the whole patch.
    if let Some(c) = changed.iter().find(|c| !inside(&c.path)) {
        return Err(UndoError::OutsideWorkspace { path: c.path.clone() });
    }
    crate::paths::resolve_all_inside(root, changed.iter().map(|c| c.path.as_str()))?;
    let mut out = Vec::new();
    for c in changed {
        let now = read_current(root, &c.path)?;
        let unchanged = match &now {
            Some(bytes) => bytes.as_slice() == c.before.as_bytes(),
            None => c.before.is_empty(),
        };
        if !unchanged {
            return Err(UndoError::ChangedBeforeWrite { path: c.path.clone() });
        }
        out.push(FileSnapshot { path: c.path.clone(), before: now, after: c.after.clone().into_bytes() });
    }
    Ok(out)
}

/// Writes every file's `after`; when one fails, the files already written get their
/// `before` back, so the workspace is never left half-patched.
fn write_all(root: &Path, files: &[FileSnapshot]) -> Result<(), UndoError> {
    for (i, f) in files.iter().enumerate() {
        if let Err(e) = write_atomically(&root.join(&f.path), &f.after) {
            for done in &files[..i] {
                let back = match &done.before {
                    Some(bytes) => write_atomically(&root.join(&done.path), bytes),
                    None => remove(&root.join(&done.path)),
                };
                if let Err(b) = back {
                    tracing::error!("{} could not be put back after a failed write: {b}", done.path);
                }
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Writes `patch` under `root` without recording it (a scratch copy, as in `bench`):
/// checked first, then each file atomically. Returns what was written.
pub fn write_patch(root: &Path, patch: &Patch) -> Result<Vec<FileSnapshot>, UndoError> {
    let files = snapshots(root, patch)?;
    write_all(root, &files)?;
    Ok(files)
}

/// Writes `patch` into the workspace and records it as the newest undo point.
/// The point is stored before any file is written, so a crash in between leaves
/// an undo that restores exactly what was written; a failed write removes it again.
pub fn apply_patch(
    paths: &WorkspacePaths,
    config: &UndoConfig,
    patch: &Patch,
    info: &PatchInfo,
) -> Result<UndoPoint, UndoError> {
    let files = snapshots(&paths.root, patch)?;
    let history = UndoHistory::new(paths, config);
    let mut point = UndoPoint::new(&info.summary, info.task_id.as_deref(), files);
    point.id = history.record(&point)?;
    if let Err(e) = write_all(&paths.root, &point.files) {
        if let Err(r) = history.remove(&point.id) {
            tracing::warn!("the undo point of a patch that was not written stays: {r}");
        }
        return Err(e);
    }
    Ok(point)
}

/// Carries out `plan` (from [`super::plan_undo`]) for `point` under `root`: old bytes
/// written back atomically with the file's permissions kept, created files deleted.
/// Returns the paths it changed.
pub fn restore(root: &Path, point: &UndoPoint, plan: &[FileUndo]) -> Result<Vec<String>, UndoError> {
    // No restore through a link out of the workspace (one committed after the patch, say):
    // every path is checked before anything is written.
    crate::paths::resolve_all_inside(root, plan.iter().map(|s| s.path.as_str()))?;
    let mut changed = Vec::new();
    for step in plan {
        let Some(f) = point.files.iter().find(|f| f.path == step.path) else { continue };
        let path: PathBuf = root.join(&f.path);
        match (step.action, &f.before) {
            (UndoAction::Restore, Some(bytes)) => write_atomically(&path, bytes)?,
            (UndoAction::Delete, _) => remove(&path)?,
            _ => continue,
        }
        changed.push(f.path.clone());
    }
    Ok(changed)
}
