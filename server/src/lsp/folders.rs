//! Workspace folders added and removed while the server runs: an added folder
//! gets its own configuration, index (built under progress) and store; a
//! removed one stops being indexed and its files are no longer served. When
//! the first folder goes, the next one's settings become the server's.

use super::roots::WorkspaceRoot;
use super::server::Backend;
use crate::config::{ConfigInputs, LoadedConfig};
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::ls_types::DidChangeWorkspaceFoldersParams;

impl Backend {
    /// `workspace/didChangeWorkspaceFolders`: removes, then adds folders (all before any await),
    /// reads the new folders' configuration and starts indexing them in the background.
    pub(super) fn workspace_folders_changed(&self, params: DidChangeWorkspaceFoldersParams) {
        let paths = |folders: &[tower_lsp_server::ls_types::WorkspaceFolder]| -> Vec<PathBuf> {
            folders.iter().filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned())).collect()
        };
        let (added, removed) = (paths(&params.event.added), paths(&params.event.removed));
        let Ok(mut roots) = self.roots.write() else { return tracing::error!("workspace folders unavailable") };
        let primary_before = roots.primary().map(|r| r.root.clone());
        for path in &removed {
            match roots.remove(path) {
                Some(_) => tracing::info!(root = %path.display(), "workspace folder removed"),
                None => tracing::debug!(root = %path.display(), "removed folder was not a workspace folder"),
            }
        }
        let new: Vec<_> = added.into_iter().filter_map(|path| roots.add(path)).collect();
        let primary_now = roots.primary().map(|r| r.root.clone());
        drop(roots);
        if primary_now != primary_before {
            tracing::info!(primary = ?primary_now, "the first workspace folder changed: its settings now apply");
            let options = self.init_options.lock().ok().and_then(|o| o.clone());
            if let Err(message) = self.load_settings(options) {
                self.show_error_later(format!("{message}; keeping the previous configuration"));
            }
            self.ask_about_trust();
        }
        // The new folders' settings; and when the first folder changed, the new first one now uses the server's.
        let changed = if primary_now != primary_before { self.roots() } else { new.clone() };
        self.read_folder_configs(&changed);
        for folder in new {
            tracing::info!(root = %folder.root.display(), "workspace folder added");
            self.start_index(folder.clone());
            self.ask_about_unfinished_tasks(&folder);
        }
    }

    /// Reads the configuration of each of `folders` but the first workspace folder (the
    /// user's layers and the folder's own `.tinycoder.toml`, under the folder's recorded
    /// trust); the first one uses the server's settings. Small files, read in notifications
    /// only (never on the keystroke path). A folder whose file is invalid falls back to the
    /// server's settings, and the user is told why.
    pub(super) fn read_folder_configs(&self, folders: &[Arc<WorkspaceRoot>]) {
        let roots = self.roots();
        let init_options = self.init_options.lock().ok().and_then(|o| o.clone());
        for folder in folders {
            let own = if roots.first().is_none_or(|first| Arc::ptr_eq(first, folder)) {
                None
            } else {
                match load_folder_config(folder.root.clone(), init_options.clone()) {
                    Ok(loaded) => {
                        self.report_trust(&loaded.trust);
                        self.ask_about_folder_trust(folder.clone(), &loaded.trust);
                        Some(loaded.config)
                    }
                    Err(e) => {
                        let message = format!(
                            "tinycoder: the settings of {} are not applied ({e}); it uses those of {}",
                            folder.root.display(),
                            roots[0].root.display()
                        );
                        self.show_error_later(message);
                        None
                    }
                }
            };
            if let Ok(mut slot) = folder.config.write() {
                *slot = own;
            }
        }
    }
}

/// A workspace folder's own configuration: the user's layers, the editor's
/// `initializationOptions` and the folder's `.tinycoder.toml`, under the folder's
/// recorded trust.
pub(super) fn load_folder_config(
    root: PathBuf,
    init_options: Option<serde_json::Value>,
) -> Result<LoadedConfig, crate::config::ConfigError> {
    let mut inputs = ConfigInputs::from_environment(Some(root));
    inputs.init_options = init_options;
    LoadedConfig::load(&inputs)
}
