//! The files as the editor shows them: a `SourceView` that reads through the
//! client's `fs/read_text_file`, so unsaved buffers are what the agent sees and
//! what the shadow workspace's tests run on. Falls back to the disk when the
//! client cannot read files, does not answer in time, or the file is not there.

use crate::agent::{read_workspace_file, SourceView};
use crate::sandbox::BufferOverlay;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The client's file system for one session.
#[derive(Clone)]
pub struct ClientFiles {
    pub conn: ConnectionTo<Client>,
    pub session_id: SessionId,
}

impl ClientFiles {
    /// `fs/read_text_file` of absolute `path`.
    pub async fn read(&self, path: &Path) -> Result<String, agent_client_protocol::Error> {
        let req = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
        Ok(self.conn.send_request(req).block_task().await?.content)
    }

    /// `fs/write_text_file` of absolute `path`.
    pub async fn write(&self, path: &Path, text: &str) -> Result<(), agent_client_protocol::Error> {
        let req = WriteTextFileRequest::new(self.session_id.clone(), path.to_path_buf(), text);
        self.conn.send_request(req).block_task().await.map(|_| ())
    }
}

/// A `SourceView` over the client (when it can read files) or the disk.
pub struct ClientSources {
    root: PathBuf,
    client: Option<ClientFiles>,
    timeout: Duration,
    /// Texts seen during this turn (from the client, the prompt's embedded files, or written).
    seen: Mutex<BTreeMap<String, String>>,
}

impl ClientSources {
    /// Files under `root`, read through `client` when given.
    pub fn new(root: &Path, client: Option<ClientFiles>, timeout: Duration) -> Self {
        Self { root: root.to_path_buf(), client, timeout, seen: Mutex::new(BTreeMap::new()) }
    }

    /// Records the text of `rel` as the user sees it (an embedded file of the prompt, a written patch).
    pub fn remember(&self, rel: &str, text: &str) {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).insert(rel.to_string(), text.to_string());
    }

    /// Reads `rel` through the client now (not from what this turn saw), or from the disk.
    pub async fn read_fresh(&self, rel: &str) -> Option<String> {
        let from_client = match &self.client {
            Some(c) => c.read(&self.root.join(rel)).await.ok(),
            None => None,
        };
        from_client.or_else(|| read_workspace_file(&self.root, rel))
    }

    /// Asks the client for `path` from synchronous code: the request runs on another task while
    /// this worker waits (the core's `SourceView` is synchronous).
    fn ask_client(&self, client: &ClientFiles, path: &Path) -> Option<String> {
        let handle = tokio::runtime::Handle::try_current().ok()?;
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return None;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (client, owned) = (client.clone(), path.to_path_buf());
        handle.spawn(async move {
            let _ = tx.send(client.read(&owned).await);
        });
        match tokio::task::block_in_place(|| rx.recv_timeout(self.timeout)) {
            Ok(Ok(text)) => Some(text),
            Ok(Err(e)) => {
                tracing::warn!(path = %path.display(), "fs/read_text_file failed, reading the disk: {}", e.message);
                None
            }
            Err(_) => {
                tracing::warn!(path = %path.display(), "fs/read_text_file did not answer in time, reading the disk");
                None
            }
        }
    }
}

fn plain_relative(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty() && p.components().all(|c| matches!(c, std::path::Component::Normal(_)))
}

impl SourceView for ClientSources {
    fn read(&self, rel: &str) -> Option<String> {
        if !plain_relative(rel) {
            return None;
        }
        if let Some(text) = self.seen.lock().unwrap_or_else(|p| p.into_inner()).get(rel) {
            return Some(text.clone());
        }
        let path = self.root.join(rel);
        if !path.is_file() {
            return None;
        }
        let text = match &self.client {
            Some(c) => self.ask_client(c, &path).or_else(|| read_workspace_file(&self.root, rel)),
            None => read_workspace_file(&self.root, rel),
        }?;
        self.remember(rel, &text);
        Some(text)
    }

    fn overlays(&self) -> Vec<BufferOverlay> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.iter()
            .filter(|(rel, text)| read_workspace_file(&self.root, rel).as_deref() != Some(text.as_str()))
            .map(|(rel, text)| BufferOverlay { rel_path: PathBuf::from(rel), text: text.clone() })
            .collect()
    }
}
