//! Undo and commit from the editor: `tinycoder.undo` puts back the files of the
//! last patch tinycoder applied, as a `workspace/applyEdit` (the server never
//! writes a user's file itself), and `tinycoder.commit` commits exactly that
//! patch's files with git. A patch the editor applied becomes an undo point
//! here ([`record_applied`]), once the editor answered `applied: true`.
//!
//! The check that nothing changed since the patch reads the editor's buffer
//! where the file is open, the disk elsewhere. The undo point is consumed only
//! when the editor applied the restore; until it answers, a second undo is
//! refused, so two undos never restore the same patch.

use super::agent_flow::FlowHandles;
use super::commands::{request_failed, string_arg};
use super::patch_edit::{undo_workspace_edit, UndoFileEdit};
use super::server::Backend;
use crate::agent::AgentEnv;
use crate::edits::Patch;
use crate::undo::{plan_undo, read_current, FileSnapshot, FileUndo, UndoAction, UndoHistory, UndoPoint};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, Uri};

const NOTHING_TO_UNDO: &str = "nothing to undo: tinycoder has applied no patch in this workspace (or all were undone)";

/// Records `patch`, which the editor just applied, as the newest undo point.
pub async fn record_applied(h: &FlowHandles, env: &AgentEnv, patch: &Patch, summary: &str, task_id: &str) {
    let root = env.paths.root.clone();
    let open = open_buffers(h, &root, &patch.files());
    let files: Vec<FileSnapshot> = patch
        .changes
        .iter()
        .filter(|c| c.before != c.after)
        .map(|c| {
            // Only a file that neither the editor nor the disk had was created by the patch.
            let absent = c.before.is_empty() && !open.contains_key(&c.path) && !root.join(&c.path).exists();
            FileSnapshot {
                path: c.path.clone(),
                before: (!absent).then(|| c.before.clone().into_bytes()),
                after: c.after.clone().into_bytes(),
            }
        })
        .collect();
    let point = UndoPoint::new(summary, Some(task_id), files);
    let history = UndoHistory::new(&env.paths, &env.config.undo);
    let recorded = tokio::task::spawn_blocking(move || history.record(&point)).await;
    let why = match recorded {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    h.client
        .show_message(MessageType::WARNING, format!("tinycoder: the patch was applied but cannot be undone: {why}"))
        .await;
}

/// The open buffers among `paths` (workspace-relative): their text and version.
fn open_buffers(h: &FlowHandles, root: &Path, paths: &[String]) -> HashMap<String, (String, i32)> {
    let Ok(docs) = h.docs.lock() else { return HashMap::new() };
    paths
        .iter()
        .filter_map(|p| {
            let uri = Uri::from_file_path(root.join(p))?;
            let open = docs.get(uri.as_str())?;
            Some((p.clone(), (open.doc.text(), open.doc.version())))
        })
        .collect()
}

/// The newest undo point, read off the async threads.
async fn last_point(history: &UndoHistory) -> Result<Option<UndoPoint>> {
    let history = history.clone();
    tokio::task::spawn_blocking(move || history.last())
        .await
        .map_err(|e| request_failed(e.to_string()))?
        .map_err(|e| request_failed(e.to_string()))
}

/// What an undo or a commit works on: a folder's configuration, paths, undo history and its newest point.
type FolderPoint = (crate::config::Config, crate::paths::WorkspacePaths, UndoHistory, UndoPoint);

/// The newest undo point of the folder a command's `uri` names, else of every folder
/// (the last patch applied anywhere in the workspace).
async fn newest_point(backend: &Backend, args: &[Value]) -> Result<Option<FolderPoint>> {
    let mut newest: Option<FolderPoint> = None;
    for folder in backend.roots_for_args(args)? {
        let (config, paths) = backend.config_and_paths_in(&folder)?;
        let history = UndoHistory::new(&paths, &config.undo);
        if let Some(point) = last_point(&history).await? {
            if newest.as_ref().is_none_or(|(.., p)| point.created_unix_ms > p.created_unix_ms) {
                newest = Some((config, paths, history, point));
            }
        }
    }
    Ok(newest)
}

/// Clears the busy flag when the undo ends, however it ends.
struct Busy(Arc<AtomicBool>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// `tinycoder.undo [{uri?}]`: undoes the last patch applied in the folder holding `uri`, else
/// anywhere in the workspace. Answers at once with the files it restores, then sends the
/// restore as `workspace/applyEdit`; the point is consumed when the editor applies it.
pub async fn undo(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    if backend.undo_busy.swap(true, Ordering::SeqCst) {
        return Err(request_failed("an undo is already waiting for the editor to apply it; answer that one first"));
    }
    let busy = Busy(backend.undo_busy.clone());
    let h = backend.flow_handles();
    let Some((_, paths, history, point)) = newest_point(backend, args).await? else {
        return Ok(Some(json!({"undone": false, "message": NOTHING_TO_UNDO})));
    };
    let root = paths.root.clone();
    let open = open_buffers(&h, &root, &point.paths());
    let (point, plan, open) = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            let plan = plan_undo(&point, |p| match open.get(p) {
                Some((text, _)) => Ok(Some(text.clone().into_bytes())),
                None => read_current(&root, p),
            });
            plan.map(|plan| (point, plan, open))
        })
        .await
        .map_err(|e| request_failed(e.to_string()))?
        .map_err(|e| request_failed(format!("tinycoder: {e}")))?
    };
    let files = edits_of(&h, &point, &plan, &open)?;
    let answer = json!({"undoing": point.id, "summary": point.summary, "files": plan});
    if files.is_empty() {
        // Every file is already back (an undo interrupted after the editor applied it).
        let id = point.id.clone();
        tokio::task::spawn_blocking(move || history.remove(&id))
            .await
            .map_err(|e| request_failed(e.to_string()))?
            .map_err(|e| request_failed(e.to_string()))?;
        return Ok(Some(json!({"undone": true, "summary": point.summary, "files": plan})));
    }
    let edits: Vec<UndoFileEdit> = files
        .iter()
        .map(|(path, restore)| match restore {
            Some((current, before, version)) => UndoFileEdit::Restore { path, current, before, version: *version },
            None => UndoFileEdit::Delete { path },
        })
        .collect();
    let edit = undo_workspace_edit(&root, &edits, h.encoding, h.edits.document_changes)
        .map_err(|e| request_failed(format!("the undo was not offered: {e}")))?;
    tokio::spawn(async move {
        let (kind, msg) = match h.client.apply_edit(edit).await {
            Ok(r) if r.applied => {
                let id = point.id.clone();
                let removed = tokio::task::spawn_blocking(move || history.remove(&id)).await;
                if let Ok(Err(e)) = removed {
                    tracing::warn!("the undone point stays in the history: {e}");
                }
                (MessageType::INFO, format!("tinycoder: undid `{}`: {}", point.summary, describe(&plan)))
            }
            Ok(r) => {
                let why = r.failure_reason.unwrap_or_else(|| "declined".into());
                (MessageType::WARNING, format!("tinycoder: the undo was not applied ({why}); it can still be undone"))
            }
            Err(e) => (MessageType::ERROR, format!("tinycoder: the editor did not apply the undo: {e}")),
        };
        // Free before telling the user, so an undo they start on reading the message is not refused.
        drop(busy);
        h.client.show_message(kind, msg).await;
    });
    Ok(Some(answer))
}

/// Per file to change: its path and, for a restore, (text now, text before, open
/// buffer's version); `None` for a delete. Refuses what the editor cannot do.
type Restores = Vec<(String, Option<(String, String, Option<i32>)>)>;

fn edits_of(
    h: &FlowHandles,
    point: &UndoPoint,
    plan: &[FileUndo],
    open: &HashMap<String, (String, i32)>,
) -> Result<Restores> {
    let mut out = Vec::new();
    for (step, f) in plan.iter().zip(&point.files) {
        let not_text = || {
            request_failed(format!(
                "{} is not UTF-8 text, so the editor cannot restore it; run `tinycoder undo` in a terminal",
                f.path
            ))
        };
        match step.action {
            UndoAction::AlreadyRestored => {}
            UndoAction::Delete if !(h.edits.document_changes && h.edits.delete_files) => {
                return Err(request_failed(format!(
                    "the patch created {} and this editor cannot delete files through a workspace edit; \
                     run `tinycoder undo` in a terminal",
                    f.path
                )))
            }
            UndoAction::Delete => out.push((f.path.clone(), None)),
            UndoAction::Restore => {
                let current = String::from_utf8(f.after.clone()).map_err(|_| not_text())?;
                let before = f.before.clone().map(String::from_utf8).and_then(|b| b.ok()).ok_or_else(not_text)?;
                let version = open.get(&f.path).map(|(_, v)| *v);
                out.push((f.path.clone(), Some((current, before, version))));
            }
        }
    }
    Ok(out)
}

/// "restored a, b; deleted c".
fn describe(plan: &[FileUndo]) -> String {
    let of = |a: UndoAction| plan.iter().filter(|f| f.action == a).map(|f| f.path.as_str()).collect::<Vec<_>>();
    let mut parts = Vec::new();
    for (action, word) in [(UndoAction::Restore, "restored"), (UndoAction::Delete, "deleted")] {
        let files = of(action);
        if !files.is_empty() {
            parts.push(format!("{word} {}", files.join(", ")));
        }
    }
    parts.join("; ")
}

/// `tinycoder.commit [message?]` or `[{message?, uri?}]`: commits exactly the last applied
/// patch's files (in the folder holding `uri`, else anywhere) with git; its message is the
/// task's summary unless one is given.
pub async fn commit(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let Some((config, paths, _, point)) = newest_point(backend, args).await? else {
        return Err(request_failed(
            "nothing to commit: tinycoder has applied no patch in this workspace (or it was undone)",
        ));
    };
    let files = point.paths();
    let open = open_buffers(&backend.flow_handles(), &paths.root, &files);
    let message = string_arg(args, "message").filter(|m| !m.trim().is_empty()).unwrap_or_else(|| {
        crate::undo::commit_message(&point.summary, point.task_id.as_deref(), config.undo.commit_subject_chars as usize)
    });
    let root = paths.root.clone();
    let committed = tokio::task::spawn_blocking(move || {
        // git commits the disk: a buffer the editor has not saved would be left out.
        for (path, (text, _)) in &open {
            if read_current(&root, path).map_err(|e| e.to_string())?.as_deref() != Some(text.as_bytes()) {
                return Err(format!("{path} has unsaved changes in the editor; save it, then commit again"));
            }
        }
        crate::undo::commit(&root, &files, &message).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| request_failed(e.to_string()))?
    .map_err(|e| request_failed(format!("tinycoder: {e}")))?;
    Ok(Some(json!({"commit": committed.id, "subject": committed.subject, "files": committed.files})))
}
