//! [`WorkspaceIndex`]: the index of one workspace, kept up to date by a
//! background indexer thread fed through a channel (open buffers, file
//! events from the editor and from a file watcher). Callers never wait for
//! indexing except through [`WorkspaceIndex::flush`] and `index_all`.

use super::chunk::analyse;
use super::files::{FileRecord, FileTable};
use super::indexer::{indexer_loop, Command};
use super::ranking::Ranking;
use super::repo_map::{RepoGraph, RepoMap, RepoMapFocus, RepoMapSettings};
use super::schema::SCHEMA_VERSION;
use super::store::IndexStore;
use super::walk::{relative, walk_workspace, ContentFilter, WalkedFile};
use super::watch::start_watcher;
use super::IndexError;
use crate::config::IndexConfig;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Progress of [`WorkspaceIndex::index_all`].
#[derive(Debug, Clone, Serialize)]
pub struct IndexProgress {
    pub done: usize,
    pub total: usize,
    /// The file just handled.
    pub path: String,
}

/// What [`WorkspaceIndex::index_all`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexSummary {
    /// Candidate files the walk found.
    pub files: usize,
    /// Files parsed and (re)written to the index.
    pub indexed: usize,
    /// Files whose content was unchanged since the last run.
    pub unchanged: usize,
    /// Files skipped as binary, generated or too large.
    pub skipped: usize,
    /// Files removed from the index (deleted since the last run).
    pub removed: usize,
    /// Totals over the whole index after the run.
    pub total_files: usize,
    pub symbols: usize,
    pub chunks: usize,
    /// Bytes of the files parsed in this run.
    pub bytes: u64,
    pub seconds: f64,
}

/// What the indexer thread and the handles share.
pub(super) struct Shared {
    pub(super) root: PathBuf,
    pub(super) cfg: IndexConfig,
    pub(super) store: IndexStore,
    pub(super) table: RwLock<FileTable>,
    filter: ContentFilter,
    /// Latest text of open editor buffers (they win over the disk).
    pub(super) buffers: Mutex<HashMap<String, Arc<str>>>,
    /// The ranking of searches, from `cfg`.
    ranking: Ranking,
    /// Bumped on every file-table change; the cached repo graph is valid for one generation.
    generation: AtomicU64,
    graph: Mutex<Option<(u64, Arc<RepoGraph>)>>,
}

/// The index of one workspace (see the module doc).
pub struct WorkspaceIndex {
    shared: Arc<Shared>,
    tx: Mutex<Option<Sender<Command>>>,
    watcher: Option<notify::RecommendedWatcher>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for WorkspaceIndex {
    /// Stops the watcher, lets the indexer finish what was sent and save the file table.
    fn drop(&mut self) {
        self.watcher.take();
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for WorkspaceIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceIndex").field("root", &self.shared.root).finish()
    }
}

pub(super) fn hash(text: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text)
}

impl WorkspaceIndex {
    /// Opens the index of `root` stored in `index_dir` and starts the indexer (and the watcher when `cfg.watch`).
    pub fn open(root: &Path, index_dir: &Path, cfg: &IndexConfig) -> Result<Self, IndexError> {
        let root = root.canonicalize().map_err(|source| IndexError::Io { path: root.to_path_buf(), source })?;
        let store = IndexStore::open(index_dir, cfg.writer_memory_mb)?;
        let mut table = FileTable::load(index_dir);
        let unsaved = FileTable::has_unsaved_marker(index_dir);
        if unsaved || table.schema_version != SCHEMA_VERSION || (table.files.is_empty() && store.num_chunks() > 0) {
            // Without a trustworthy table we cannot tell which chunks are stale: start over.
            store.clear()?;
            store.commit()?;
            table = FileTable { schema_version: SCHEMA_VERSION, files: Default::default() };
            table.save(index_dir)?;
            FileTable::clear_unsaved_marker(index_dir);
        }
        let shared = Arc::new(Shared {
            filter: ContentFilter::new(cfg),
            root: root.clone(),
            cfg: cfg.clone(),
            store,
            table: RwLock::new(table),
            buffers: Mutex::new(HashMap::new()),
            ranking: Ranking::from_config(cfg),
            generation: AtomicU64::new(0),
            graph: Mutex::new(None),
        });
        let (tx, rx) = channel();
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tinycoder-indexer".into())
            .spawn(move || indexer_loop(worker, rx))
            .map_err(|source| IndexError::Io { path: root.clone(), source })?;
        let watcher = if cfg.watch { start_watcher(&root, tx.clone()) } else { None };
        Ok(Self { shared, tx: Mutex::new(Some(tx)), watcher, thread: Some(thread) })
    }

    /// Opens the index of `root` in its cache directory, as configured: the
    /// first copy no other process holds (`index`, `index-2`, … up to `index.max_copies`).
    pub fn open_for_workspace(root: &Path, config: &crate::config::Config) -> Result<Self, IndexError> {
        let paths = crate::paths::WorkspacePaths::new(root, &config.store.dir);
        let first = paths.cache_dir.join("index");
        let copies = config.index.max_copies.max(1);
        for n in 1..=copies {
            let dir = if n == 1 { first.clone() } else { paths.cache_dir.join(format!("index-{n}")) };
            match Self::open(root, &dir, &config.index) {
                Err(IndexError::InUse { .. }) => {
                    tracing::info!(
                        "the index at {} is in use by another tinycoder; trying the next copy",
                        dir.display()
                    )
                }
                Ok(index) => {
                    if n > 1 {
                        tracing::info!(
                            "another tinycoder holds this workspace's index; this one keeps its own copy at {}",
                            dir.display()
                        );
                    }
                    return Ok(index);
                }
                Err(e) => return Err(e),
            }
        }
        Err(IndexError::InUse { dir: first, copies })
    }

    /// The folder this index is stored in.
    pub fn dir(&self) -> &Path {
        self.shared.store.dir()
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    fn send(&self, cmd: Command) {
        if let Ok(Some(tx)) = self.tx.lock().as_deref() {
            if tx.send(cmd).is_err() {
                tracing::error!("indexer thread has stopped; index updates are lost until restart");
            }
        }
    }

    fn rel(&self, path: &Path) -> Option<String> {
        let abs = if path.is_absolute() { path.to_path_buf() } else { self.shared.root.join(path) };
        relative(&self.shared.root, &abs)
    }

    /// An open buffer's new text: indexed after `index.debounce_ms` of quiet. Cheap: a map insert and a channel send.
    pub fn update_buffer(&self, path: &Path, text: impl Into<Arc<str>>) {
        let Some(rel) = self.rel(path) else { return };
        if let Ok(mut b) = self.shared.buffers.lock() {
            b.insert(rel.clone(), text.into());
        }
        self.send(Command::Buffer(rel));
    }

    /// The buffer was closed: the file on disk is indexed again.
    pub fn close_buffer(&self, path: &Path) {
        if let Some(rel) = self.rel(path) {
            self.send(Command::CloseBuffer(rel));
        }
    }

    /// A file changed or was created on disk.
    pub fn file_changed(&self, path: &Path) {
        self.send(Command::Changed(self.shared.root.join(path)));
    }

    /// A file or folder was deleted.
    pub fn file_deleted(&self, path: &Path) {
        self.send(Command::Deleted(self.shared.root.join(path)));
    }

    /// A file or folder was renamed.
    pub fn file_renamed(&self, from: &Path, to: &Path) {
        self.send(Command::Renamed(self.shared.root.join(from), self.shared.root.join(to)));
    }

    /// Blocks until every change sent so far (pending buffers included) is committed and searchable.
    pub fn flush(&self) -> Result<(), IndexError> {
        let (ack_tx, ack_rx) = channel();
        self.send(Command::Flush(ack_tx));
        ack_rx.recv().map_err(|_| IndexError::Stopped)
    }

    /// Current text of `rel`: the open buffer, else the file on disk.
    pub fn file_text(&self, rel: &str) -> Option<Arc<str>> {
        if let Some(t) = self.shared.buffers.lock().ok().and_then(|b| b.get(rel).cloned()) {
            return Some(t);
        }
        std::fs::read_to_string(self.shared.root.join(rel)).ok().map(Arc::from)
    }

    /// Runs `f` on the file table (read-locked; keep it short).
    pub fn with_files<R>(&self, f: impl FnOnce(&FileTable) -> R) -> R {
        match self.shared.table.read() {
            Ok(t) => f(&t),
            Err(p) => f(&p.into_inner()),
        }
    }

    /// The repo map ranked for `focus` (the reference graph is cached until the index changes).
    pub fn repo_map(&self, focus: &RepoMapFocus) -> RepoMap {
        let cfg = &self.shared.cfg;
        let generation = self.shared.generation.load(Ordering::SeqCst);
        let cached = self
            .shared
            .graph
            .lock()
            .ok()
            .and_then(|g| g.as_ref().filter(|(gen, _)| *gen == generation).map(|(_, g)| g.clone()));
        let graph = match cached {
            Some(g) => g,
            None => {
                let g = Arc::new(self.with_files(|t| RepoGraph::build(t, cfg.max_definers)));
                if let Ok(mut slot) = self.shared.graph.lock() {
                    *slot = Some((generation, g.clone()));
                }
                g
            }
        };
        RepoMap::rank(&graph, focus, &RepoMapSettings::from_config(cfg))
    }

    /// The ranking searches use (from the configuration the index was opened with).
    pub fn ranking(&self) -> &Ranking {
        &self.shared.ranking
    }

    /// The tantivy store (for counts in tests and benches).
    pub fn store(&self) -> &IndexStore {
        &self.shared.store
    }

    /// Brings the index in line with the disk: parses new and changed files (by content hash),
    /// removes deleted ones, commits. Blocking; call from `spawn_blocking` in async code.
    pub fn index_all(
        &self,
        progress: impl Fn(IndexProgress) + Sync,
        cancel: &CancellationToken,
    ) -> Result<IndexSummary, IndexError> {
        let started = Instant::now();
        let sh = &self.shared;
        let files = walk_workspace(&sh.root, &sh.cfg);
        let total = files.len();
        let mut summary = IndexSummary { files: total, ..Default::default() };
        let open: HashSet<String> = sh.buffers.lock().map(|b| b.keys().cloned().collect()).unwrap_or_default();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).clamp(1, 8);
        let results: Mutex<Vec<Outcome>> = Mutex::new(Vec::with_capacity(total));
        let first_error: Mutex<Option<IndexError>> = Mutex::new(None);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    if cancel.is_cancelled() {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { return };
                    let outcome = if open.contains(&file.rel) { Ok(Outcome::Unchanged) } else { sh.sync_file(file) };
                    match outcome {
                        Ok(o) => results.lock().map(|mut r| r.push(o)).unwrap_or(()),
                        Err(e) => {
                            if let Ok(mut fe) = first_error.lock() {
                                fe.get_or_insert(e);
                            }
                            return;
                        }
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(IndexProgress { done: d, total, path: file.rel.clone() });
                });
            }
        });
        if let Some(e) = first_error.into_inner().ok().flatten() {
            return Err(e);
        }
        if cancel.is_cancelled() {
            // What was written so far is consistent per file; commit it so the work is kept.
            sh.commit()?;
            return Err(IndexError::Cancelled);
        }
        for o in results.into_inner().unwrap_or_default() {
            match o {
                Outcome::Indexed(bytes) => {
                    summary.indexed += 1;
                    summary.bytes += bytes;
                }
                Outcome::Unchanged => summary.unchanged += 1,
                Outcome::Skipped => summary.skipped += 1,
            }
        }
        let seen: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        let stale: Vec<String> = sh
            .table
            .read()
            .map(|t| t.files.keys().filter(|k| !seen.contains(k.as_str()) && !open.contains(*k)).cloned().collect())
            .unwrap_or_default();
        for rel in &stale {
            sh.remove(rel)?;
        }
        summary.removed = stale.len();
        sh.commit()?;
        sh.with_totals(&mut summary);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }
}

pub(super) enum Outcome {
    Indexed(u64),
    Unchanged,
    Skipped,
}

impl Shared {
    /// Reindexes one walked file if its content changed.
    pub(super) fn sync_file(&self, file: &WalkedFile) -> Result<Outcome, IndexError> {
        let known = self.table.read().ok().and_then(|t| t.files.get(&file.rel).map(|r| (r.hash, r.mtime_ns, r.size)));
        if let Some((_, mtime, size)) = known {
            // Same mtime and size: trust it without reading (the usual warm-start case).
            if mtime != 0 && mtime == file.mtime_ns && size == file.size {
                return Ok(Outcome::Unchanged);
            }
        }
        let bytes = match std::fs::read(&file.abs) {
            Ok(b) => b,
            Err(e) => {
                tracing::debug!("cannot read {}: {e}", file.abs.display());
                return Ok(Outcome::Skipped);
            }
        };
        let h = hash(&bytes);
        if let Some((old, _, _)) = known {
            if old == h {
                if let Ok(mut t) = self.table.write() {
                    if let Some(r) = t.files.get_mut(&file.rel) {
                        r.mtime_ns = file.mtime_ns;
                        r.size = file.size;
                    }
                }
                return Ok(Outcome::Unchanged);
            }
        }
        let len = bytes.len() as u64;
        match self.filter.check(bytes) {
            Ok(text) => {
                self.index_text(&file.rel, &text, h, file.mtime_ns, len)?;
                Ok(Outcome::Indexed(len))
            }
            Err(_) => {
                if known.is_some() {
                    self.remove(&file.rel)?;
                }
                Ok(Outcome::Skipped)
            }
        }
    }

    pub(super) fn index_text(&self, rel: &str, text: &str, h: u64, mtime_ns: u64, size: u64) -> Result<(), IndexError> {
        let analysis = analyse(rel, text, &self.cfg);
        self.store.replace_file(rel, &analysis, h)?;
        if let Ok(mut t) = self.table.write() {
            t.files.insert(rel.to_string(), FileRecord::new(&analysis, h, mtime_ns, size));
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Removes `rel` and, if it is a folder, every file under it.
    pub(super) fn remove(&self, rel: &str) -> Result<(), IndexError> {
        let prefix = format!("{rel}/");
        let victims: Vec<String> = self
            .table
            .read()
            .map(|t| t.files.keys().filter(|k| *k == rel || k.starts_with(&prefix)).cloned().collect())
            .unwrap_or_default();
        self.store.delete_file(rel)?;
        for v in victims {
            self.store.delete_file(&v)?;
            if let Ok(mut t) = self.table.write() {
                t.files.remove(&v);
            }
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Commits the index and saves the file table (both visible together).
    fn commit(&self) -> Result<(), IndexError> {
        self.store.commit()?;
        self.save_table()
    }

    /// Commits the index and marks the table unsaved; the indexer saves it later
    /// (saving the whole table per keystroke burst is what made one-file updates slow).
    pub(super) fn commit_deferred(&self) -> Result<(), IndexError> {
        FileTable::set_unsaved_marker(self.store.dir())?;
        self.store.commit()
    }

    pub(super) fn save_table(&self) -> Result<(), IndexError> {
        let table = self.table.read().map_err(|_| IndexError::Stopped)?;
        table.save(self.store.dir())?;
        FileTable::clear_unsaved_marker(self.store.dir());
        Ok(())
    }

    fn with_totals(&self, s: &mut IndexSummary) {
        if let Ok(t) = self.table.read() {
            s.total_files = t.files.len();
            s.symbols = t.files.values().map(|r| r.symbols.len()).sum();
            s.chunks = t.files.values().map(|r| r.chunks).sum();
        }
    }
}
