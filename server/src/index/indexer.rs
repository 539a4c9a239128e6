//! The indexer thread: one loop owns every write to the index. It takes
//! [`Command`]s from the channel (open buffers, file events, flushes), waits
//! `index.debounce_ms` for a buffer to go quiet, batches commits
//! (`index.commit_delay_ms`) and saves the file table now and then
//! (`index.table_save_interval_ms`).

use super::incremental::{hash, Shared};
use super::walk::{mtime_ns, relative, walk_workspace, WalkedFile};
use super::IndexError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request to the indexer thread.
pub(super) enum Command {
    Buffer(String),
    CloseBuffer(String),
    Changed(PathBuf),
    Deleted(PathBuf),
    Renamed(PathBuf, PathBuf),
    Flush(Sender<()>),
}

impl Shared {
    /// A path changed on disk (or its buffer closed): reindex it, or remove it if gone.
    fn disk_changed(&self, abs: &Path) -> Result<(), IndexError> {
        let Some(rel) = relative(&self.root, abs) else {
            return Ok(());
        };
        if self.buffers.lock().map(|b| b.contains_key(&rel)).unwrap_or(false) {
            return Ok(()); // The open buffer is the truth until it is closed.
        }
        match std::fs::metadata(abs) {
            Ok(meta) if meta.is_file() => {
                let file = WalkedFile { rel, abs: abs.to_path_buf(), size: meta.len(), mtime_ns: mtime_ns(&meta) };
                self.sync_file(&file).map(|_| ())
            }
            Ok(meta) if meta.is_dir() => {
                for f in walk_workspace(abs, &self.cfg) {
                    let rel = format!("{}/{}", rel, f.rel);
                    self.sync_file(&WalkedFile { rel, ..f })?;
                }
                Ok(())
            }
            _ => self.remove(&rel),
        }
    }

    fn index_buffer(&self, rel: &str) -> Result<(), IndexError> {
        let Some(text) = self.buffers.lock().ok().and_then(|b| b.get(rel).cloned()) else {
            return Ok(());
        };
        let h = hash(text.as_bytes());
        if self.table.read().ok().and_then(|t| t.files.get(rel).map(|r| r.hash)) == Some(h) {
            return Ok(());
        }
        self.index_text(rel, &text, h, 0, text.len() as u64)
    }
}

pub(super) fn indexer_loop(sh: Arc<Shared>, rx: Receiver<Command>) {
    let debounce = Duration::from_millis(sh.cfg.debounce_ms);
    let commit_delay = Duration::from_millis(sh.cfg.commit_delay_ms);
    let mut pending: HashMap<String, Instant> = HashMap::new();
    let mut commit_at: Option<Instant> = None;
    let mut save_at: Option<Instant> = None;
    let save_interval = Duration::from_millis(sh.cfg.table_save_interval_ms);
    loop {
        let now = Instant::now();
        let wake = pending.values().copied().chain(commit_at).chain(save_at).min();
        let cmd = match wake {
            Some(t) => match rx.recv_timeout(t.saturating_duration_since(now)) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(c) => Some(c),
                Err(_) => break,
            },
        };
        let mut flush_ack = None;
        let result = match cmd {
            Some(Command::Buffer(rel)) => {
                pending.insert(rel, Instant::now() + debounce);
                Ok(false)
            }
            Some(Command::CloseBuffer(rel)) => {
                pending.remove(&rel);
                if let Ok(mut b) = sh.buffers.lock() {
                    b.remove(&rel);
                }
                sh.disk_changed(&sh.root.join(&rel)).map(|_| true)
            }
            Some(Command::Changed(p)) => sh.disk_changed(&p).map(|_| true),
            Some(Command::Deleted(p)) => match relative(&sh.root, &p) {
                Some(rel) if !p.exists() => sh.remove(&rel).map(|_| true),
                _ => sh.disk_changed(&p).map(|_| true),
            },
            Some(Command::Renamed(from, to)) => {
                let r = match relative(&sh.root, &from) {
                    Some(rel) => sh.remove(&rel),
                    None => Ok(()),
                };
                r.and_then(|_| sh.disk_changed(&to)).map(|_| true)
            }
            Some(Command::Flush(ack)) => {
                flush_ack = Some(ack);
                Ok(true)
            }
            None => Ok(false),
        };
        let mut dirty = match result {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("indexer: {e}");
                true
            }
        };
        let now = Instant::now();
        let due: Vec<String> =
            pending.iter().filter(|(_, t)| flush_ack.is_some() || **t <= now).map(|(r, _)| r.clone()).collect();
        for rel in due {
            pending.remove(&rel);
            if let Err(e) = sh.index_buffer(&rel) {
                tracing::error!("indexer: buffer {rel}: {e}");
            }
            dirty = true;
        }
        if dirty && commit_at.is_none() {
            commit_at = Some(now + commit_delay);
        }
        if commit_at.is_some_and(|t| t <= now) || (flush_ack.is_some() && commit_at.is_some()) {
            if let Err(e) = sh.commit_deferred() {
                tracing::error!("indexer: commit failed: {e}");
            }
            commit_at = None;
            save_at.get_or_insert(now + save_interval);
        }
        if save_at.is_some_and(|t| t <= now) {
            if let Err(e) = sh.save_table() {
                tracing::error!("indexer: saving the file table failed: {e}");
            }
            save_at = None;
        }
        if let Some(ack) = flush_ack {
            let _ = ack.send(());
        }
    }
    if save_at.is_some() {
        if let Err(e) = sh.save_table() {
            tracing::error!("indexer: saving the file table failed: {e}");
        }
    }
}
