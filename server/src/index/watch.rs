//! The file watcher: changes on disk (saves, git checkouts) become indexer commands.

use super::indexer::Command;
use super::walk::PathFilter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::Mutex;

/// Watches `root` recursively; `None` (with a warning) where the platform cannot.
pub(super) fn start_watcher(root: &Path, tx: Sender<Command>) -> Option<notify::RecommendedWatcher> {
    use notify::event::{ModifyKind, RenameMode};
    use notify::{EventKind, RecursiveMode, Watcher};
    let filter = PathFilter::new(root);
    let tx = Mutex::new(tx);
    let handler = move |res: notify::Result<notify::Event>| {
        let Ok(ev) = res else { return };
        let ok = |p: &PathBuf| filter.allows(p, p.is_dir());
        let cmds: Vec<Command> = match ev.kind {
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if ev.paths.len() == 2 => {
                let (from, to) = (&ev.paths[0], &ev.paths[1]);
                // A rename into an ignored place (e.g. an atomic write of the index's own
                // files) is a deletion of the source at most, never a new indexed file.
                match (filter.allows(from, false), ok(to)) {
                    (_, true) => vec![Command::Renamed(from.clone(), to.clone())],
                    (true, false) => vec![Command::Deleted(from.clone())],
                    (false, false) => Vec::new(),
                }
            }
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                ev.paths.iter().filter(|p| filter.allows(p, false)).map(|p| Command::Deleted(p.clone())).collect()
            }
            EventKind::Create(_) | EventKind::Modify(_) => {
                ev.paths.iter().filter(|p| ok(p)).map(|p| Command::Changed(p.clone())).collect()
            }
            _ => Vec::new(),
        };
        if let Ok(tx) = tx.lock() {
            for c in cmds {
                let _ = tx.send(c);
            }
        }
    };
    match notify::recommended_watcher(handler) {
        Ok(mut w) => match w.watch(root, RecursiveMode::Recursive) {
            Ok(()) => Some(w),
            Err(e) => {
                tracing::warn!(
                    "cannot watch {} ({e}); changes on disk are seen only through the editor",
                    root.display()
                );
                None
            }
        },
        Err(e) => {
            tracing::warn!("no file watcher ({e}); changes on disk are seen only through the editor");
            None
        }
    }
}
