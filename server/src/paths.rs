//! Where tinycoder keeps its files: the user config file, and per-workspace
//! cache and data directories (never inside the repository unless configured).

use std::path::{Path, PathBuf};

/// Environment variable overriding the cache root (tests use it to stay hermetic).
pub const ENV_CACHE_DIR: &str = "TINYCODER_CACHE_DIR";
/// Environment variable overriding the data root.
pub const ENV_DATA_DIR: &str = "TINYCODER_DATA_DIR";

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "tinycoder")
}

/// `$XDG_CONFIG_HOME/tinycoder/tinycoder.toml`.
pub fn user_config_file() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("tinycoder.toml"))
}

/// The root of tinycoder's cache (`$TINYCODER_CACHE_DIR` or `$XDG_CACHE_HOME/tinycoder`).
pub fn cache_root() -> PathBuf {
    std::env::var_os(ENV_CACHE_DIR)
        .map(absolute)
        .or_else(|| project_dirs().map(|d| d.cache_dir().to_path_buf()))
        .unwrap_or_else(|| std::env::temp_dir().join("tinycoder-cache"))
}

/// The root of tinycoder's data (`$TINYCODER_DATA_DIR` or `$XDG_DATA_HOME/tinycoder`).
pub fn data_root() -> PathBuf {
    std::env::var_os(ENV_DATA_DIR)
        .map(absolute)
        .or_else(|| project_dirs().map(|d| d.data_dir().to_path_buf()))
        .unwrap_or_else(|| std::env::temp_dir().join("tinycoder-data"))
}

/// A directory given in the environment, made absolute against the current
/// directory: the shadow workspace runs tests elsewhere, and a relative root
/// would then name another folder.
fn absolute(dir: std::ffi::OsString) -> PathBuf {
    let dir = PathBuf::from(dir);
    std::path::absolute(&dir).unwrap_or(dir)
}

/// A stable directory name for a workspace: its folder name plus a hash of its canonical path.
pub fn workspace_key(root: &Path) -> String {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect())
        .unwrap_or_default();
    let hash = xxhash_rust::xxh3::xxh3_64(canonical.as_os_str().as_encoded_bytes());
    format!("{}-{:016x}", if name.is_empty() { "root" } else { &name }, hash)
}

/// Per-workspace directories.
#[derive(Debug, Clone)]
pub struct WorkspacePaths {
    /// The workspace root as given.
    pub root: PathBuf,
    /// Cache: index, shadow workspaces, build artefacts (safe to delete).
    pub cache_dir: PathBuf,
    /// Data: the SQLite store (events, memory, decisions).
    pub data_dir: PathBuf,
}

impl WorkspacePaths {
    /// Paths for `root`; `store_dir` (config `store.dir`) overrides the data directory when
    /// non-empty, a relative one taken from `root`.
    pub fn new(root: &Path, store_dir: &str) -> Self {
        let key = workspace_key(root);
        let data_dir =
            if store_dir.is_empty() { data_root().join("workspaces").join(&key) } else { root.join(store_dir) };
        Self { root: root.to_path_buf(), cache_dir: cache_root().join("workspaces").join(&key), data_dir }
    }
}

/// tinycoder's own cache and data roots, to keep them out of walks of a workspace
/// that contains them (as in tests, or with `store.dir` inside the repository).
#[derive(Debug, Clone)]
pub struct OwnDirs(Vec<PathBuf>);

impl OwnDirs {
    /// The current cache and data roots, canonicalized where they exist.
    pub fn current() -> Self {
        Self([cache_root(), data_root()].into_iter().map(|d| d.canonicalize().unwrap_or(d)).collect())
    }

    /// True when the directory `dir` is (inside) one of tinycoder's own roots.
    pub fn contains_dir(&self, dir: &Path) -> bool {
        let p = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        self.0.iter().any(|d| p.starts_with(d))
    }

    /// A `WalkBuilder::filter_entry` predicate: keeps everything but tinycoder's own directories.
    pub fn keep_entry(&self, entry: &ignore::DirEntry) -> bool {
        !entry.file_type().is_some_and(|t| t.is_dir()) || !self.contains_dir(entry.path())
    }
}
