//! Workspaces and sessions. A session opens the workspace at its `cwd` (its
//! configuration, model client, task store and index, shared by every session
//! on that folder); its id is a chat session of the workspace store, the same
//! sessions the language server's chat and the CLI use.

use super::AcpError;
use crate::agent::Workspace;
use crate::config::{ConfigInputs, LoadedConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Opens the workspace at `root` with its configuration (the usual layers).
fn open_workspace(root: &Path) -> Result<Workspace, AcpError> {
    let shown = root.display().to_string();
    let loaded = LoadedConfig::load(&ConfigInputs::from_environment(Some(root.to_path_buf())))
        .map_err(|source| AcpError::Config { root: shown, source: Box::new(source) })?;
    Ok(Workspace::open(root, loaded.config)?)
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
        let ws = Arc::new(open_workspace(&root)?);
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
