//! Workspace folders: tinycoder follows one folder (the first the editor
//! opened with); added and removed folders are explained to the user instead
//! of silently ignored.

use super::server::Backend;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{DidChangeWorkspaceFoldersParams, MessageType};

impl Backend {
    /// `workspace/didChangeWorkspaceFolders`: logs the change and, when it
    /// touches what tinycoder works on, tells the user (without waiting).
    pub(super) fn workspace_folders_changed(&self, params: DidChangeWorkspaceFoldersParams) {
        let paths = |folders: &[tower_lsp_server::ls_types::WorkspaceFolder]| -> Vec<PathBuf> {
            folders.iter().filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned())).collect()
        };
        let (added, removed) = (paths(&params.event.added), paths(&params.event.removed));
        tracing::info!(added = added.len(), removed = removed.len(), "workspace folders changed");
        let root = self.workspace.read().ok().and_then(|w| w.clone());
        if let Some(message) = folders_message(root.as_deref(), &added, &removed) {
            tracing::warn!("{message}");
            let client = self.client().clone();
            tokio::spawn(async move { client.show_message(MessageType::WARNING, message).await });
        }
    }
}

/// What to tell the user about a change of folders, given the folder tinycoder works on.
fn folders_message(root: Option<&Path>, added: &[PathBuf], removed: &[PathBuf]) -> Option<String> {
    let Some(root) = root else {
        return (!added.is_empty()).then(|| {
            "tinycoder started without a workspace folder and does not pick up folders added later; \
             restart the language server (or reopen the editor) with the folder open"
                .to_string()
        });
    };
    if removed.iter().any(|r| r == root) {
        return Some(format!(
            "tinycoder keeps working on {}, which was removed from the workspace; restart the language \
             server to work on another folder",
            root.display()
        ));
    }
    let others: Vec<String> = added.iter().filter(|a| a.as_path() != root).map(|a| a.display().to_string()).collect();
    (!others.is_empty()).then(|| {
        format!(
            "tinycoder works on one folder, {}; {} is not indexed and its files get no tinycoder context. \
             Open it in a window of its own to use tinycoder there",
            root.display(),
            others.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_of_folders_are_explained() {
        let root = PathBuf::from("/w/app");
        let other = PathBuf::from("/w/lib");
        let said = folders_message(Some(&root), std::slice::from_ref(&other), &[]).expect("a message");
        assert!(said.contains("one folder, /w/app") && said.contains("/w/lib is not indexed"), "{said}");
        let said = folders_message(Some(&root), &[], std::slice::from_ref(&root)).expect("a message");
        assert!(said.contains("keeps working on /w/app"), "{said}");
        assert_eq!(folders_message(Some(&root), &[], std::slice::from_ref(&other)), None, "another folder went");
        assert_eq!(folders_message(Some(&root), std::slice::from_ref(&root), &[]), None, "the same folder again");
        assert!(folders_message(None, &[other], &[]).is_some_and(|m| m.contains("without a workspace folder")));
    }
}
