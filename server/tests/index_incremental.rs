//! Incremental indexing: open buffers, deletes, renames, the watcher, warm starts.
//! Run: cargo test --test index_incremental

use std::path::Path;
use std::time::{Duration, Instant};
use tinycoder::config::{ConfigInputs, IndexConfig, LoadedConfig};
use tinycoder::index::WorkspaceIndex;
use tokio_util::sync::CancellationToken;

fn cfg(watch: bool) -> IndexConfig {
    let mut c = LoadedConfig::load(&ConfigInputs::default()).unwrap().config.index;
    c.watch = watch;
    c
}

fn found(idx: &WorkspaceIndex, q: &str) -> Vec<String> {
    idx.search(q, 10).unwrap().into_iter().filter(|h| h.symbol == q).map(|h| h.path).collect()
}

/// Polls `cond` until it holds or `limit` passes; returns the time it took.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn setup(watch: bool) -> (tempfile::TempDir, tempfile::TempDir, WorkspaceIndex) {
    let ws = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "def alpha_start():\n    return 1\n").unwrap();
    std::fs::write(ws.path().join("b.py"), "def giraffe_unique():\n    return 2\n").unwrap();
    std::fs::create_dir(ws.path().join("pkg")).unwrap();
    std::fs::write(ws.path().join("pkg/c.rs"), "pub fn crab_walk() {}\n").unwrap();
    let idx = WorkspaceIndex::open(ws.path(), cache.path(), &cfg(watch)).unwrap();
    idx.index_all(|_| {}, &CancellationToken::new()).unwrap();
    (ws, cache, idx)
}

#[test]
fn buffer_edit_is_searchable_within_one_debounce_period() {
    let (ws, _c, idx) = setup(false);
    let debounce = Duration::from_millis(cfg(false).debounce_ms);
    let sent = Instant::now();
    idx.update_buffer(
        &ws.path().join("a.py"),
        "def alpha_start():\n    return 1\n\ndef zebra_quux_handler():\n    pass\n",
    );
    // update_buffer is a channel send: it returns long before the debounce ends.
    assert!(sent.elapsed() < debounce);
    assert!(found(&idx, "zebra_quux_handler").is_empty(), "indexed before the debounce period");
    // Debounce + commit; the limit is generous because the test machine is shared.
    let took = wait_for(debounce * 20, || found(&idx, "zebra_quux_handler") == ["a.py"]);
    eprintln!("buffer edit searchable after {took:?} (debounce {debounce:?})");
    assert!(took.is_some(), "buffer edit never became searchable");
    assert!(idx.file_text("a.py").unwrap().contains("zebra"));
    idx.close_buffer(&ws.path().join("a.py"));
    idx.flush().unwrap();
    assert!(found(&idx, "zebra_quux_handler").is_empty());
    assert_eq!(found(&idx, "alpha_start"), ["a.py"]);
}

#[test]
fn delete_and_rename_leave_nothing_stale() {
    let (ws, _c, idx) = setup(false);
    std::fs::remove_file(ws.path().join("b.py")).unwrap();
    idx.file_deleted(Path::new("b.py"));
    std::fs::rename(ws.path().join("a.py"), ws.path().join("renamed.py")).unwrap();
    idx.file_renamed(Path::new("a.py"), Path::new("renamed.py"));
    std::fs::remove_dir_all(ws.path().join("pkg")).unwrap();
    idx.file_deleted(Path::new("pkg"));
    idx.flush().unwrap();
    assert!(found(&idx, "giraffe_unique").is_empty());
    assert_eq!(found(&idx, "alpha_start"), ["renamed.py"]);
    assert!(found(&idx, "crab_walk").is_empty());
    for gone in ["a.py", "b.py", "pkg/c.rs"] {
        assert_eq!(idx.store().chunks_of(gone).unwrap(), 0, "{gone}");
        assert!(idx.with_files(|t| !t.files.contains_key(gone)), "{gone} still in the file table");
    }
}

#[test]
fn watcher_sees_changes_on_disk() {
    let (ws, _c, idx) = setup(true);
    std::fs::write(ws.path().join("new_file.py"), "def okapi_from_disk():\n    pass\n").unwrap();
    std::fs::remove_file(ws.path().join("b.py")).unwrap();
    let limit = Duration::from_secs(20);
    assert!(
        wait_for(limit, || found(&idx, "okapi_from_disk") == ["new_file.py"]).is_some(),
        "created file not indexed"
    );
    assert!(wait_for(limit, || found(&idx, "giraffe_unique").is_empty()).is_some(), "deleted file still indexed");
}

#[test]
fn restart_reindexes_only_changed_files_and_forgets_deleted_ones() {
    let (ws, cache, idx) = setup(false);
    drop(idx);
    std::fs::write(ws.path().join("a.py"), "def alpha_changed():\n    return 3\n").unwrap();
    std::fs::remove_file(ws.path().join("b.py")).unwrap();
    let idx = WorkspaceIndex::open(ws.path(), cache.path(), &cfg(false)).unwrap();
    let s = idx.index_all(|_| {}, &CancellationToken::new()).unwrap();
    assert_eq!((s.indexed, s.unchanged, s.removed), (1, 1, 1), "{s:?}");
    assert_eq!(found(&idx, "alpha_changed"), ["a.py"]);
    assert!(found(&idx, "alpha_start").is_empty() && found(&idx, "giraffe_unique").is_empty());
}

#[test]
fn editor_updates_defer_the_table_save_and_a_crash_means_a_full_reindex() {
    let (ws, cache, idx) = setup(false);
    let marker = cache.path().join("files.unsaved");
    idx.update_buffer(&ws.path().join("a.py"), "def alpha_start():\n    return 9\n");
    idx.flush().unwrap();
    assert!(marker.exists(), "a buffer commit must mark the table as behind the index");
    drop(idx);
    assert!(!marker.exists(), "closing the index must save the table");
    // A crash leaves the marker: the table is not trusted, everything is reindexed, nothing stale survives.
    std::fs::write(&marker, b"").unwrap();
    std::fs::remove_file(ws.path().join("b.py")).unwrap();
    let idx = WorkspaceIndex::open(ws.path(), cache.path(), &cfg(false)).unwrap();
    let s = idx.index_all(|_| {}, &CancellationToken::new()).unwrap();
    assert_eq!((s.indexed, s.unchanged), (2, 0), "{s:?}");
    assert!(found(&idx, "giraffe_unique").is_empty());
    assert_eq!(idx.store().num_chunks() as usize, s.chunks);
}
