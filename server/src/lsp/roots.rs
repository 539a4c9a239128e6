//! The workspace folders tinycoder works on, one [`WorkspaceRoot`] each: its
//! own index, store (tasks, memory, chats, undo history) and configuration.
//! A file belongs to the innermost folder that holds it; requests without a
//! file go to the first folder, whose settings also pick the model.

use super::indexing::IndexSlots;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// One workspace folder and what tinycoder keeps for it.
pub(super) struct WorkspaceRoot {
    /// The folder.
    pub(super) root: PathBuf,
    /// Its configuration (the user's layers and its own `.tinycoder.toml`) when it is
    /// not the first folder; the first folder's is the server's settings.
    pub(super) config: RwLock<Option<crate::config::Config>>,
    /// Its SQLite store, opened on first use (never on the keystroke path).
    pub(super) store: Arc<Mutex<Option<crate::store::Store>>>,
    /// Its index, opened in the background when the folder is added.
    pub(super) index: IndexSlots,
    /// Its open buffers edited since the index last saw them (URIs); a background task
    /// hands their text to the index once per `index.debounce_ms`, so a keystroke costs an insert.
    pub(super) dirty: Arc<Mutex<HashSet<String>>>,
    /// Set when the folder leaves the workspace: its background index feeder stops.
    pub(super) removed: Arc<AtomicBool>,
}

impl WorkspaceRoot {
    /// A folder with nothing opened yet.
    pub(super) fn new(root: PathBuf) -> Self {
        Self {
            root,
            config: RwLock::new(None),
            store: Arc::new(Mutex::new(None)),
            index: IndexSlots::default(),
            dirty: Arc::new(Mutex::new(HashSet::new())),
            removed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether `path` lies under this folder.
    pub(super) fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    /// Marks a buffer as edited (a set insert: this is on the keystroke path).
    pub(super) fn mark_dirty(&self, uri: String) {
        if let Ok(mut dirty) = self.dirty.lock() {
            dirty.insert(uri);
        }
    }

    /// Whether the folder has left the workspace.
    pub(super) fn is_removed(&self) -> bool {
        self.removed.load(Ordering::Relaxed)
    }
}

/// The folders in the order the editor gave them; the first one is the primary.
#[derive(Default)]
pub(super) struct WorkspaceRoots {
    roots: Vec<Arc<WorkspaceRoot>>,
}

impl WorkspaceRoots {
    /// The first folder, when there is one.
    pub(super) fn primary(&self) -> Option<Arc<WorkspaceRoot>> {
        self.roots.first().cloned()
    }

    /// Every folder, the primary first.
    pub(super) fn all(&self) -> Vec<Arc<WorkspaceRoot>> {
        self.roots.clone()
    }

    /// The innermost folder holding `path` (nested folders: the deepest wins).
    pub(super) fn holding(&self, path: &Path) -> Option<Arc<WorkspaceRoot>> {
        self.roots.iter().filter(|r| r.holds(path)).max_by_key(|r| r.root.components().count()).cloned()
    }

    /// Adds `root` at the end; `None` when it is already a folder.
    pub(super) fn add(&mut self, root: PathBuf) -> Option<Arc<WorkspaceRoot>> {
        if self.roots.iter().any(|r| r.root == root) {
            return None;
        }
        let added = Arc::new(WorkspaceRoot::new(root));
        self.roots.push(added.clone());
        Some(added)
    }

    /// Removes `root` and marks it removed; `None` when it was not a folder.
    pub(super) fn remove(&mut self, root: &Path) -> Option<Arc<WorkspaceRoot>> {
        let at = self.roots.iter().position(|r| r.root == root)?;
        let removed = self.roots.remove(at);
        removed.removed.store(true, Ordering::Relaxed);
        Some(removed)
    }

    /// The folders' paths, for messages.
    pub(super) fn describe(&self) -> String {
        self.roots.iter().map(|r| r.root.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_belongs_to_the_innermost_folder_that_holds_it() {
        let mut roots = WorkspaceRoots::default();
        roots.add("/w/app".into()).expect("added");
        roots.add("/w/app/vendor/lib".into()).expect("added");
        roots.add("/w/tools".into()).expect("added");
        assert!(roots.add("/w/tools".into()).is_none(), "a folder is added once");
        let root_of = |p: &str| roots.holding(Path::new(p)).map(|r| r.root.clone());
        assert_eq!(root_of("/w/app/src/main.py"), Some("/w/app".into()));
        assert_eq!(root_of("/w/app/vendor/lib/x.py"), Some("/w/app/vendor/lib".into()));
        assert_eq!(root_of("/w/tools/t.rs"), Some("/w/tools".into()));
        assert_eq!(root_of("/w/application/x.py"), None, "a name that only starts like a folder is outside it");
        assert_eq!(roots.primary().map(|r| r.root.clone()), Some("/w/app".into()));
    }

    #[test]
    fn a_removed_folder_is_marked_and_the_next_becomes_the_primary() {
        let mut roots = WorkspaceRoots::default();
        let first = roots.add("/w/a".into()).expect("added");
        roots.add("/w/b".into()).expect("added");
        let removed = roots.remove(Path::new("/w/a")).expect("removed");
        assert!(Arc::ptr_eq(&first, &removed) && first.is_removed());
        assert_eq!(roots.primary().map(|r| r.root.clone()), Some("/w/b".into()));
        assert!(roots.remove(Path::new("/w/a")).is_none(), "removed once");
        assert!(roots.holding(Path::new("/w/a/x.py")).is_none());
    }
}
