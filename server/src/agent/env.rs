//! What the runtime works with: configuration, prompts, the model, the store,
//! the index and the user's view of the files. Adapters (CLI, LSP) fill it in.

use crate::config::{Config, PromptLibrary};
use crate::index::WorkspaceIndex;
use crate::llm::ModelClient;
use crate::paths::WorkspacePaths;
use crate::sandbox::{BufferOverlay, HumanPort};
use crate::store::EventBus;
use std::path::Path;
use std::sync::Arc;

/// The current text of workspace files as the user sees them: in an editor,
/// unsaved buffers win over the disk.
pub trait SourceView: Send + Sync {
    /// The text of workspace-relative `rel`, or `None` when it is not a readable UTF-8 file.
    fn read(&self, rel: &str) -> Option<String>;
    /// Buffers that differ from the disk, to overlay on every shadow.
    fn overlays(&self) -> Vec<BufferOverlay>;
}

/// Files as they are on disk (the CLI).
#[derive(Debug, Clone)]
pub struct DiskSources {
    root: std::path::PathBuf,
}

impl DiskSources {
    /// The files under `root`.
    pub fn new(root: &Path) -> Self {
        Self { root: root.to_path_buf() }
    }
}

impl SourceView for DiskSources {
    fn read(&self, rel: &str) -> Option<String> {
        read_workspace_file(&self.root, rel)
    }

    fn overlays(&self) -> Vec<BufferOverlay> {
        Vec::new()
    }
}

/// Reads `rel` under `root` when it is a plain relative path to a UTF-8 file.
pub fn read_workspace_file(root: &Path, rel: &str) -> Option<String> {
    let p = Path::new(rel);
    if p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return None;
    }
    let bytes = std::fs::read(root.join(p)).ok()?;
    String::from_utf8(bytes).ok()
}

/// Everything one task runs with.
#[derive(Clone)]
pub struct AgentEnv {
    pub config: Config,
    pub prompts: PromptLibrary,
    pub model: Arc<dyn ModelClient>,
    pub bus: EventBus,
    pub index: Arc<WorkspaceIndex>,
    pub paths: WorkspacePaths,
    pub sources: Arc<dyn SourceView>,
    /// Who answers the agent's questions (strategy after repeated failure, permissions).
    pub human: Arc<dyn HumanPort>,
}
