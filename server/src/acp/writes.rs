//! Writing a tested patch into the user's files: one `edit` tool call per file
//! carrying the change as ACP diff content, `session/request_permission` before
//! each write (allow once, allow always, reject, reject always; the "always"
//! answers persist in the workspace store, action `write`, pattern = the file),
//! then `fs/write_text_file` when the client offers it (the edit lands in the
//! editor's buffer), else an atomic write to the disk. A file the patch creates
//! (`before` empty, nothing there yet) is shown as a new file and made only
//! after permission, with its folders.

use super::sources::{ClientFiles, ClientSources};
use super::updates::{location, text};
use crate::contracts::PermissionChoice;
use crate::edits::FileChange;
use agent_client_protocol::v1::schema::{
    Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use std::io::Write;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// The permission action under which write decisions persist.
pub const WRITE_ACTION: &str = "write";

/// How the write of one file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    Written,
    Rejected,
    Cancelled,
    Failed(String),
}

/// What a write needs from the turn.
pub struct Writer<'a> {
    pub files: &'a ClientFiles,
    pub can_write: bool,
    pub root: &'a Path,
    pub sources: &'a ClientSources,
    pub decisions: crate::store::PermissionStore,
    pub cancel: &'a CancellationToken,
}

const OPTIONS: [(&str, &str, PermissionOptionKind, PermissionChoice); 4] = [
    ("allow_once", "Allow once", PermissionOptionKind::AllowOnce, PermissionChoice::AllowOnce),
    ("allow_always", "Allow always for this file", PermissionOptionKind::AllowAlways, PermissionChoice::AllowAlways),
    ("reject_once", "Reject", PermissionOptionKind::RejectOnce, PermissionChoice::Deny),
    ("reject_always", "Reject always for this file", PermissionOptionKind::RejectAlways, PermissionChoice::Deny),
];

impl Writer<'_> {
    fn notify(&self, update: SessionUpdate) {
        let n = SessionNotification::new(self.files.session_id.clone(), update);
        if let Err(e) = self.files.conn.send_notification(n) {
            tracing::warn!("session/update not sent: {}", e.message);
        }
    }

    fn finish(&self, id: &str, status: ToolCallStatus, why: &str) {
        let fields = ToolCallUpdateFields::new().status(status).content(vec![text(why)]);
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields)));
    }

    /// Shows `change` as tool call `id`, asks before writing it, writes it; `note` says how it was tested.
    pub async fn write(&self, id: &str, change: &FileChange, note: &str) -> WriteOutcome {
        // Never offered, let alone written, through a symbolic link out of the workspace.
        let path = match crate::paths::resolve_inside(self.root, &change.path) {
            Ok(p) => p,
            Err(e) => return WriteOutcome::Failed(e.to_string()),
        };
        let created = change.before.is_empty() && !path.exists();
        // ACP shows a diff without old text as a new file.
        let diff = Diff::new(path.clone(), change.after.clone());
        let diff = if created { diff } else { diff.old_text(change.before.clone()) };
        let verb = if created { "Create" } else { "Write" };
        let title = format!("{verb} {} ({note})", change.path);
        self.notify(SessionUpdate::ToolCall(
            ToolCall::new(id.to_string(), title.clone())
                .kind(ToolKind::Edit)
                .status(ToolCallStatus::Pending)
                .content(vec![diff.clone().into()])
                .locations(vec![location(self.root, &change.path, 0)]),
        ));
        let stored = match self.decisions.lookup(WRITE_ACTION, &change.path).await {
            Ok(d) => d.map(|d| d.decision),
            Err(e) => {
                tracing::warn!("stored write decisions unavailable: {e}");
                None
            }
        };
        let choice = match stored {
            Some(c @ (PermissionChoice::AllowAlways | PermissionChoice::Deny)) => c,
            _ => match self.ask(id, &change.path, &title, diff).await {
                Some(c) => c,
                None => {
                    self.finish(id, ToolCallStatus::Failed, "cancelled before the write");
                    return WriteOutcome::Cancelled;
                }
            },
        };
        if choice == PermissionChoice::Deny {
            let why =
                if stored.is_some() { "rejected (an earlier \"reject always\" for this file)" } else { "rejected" };
            self.finish(id, ToolCallStatus::Failed, why);
            return WriteOutcome::Rejected;
        }
        match self.apply(change, &path).await {
            Ok(()) => {
                self.sources.remember(&change.path, &change.after);
                self.finish(id, ToolCallStatus::Completed, &format!("written: {}", change.path));
                WriteOutcome::Written
            }
            Err(why) => {
                self.finish(id, ToolCallStatus::Failed, &format!("not written: {why}"));
                WriteOutcome::Failed(why)
            }
        }
    }

    /// `session/request_permission`; persists the "always" answers. `None` when cancelled.
    async fn ask(&self, id: &str, rel: &str, title: &str, diff: Diff) -> Option<PermissionChoice> {
        let options = OPTIONS.iter().map(|(oid, name, kind, _)| PermissionOption::new(*oid, *name, *kind)).collect();
        let fields = ToolCallUpdateFields::new()
            .title(title.to_string())
            .kind(ToolKind::Edit)
            .status(ToolCallStatus::Pending)
            .content(vec![diff.into()]);
        let req = RequestPermissionRequest::new(
            SessionId::clone(&self.files.session_id),
            ToolCallUpdate::new(id.to_string(), fields),
            options,
        );
        let answer = tokio::select! {
            a = self.files.conn.send_request(req).block_task() => a,
            _ = self.cancel.cancelled() => return None,
        };
        let selected = match answer {
            Ok(r) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
                _ => return None,
            },
            Err(e) => {
                tracing::warn!("session/request_permission failed, not writing: {}", e.message);
                "reject_once".to_string()
            }
        };
        let (_, _, kind, choice) = OPTIONS.iter().find(|(oid, ..)| *oid == selected).unwrap_or(&OPTIONS[2]);
        if matches!(kind, PermissionOptionKind::AllowAlways | PermissionOptionKind::RejectAlways) {
            if let Err(e) = self.decisions.record(WRITE_ACTION, rel, *choice).await {
                tracing::warn!("write decision not persisted: {e}");
            }
        }
        Some(*choice)
    }

    /// Writes `change` if the file still holds what the task read (a new file: if it is still absent).
    async fn apply(&self, change: &FileChange, path: &Path) -> Result<(), String> {
        // Checked again at write time: the permission question may have been open a while.
        crate::paths::resolve_inside(self.root, &change.path).map_err(|e| e.to_string())?;
        let current = self.sources.read_fresh(&change.path).await.unwrap_or_default();
        if current != change.before {
            return Err(format!("{} changed since tinycoder read it; run the turn again", change.path));
        }
        if !path.exists() {
            // A new file's folders exist only once the write is allowed (a client creates the
            // file itself, not always its folders).
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            if !self.can_write {
                return create_new(path, &change.after).map_err(|e| format!("{}: {e}", path.display()));
            }
        }
        if self.can_write {
            return self
                .files
                .write(path, &change.after)
                .await
                .map_err(|e| format!("fs/write_text_file: {}", e.message));
        }
        write_atomically(path, &change.after).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Refuses the whole patch when any of its files would be written outside `root`
/// (`..`, absolute, or through a symbolic link out of the workspace): checked for every
/// file before the first is offered, so a refused patch writes nothing at all.
pub fn refuse_outside(root: &Path, changes: &[FileChange]) -> Result<(), crate::paths::OutsideWorkspace> {
    crate::paths::resolve_all_inside(root, changes.iter().map(|c| c.path.as_str())).map(|_| ())
}

/// A new file, refused when one appeared meanwhile (never replaced unseen); the usual
/// permissions of a new file, not a temp file's.
fn create_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Temp file next to `path`, then rename (permissions kept).
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_created_but_never_replaces_one_that_appeared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.py");
        create_new(&path, "x = 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\n");
        assert!(create_new(&path, "x = 2\n").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\n");
    }

    #[test]
    fn a_patch_with_a_file_through_a_link_out_of_the_workspace_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        std::os::unix::fs::symlink("./src", ws.join("lib")).unwrap();
        let change = |path: &str| FileChange { path: path.into(), before: String::new(), after: "x\n".into() };
        let err = refuse_outside(&ws, &[change("src/a.py"), change("link/x")]).unwrap_err().to_string();
        assert!(err.contains("`link/x`") && err.contains("symbolic link `link`") && err.contains("outside"), "{err}");
        assert!(refuse_outside(&ws, &[change("src/a.py"), change("lib/b.py")]).is_ok(), "a link inside is fine");
    }
}
