//! Workspaces and sessions. A session opens the workspace at its `cwd` (its
//! configuration, model client, task store and index, shared by every session
//! on that folder); its id is a chat session of the workspace store, the same
//! sessions the language server's chat and the CLI use.

use super::AcpError;
use crate::agent::{AgentEnv, SourceView};
use crate::config::{Config, ConfigInputs, LoadedConfig, PromptLibrary};
use crate::index::WorkspaceIndex;
use crate::llm::ModelClient;
use crate::paths::WorkspacePaths;
use crate::store::{EventBus, Store};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

/// One workspace folder, opened once and shared by its sessions.
pub struct Workspace {
    pub root: PathBuf,
    pub config: Config,
    pub prompts: PromptLibrary,
    pub model: Arc<dyn ModelClient>,
    pub store: Store,
    pub bus: EventBus,
    pub index: Arc<WorkspaceIndex>,
    pub paths: WorkspacePaths,
    /// The first catch-up of the index; prompts wait for it (a failure is logged, retrieval degrades).
    indexed: OnceCell<()>,
}

impl Workspace {
    /// Opens the workspace at `root`: configuration (the usual layers), prompts, model client, store, index.
    pub fn open(root: &Path) -> Result<Self, AcpError> {
        let shown = root.display().to_string();
        let loaded = LoadedConfig::load(&ConfigInputs::from_environment(Some(root.to_path_buf())))
            .map_err(|source| AcpError::Config { root: shown.clone(), source: Box::new(source) })?;
        let config = loaded.config;
        // Read as the trust check reads it (the same function).
        let dir = crate::paths::setting_path(&config.prompts.dir, Some(root));
        let prompts = PromptLibrary::load(dir.as_deref())?;
        let model = crate::llm::client_from_config(&config)?;
        let store = crate::store::open_workspace(root, &config)
            .map_err(|source| AcpError::Store { root: shown.clone(), source: Box::new(source) })?;
        let mut index_cfg = config.clone();
        index_cfg.index.watch = false;
        let index = Arc::new(
            WorkspaceIndex::open_for_workspace(root, &index_cfg)
                .map_err(|source| AcpError::Index { root: shown, source: Box::new(source) })?,
        );
        Ok(Self {
            root: root.to_path_buf(),
            paths: WorkspacePaths::new(root, &config.store.dir),
            bus: EventBus::new(store.clone()),
            config,
            prompts,
            model,
            store,
            index,
            indexed: OnceCell::new(),
        })
    }

    /// Waits until the index caught up with the disk once (later prompts return at once).
    pub async fn ready(&self) {
        self.indexed
            .get_or_init(|| async {
                let index = self.index.clone();
                let done =
                    tokio::task::spawn_blocking(move || index.index_all(|_| {}, &CancellationToken::new())).await;
                match done {
                    Ok(Ok(summary)) => tracing::info!(?summary, "index caught up"),
                    Ok(Err(e)) => tracing::warn!("the index could not catch up: {e}"),
                    Err(e) => tracing::warn!("the indexer stopped: {e}"),
                }
            })
            .await;
    }

    /// The agent's environment with `sources` as the user's view of the files and `human` to ask.
    pub fn env(&self, sources: Arc<dyn SourceView>, human: Arc<dyn crate::sandbox::HumanPort>) -> AgentEnv {
        AgentEnv {
            config: self.config.clone(),
            prompts: self.prompts.clone(),
            model: self.model.clone(),
            bus: self.bus.clone(),
            index: self.index.clone(),
            paths: self.paths.clone(),
            sources,
            human,
        }
    }

    /// The workspace-relative, `/`-separated form of `path` (absolute or relative), if it lies inside.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = if path.is_absolute() { path.strip_prefix(&self.root).ok()? } else { path };
        if rel.components().any(|c| !matches!(c, std::path::Component::Normal(_))) || rel.as_os_str().is_empty() {
            return None;
        }
        Some(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
    }
}

/// One ACP session: its workspace and the turn in flight.
pub struct Session {
    pub id: String,
    pub workspace: Arc<Workspace>,
    /// The running turn (its number and cancel token; `session/cancel` fires it).
    turn: Mutex<(u64, Option<CancellationToken>)>,
}

/// A running turn of a session.
pub struct Turn {
    pub number: u64,
    pub cancel: CancellationToken,
}

impl Session {
    /// Starts a turn; `None` when one is already running.
    pub fn begin_turn(&self) -> Option<Turn> {
        let mut slot = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.1.is_some() {
            return None;
        }
        let cancel = CancellationToken::new();
        slot.0 += 1;
        slot.1 = Some(cancel.clone());
        Some(Turn { number: slot.0, cancel })
    }

    /// Ends turn `number`.
    pub fn end_turn(&self, number: u64) {
        let mut slot = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.0 == number {
            slot.1 = None;
        }
    }

    /// Cancels the running turn; false when none runs.
    pub fn cancel(&self) -> bool {
        let slot = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        match &slot.1 {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

/// What the client said it can do, from `initialize`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientFs {
    pub read: bool,
    pub write: bool,
}

/// Every open workspace and session of this connection.
#[derive(Default)]
pub struct Registry {
    workspaces: Mutex<HashMap<PathBuf, Arc<Workspace>>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    fs: Mutex<ClientFs>,
}

impl Registry {
    /// Records the client's file-system capabilities.
    pub fn set_client_fs(&self, fs: ClientFs) {
        *self.fs.lock().unwrap_or_else(|p| p.into_inner()) = fs;
    }

    /// The client's file-system capabilities (none before `initialize`).
    pub fn client_fs(&self) -> ClientFs {
        *self.fs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The workspace at `cwd`, opened on first use (blocking: call off the dispatch loop).
    pub fn workspace(&self, cwd: &Path) -> Result<Arc<Workspace>, AcpError> {
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(AcpError::BadRoot(cwd.display().to_string()));
        }
        let root = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        if let Some(ws) = self.workspaces.lock().unwrap_or_else(|p| p.into_inner()).get(&root) {
            return Ok(ws.clone());
        }
        let ws = Arc::new(Workspace::open(&root)?);
        let mut all = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        Ok(all.entry(root).or_insert(ws).clone())
    }

    /// Registers session `id` on `workspace`.
    pub fn add_session(&self, id: &str, workspace: Arc<Workspace>) -> Arc<Session> {
        let session = Arc::new(Session { id: id.to_string(), workspace, turn: Mutex::new((0, None)) });
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_string(), session.clone());
        session
    }

    /// The session `id`, if this connection opened or loaded it.
    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned()
    }
}
