//! Opening the database: pragmas, versioned migrations (`PRAGMA user_version`),
//! the clean-shutdown marker, and the thread that owns the connection.

use super::StoreError;
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

/// File name of the database inside the workspace's data directory.
pub const DB_FILE_NAME: &str = "tinycoder.sqlite3";

/// SQLite `synchronous` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// Safe against process crashes in WAL mode; the last commits may be lost on power loss.
    Normal,
    /// fsync on every commit.
    Full,
}

/// How the store is opened (from `[store]`).
#[derive(Debug, Clone)]
pub struct StoreSettings {
    pub synchronous: Synchronous,
    /// Periodic checkpoint interval in events (0 = none).
    pub checkpoint_every_events: u32,
}

impl StoreSettings {
    /// Settings from the `[store]` config section.
    pub fn from_config(c: &crate::config::StoreConfig) -> Self {
        let synchronous = if c.synchronous == "full" { Synchronous::Full } else { Synchronous::Normal };
        Self { synchronous, checkpoint_every_events: c.checkpoint_every_events }
    }
}

impl Default for StoreSettings {
    fn default() -> Self {
        Self { synchronous: Synchronous::Normal, checkpoint_every_events: 20 }
    }
}

/// Schema migrations, in order; `PRAGMA user_version` is the number applied.
/// Never edit a released entry: append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY,
        session_id TEXT,
        input TEXT NOT NULL,
        status TEXT NOT NULL,
        failure_reason TEXT,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        finished_ms INTEGER
    );
    CREATE INDEX tasks_by_status ON tasks(status);
    CREATE TABLE events (
        event_id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        session_id TEXT,
        sequence INTEGER NOT NULL,
        type TEXT NOT NULL,
        ts_ms INTEGER NOT NULL,
        payload TEXT NOT NULL,
        causation_id TEXT,
        correlation_id TEXT NOT NULL,
        UNIQUE (task_id, sequence)
    );
    CREATE TABLE checkpoints (
        checkpoint_id INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        status TEXT NOT NULL,
        active_step_id TEXT,
        plan_snapshot TEXT NOT NULL,
        context_snapshot TEXT NOT NULL,
        last_sequence INTEGER NOT NULL,
        ts_ms INTEGER NOT NULL
    );
    CREATE INDEX checkpoints_by_task ON checkpoints(task_id, checkpoint_id);
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        summarized_through INTEGER NOT NULL DEFAULT 0,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        ts_ms INTEGER NOT NULL,
        PRIMARY KEY (session_id, turn)
    );
    CREATE TABLE permission_decisions (
        action TEXT NOT NULL,
        pattern TEXT NOT NULL,
        decision TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        PRIMARY KEY (action, pattern)
    );
    CREATE TABLE memory_items (
        id TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        weight REAL NOT NULL,
        task_id TEXT,
        session_id TEXT,
        metadata TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
    );
    CREATE INDEX memory_by_kind ON memory_items(kind);
    -- porter stemming over unicode61 with '_' kept inside words, so
    -- `unsupported_operand` and `total()` tokenize the way code reads.
    CREATE VIRTUAL TABLE memory_fts USING fts5(
        text, item_id UNINDEXED, tokenize = "porter unicode61 tokenchars '_'"
    );
    CREATE TABLE memory_vectors (
        item_id TEXT PRIMARY KEY REFERENCES memory_items(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL
    );
    "#,
];

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

struct Inner {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    path: PathBuf,
    settings: StoreSettings,
    integrity_checked: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the thread, which writes the clean-shutdown marker.
        if let Ok(mut s) = self.sender.lock() {
            s.take();
        }
        if let Ok(mut t) = self.thread.lock() {
            if let Some(handle) = t.take() {
                let _ = handle.join();
            }
        }
    }
}

/// A cheap-to-clone handle to the database; all SQLite work runs on one
/// dedicated thread that owns the connection, fed through a channel.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.inner.path).finish()
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path`, migrates it, and
    /// runs `PRAGMA integrity_check` when the previous run did not shut down cleanly.
    /// Blocking: call it at start-up or from `spawn_blocking`.
    pub fn open(path: &Path, settings: StoreSettings) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir { path: dir.to_path_buf(), source })?;
            }
        }
        let mut conn = Connection::open(path)
            .map_err(|source| StoreError::Open { path: path.to_path_buf(), source }.about_file(path))?;
        // A file that is not a database (or is damaged) shows at the first statement.
        let integrity_checked = prepare(&mut conn, path, &settings).map_err(|e| e.about_file(path))?;
        let (sender, receiver) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("tinycoder-store".into())
            .spawn(move || {
                while let Ok(job) = receiver.recv() {
                    job(&mut conn);
                }
                if let Err(e) = set_meta(&conn, "clean_shutdown", "1") {
                    tracing::warn!("could not record the store's clean shutdown: {e}");
                }
            })
            .map_err(|e| StoreError::Conflict(format!("cannot start the store thread: {e}")))?;
        Ok(Store {
            inner: Arc::new(Inner {
                sender: Mutex::new(Some(sender)),
                thread: Mutex::new(Some(thread)),
                path: path.to_path_buf(),
                settings,
                integrity_checked,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The settings it was opened with.
    pub fn settings(&self) -> &StoreSettings {
        &self.inner.settings
    }

    /// True when opening ran `PRAGMA integrity_check` (the last run did not shut down cleanly) and it passed.
    pub fn integrity_checked(&self) -> bool {
        self.inner.integrity_checked
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        let guard = self.inner.sender.lock().map_err(|_| StoreError::Closed)?;
        guard.as_ref().ok_or(StoreError::Closed)?.send(job).map_err(|_| StoreError::Closed)
    }

    /// Runs `f` on the store thread and awaits its result (never blocks the caller's thread).
    pub async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Box::new(move |conn| {
            let _ = tx.send(f(conn));
        }))?;
        let result = rx.await.map_err(|_| StoreError::Closed)?;
        result.map_err(|e| self.explain(e))
    }

    /// Like [`Store::call`], blocking the current thread (for non-async callers; never on an async worker).
    pub fn call_blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        self.send(Box::new(move |conn| {
            let _ = tx.send(f(conn));
        }))?;
        let result = rx.recv().map_err(|_| StoreError::Closed)?;
        result.map_err(|e| self.explain(e))
    }

    /// Turns "disk full", "not a database" and "damaged" into errors that name the file and the fix.
    fn explain(&self, e: StoreError) -> StoreError {
        e.about_file(&self.inner.path)
    }

    /// Runs `PRAGMA integrity_check` now; `Ok(())` when it says "ok".
    pub async fn integrity_check(&self) -> Result<(), StoreError> {
        let path = self.inner.path.clone();
        self.call(move |conn| integrity_check(conn, &path)).await
    }
}

/// Pragmas, migrations and the clean-shutdown check; returns whether the integrity check ran.
fn prepare(conn: &mut Connection, path: &Path, settings: &StoreSettings) -> Result<bool, StoreError> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!("SQLite refused WAL mode for {} (got {mode})", path.display());
    }
    let sync = match settings.synchronous {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    };
    conn.execute_batch(&format!("PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON;"))?;
    migrate(conn, path)?;
    let was_clean = get_meta(conn, "clean_shutdown")?.map(|v| v == "1").unwrap_or(true);
    let checked = if was_clean {
        false
    } else {
        tracing::warn!("the previous run did not close {} cleanly; checking its integrity", path.display());
        integrity_check(conn, path)?;
        true
    };
    set_meta(conn, "clean_shutdown", "0")?;
    Ok(checked)
}

fn integrity_check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let rows: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    if rows.len() == 1 && rows[0] == "ok" {
        Ok(())
    } else {
        Err(StoreError::Corrupt { path: path.to_path_buf(), details: rows.join("; ") })
    }
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    // The version is read inside an IMMEDIATE transaction, so two processes (or two
    // handles) opening a fresh database one after the other migrate it exactly once.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found: version, known });
    }
    if version == known {
        return Ok(());
    }
    for sql in MIGRATIONS.iter().skip(version as usize) {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    tracing::info!("migrated {} from schema version {version} to {known}", path.display());
    Ok(())
}

fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

/// The current schema version this code creates.
pub fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn opens_migrates_and_checks_integrity_only_after_unclean_shutdown() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        let store = Store::open(&path, StoreSettings::default()).expect("open");
        assert!(!store.integrity_checked());
        let (version, mode, fts) = store
            .call(|c| {
                let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let m: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                let f: i64 = c.query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| r.get(0))?;
                Ok((v, m, f))
            })
            .await
            .expect("query");
        assert_eq!(version, schema_version());
        assert_eq!(mode, "wal");
        assert_eq!(fts, 1, "bundled SQLite must have FTS5");
        drop(store);
        // Clean close: no check on the next open.
        let store = Store::open(&path, StoreSettings::default()).expect("reopen");
        assert!(!store.integrity_checked());
        // Simulate a crash: the marker stays "0" as a killed process leaves it.
        store
            .call(|c| Ok(c.execute("UPDATE meta SET value = '0' WHERE key = 'clean_shutdown'", [])?))
            .await
            .expect("mark");
        std::mem::forget(store);
        let store = Store::open(&path, StoreSettings::default()).expect("reopen after crash");
        assert!(store.integrity_checked());
    }

    #[test]
    fn a_file_that_is_not_a_database_is_reported_with_its_path_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        let garbage: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        std::fs::write(&path, &garbage).expect("garbage");
        let err = Store::open(&path, StoreSettings::default()).expect_err("not a database");
        assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()) && text.contains("move it away or delete it"), "{text}");
        assert_eq!(std::fs::read(&path).expect("still there"), garbage, "the user's file is never replaced");
    }

    #[test]
    fn a_data_directory_under_a_file_names_the_folder_and_the_fix() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("file.txt"), "x").expect("file");
        let path = dir.path().join("file.txt/data/db.sqlite3");
        let err = Store::open(&path, StoreSettings::default()).expect_err("not a directory");
        assert!(matches!(err, StoreError::Dir { .. }), "{err:?}");
        assert!(err.to_string().contains("TINYCODER_DATA_DIR"), "{err}");
    }

    #[test]
    fn refuses_a_database_from_a_newer_tinycoder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        let conn = Connection::open(&path).expect("open");
        conn.pragma_update(None, "user_version", 999).expect("set version");
        drop(conn);
        let err = Store::open(&path, StoreSettings::default()).expect_err("too new");
        assert!(matches!(err, StoreError::TooNew { found: 999, .. }), "{err}");
    }
}
