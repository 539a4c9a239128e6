//! Shared helpers for the sandbox integration tests (included with `#[path]`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tinycoder::config::{Config, ConfigInputs, LoadedConfig};

/// The built-in default configuration (no user file, no environment).
pub fn default_config() -> Config {
    let inputs = ConfigInputs::default();
    LoadedConfig::load(&inputs).expect("built-in config loads").config
}

/// Hash of every file under `root` (path → xxh3 of bytes), for before/after comparisons.
pub fn tree_hashes(root: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    for entry in ignore::WalkBuilder::new(root).standard_filters(false).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let bytes = std::fs::read(entry.path()).expect("read");
            out.insert(
                entry.path().strip_prefix(root).expect("prefix").to_path_buf(),
                xxhash_rust::xxh3::xxh3_64(&bytes),
            );
        }
    }
    out
}

/// Points the cache and data roots at one temp dir for the whole test process
/// (set once: tests run on parallel threads and must not see it change).
pub fn hermetic_dirs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let d = tempfile::tempdir().expect("tempdir").keep();
        // SAFETY: set once, before any test reads them (all callers go through this Once).
        unsafe {
            std::env::set_var("TINYCODER_CACHE_DIR", d.join("cache"));
            std::env::set_var("TINYCODER_DATA_DIR", d.join("data"));
        }
    });
}
