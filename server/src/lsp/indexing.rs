//! Each workspace folder's index seen from the server: opened once off the async threads
//! after `initialized`, brought up to date under progress, and fed edited
//! buffers by a debounced background task (didChange only marks a URI dirty).

use super::progress::ProgressHandle;
use super::roots::WorkspaceRoot;
use super::server::Backend;
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::ls_types::{MessageType, Uri};

/// The index and what its catch-up run did.
pub(super) type IndexedWorkspace = (Arc<crate::index::WorkspaceIndex>, crate::index::IndexSummary);

/// Progress is reported once per this many files (and at the end).
const PROGRESS_EVERY_FILES: usize = 200;

/// What a background task needs to open the workspace index at most once (owned handles).
#[derive(Clone)]
pub(super) struct IndexSlots {
    pub(super) slot: Arc<std::sync::OnceLock<Arc<crate::index::WorkspaceIndex>>>,
    pub(super) open: Arc<std::sync::Mutex<()>>,
    pub(super) run: Arc<std::sync::Mutex<()>>,
    /// Becomes true once the first catch-up run has ended (whatever its outcome).
    pub(super) caught_up: Arc<tokio::sync::watch::Sender<bool>>,
}

impl IndexSlots {
    /// The index, when it has been opened.
    pub(super) fn get(&self) -> Option<Arc<crate::index::WorkspaceIndex>> {
        self.slot.get().cloned()
    }

    /// Waits until the first catch-up run has ended, at most `limit`; false when it had not.
    /// A query before then would search a half-built index and miss files it will hold.
    pub(super) async fn caught_up_within(&self, limit: std::time::Duration) -> bool {
        let mut ready = self.caught_up.subscribe();
        let waited = tokio::time::timeout(limit, ready.wait_for(|done| *done)).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// A blocking job (run it with `spawn_blocking`): opens the index once, then brings it
    /// up to date with the disk under `progress`, cancellable from it; one run at a time.
    pub(super) fn job(
        &self,
        root: PathBuf,
        config: crate::config::Config,
        progress: ProgressHandle,
    ) -> impl FnOnce() -> std::result::Result<IndexedWorkspace, crate::index::IndexError> + Send + 'static {
        let (slot, lock, run_lock) = (self.slot.clone(), self.open.clone(), self.run.clone());
        let caught_up = self.caught_up.clone();
        move || {
            let ran = (|| {
                let index = {
                    let _guard = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    match slot.get() {
                        Some(index) => index.clone(),
                        None => {
                            let index = Arc::new(crate::index::WorkspaceIndex::open_for_workspace(&root, &config)?);
                            let _ = slot.set(index.clone());
                            index
                        }
                    }
                };
                let _running = run_lock.lock().unwrap_or_else(|p| p.into_inner());
                let cancel = progress.cancel_token();
                let summary = index.index_all(
                    |p| {
                        if p.done % PROGRESS_EVERY_FILES == 0 || p.done == p.total {
                            let pct = (p.done * 100).checked_div(p.total).unwrap_or(100) as u32;
                            progress.report(format!("{}/{} files", p.done, p.total), Some(pct));
                        }
                    },
                    &cancel,
                )?;
                Ok((index, summary))
            })();
            // Waiters go on even after a failed or cancelled run: they use what the index holds.
            caught_up.send_replace(true);
            ran
        }
    }
}

impl Default for IndexSlots {
    fn default() -> Self {
        Self {
            slot: Arc::new(std::sync::OnceLock::new()),
            open: Arc::new(std::sync::Mutex::new(())),
            run: Arc::new(std::sync::Mutex::new(())),
            caught_up: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }
}

impl Backend {
    /// Opens `folder`'s index off the async threads, brings it up to date under
    /// progress, and starts feeding it edited buffers (debounced) until the folder is removed.
    pub(super) fn start_index(&self, folder: Arc<WorkspaceRoot>) {
        let Ok((config, paths)) = self.config_and_paths_in(&folder) else { return };
        let docs = self.docs.clone();
        let debounce = std::time::Duration::from_millis(config.index.debounce_ms.max(10));
        let title = match self.roots().len() {
            0 | 1 => "tinycoder: indexing".to_string(),
            _ => format!("tinycoder: indexing {}", folder_name(&paths.root)),
        };
        let progress = ProgressHandle::start(&self.client, &self.jobs, &title, self.progress_supported());
        let job = folder.index.job(paths.root.clone(), config, progress);
        let client = self.client.clone();
        tokio::spawn(async move {
            let opened = tokio::task::spawn_blocking(job).await;
            let index = match opened {
                Ok(Ok((index, summary))) => {
                    let root = folder.root.display().to_string();
                    tracing::info!(files = summary.files, indexed = summary.indexed, %root, "workspace index ready");
                    index
                }
                Ok(Err(e)) => {
                    let message = format!("tinycoder: the index of {} is not available: {e}", folder.root.display());
                    tracing::warn!("{message}");
                    client.show_message(MessageType::WARNING, message).await;
                    return;
                }
                Err(e) => return tracing::error!("index task failed: {e}"),
            };
            while !folder.is_removed() {
                tokio::time::sleep(debounce).await;
                let uris: Vec<String> = match folder.dirty.lock() {
                    Ok(mut d) => d.drain().collect(),
                    Err(_) => return,
                };
                for uri in uris {
                    let Some(path) = uri.parse::<Uri>().ok().and_then(|u| u.to_file_path().map(|p| p.into_owned()))
                    else {
                        continue;
                    };
                    let text = docs.lock().ok().and_then(|d| d.get(&uri).map(|o| o.doc.text()));
                    if let Some(text) = text {
                        index.update_buffer(&path, text);
                    }
                }
            }
            tracing::info!(root = %folder.root.display(), "folder removed: its index is no longer fed");
        });
    }
}

/// The last part of a folder's path, for progress titles.
pub(super) fn folder_name(root: &std::path::Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| root.display().to_string())
}
