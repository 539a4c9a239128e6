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
/// would then name another folder. Its deepest existing folder is taken
/// without links or `..` (`../cache` from a project), since the sandbox
/// rebuilds these paths inside its own root and a `..` there names another
/// place.
fn absolute(dir: std::ffi::OsString) -> PathBuf {
    let dir = PathBuf::from(dir);
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let mut existing = dir.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return dir,
        }
    }
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
    /// it names a folder (read by [`setting_path`] against `root`, as the trust check reads it).
    pub fn new(root: &Path, store_dir: &str) -> Self {
        let key = workspace_key(root);
        let data_dir = setting_path(store_dir, Some(root)).unwrap_or_else(|| data_root().join("workspaces").join(&key));
        Self { root: root.to_path_buf(), cache_dir: cache_root().join("workspaces").join(&key), data_dir }
    }
}

/// The one reading of a path-valued setting (`store.dir`, `prompts.dir`, `models.<role>.path`,
/// `backend.models_dir`, ...): trimmed; empty (or only blanks) means "not set" (`None`, the
/// built-in behaviour); `~` and `~/...` are under `$HOME`; a relative path is taken from `base`
/// (the workspace root for workspace-relative settings, the current folder when `None`);
/// `.` components and trailing separators are dropped (`..` is kept: it is not resolved
/// lexically). The workspace-trust comparison and every place that uses such a setting call
/// this, so the value compared is the value used.
pub fn setting_path(value: &str, base: Option<&Path>) -> Option<PathBuf> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let expanded = match (value, value.strip_prefix("~/")) {
        ("~", _) => home().unwrap_or_else(|| PathBuf::from(value)),
        (_, Some(rest)) => home().map(|h| h.join(rest)).unwrap_or_else(|| PathBuf::from(value)),
        _ => PathBuf::from(value),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        match base {
            Some(b) => b.join(expanded),
            None => std::path::absolute(&expanded).unwrap_or(expanded),
        }
    };
    let normal: PathBuf = joined.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect();
    Some(if normal.as_os_str().is_empty() { PathBuf::from(".") } else { normal })
}

/// The most bytes tinycoder reads from one settings file (its config files, `trust.json`,
/// a prompt override). A fixed constant, not a setting: the cap for reading the config
/// cannot come from the config.
pub const SETTINGS_FILE_CAP: u64 = 1024 * 1024;

/// A settings file that is not a readable regular file of sensible size.
#[derive(Debug, thiserror::Error)]
pub enum SettingsFileError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{path} is not a regular file (it is {kind}); tinycoder reads settings only from regular files: \
         replace it with a file or remove it"
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{path} is larger than {cap} bytes; tinycoder reads settings files only up to that size: shorten or remove it"
    )]
    TooLarge { path: PathBuf, cap: u64 },
}

/// The bytes of the settings file `path` (a symbolic link is followed to what it names);
/// `Ok(None)` when there is none. Refused, without blocking, when it is not a regular file
/// (a FIFO, a device such as `/dev/zero`, a folder) or holds more than [`SETTINGS_FILE_CAP`].
pub fn read_settings_file(path: &Path) -> Result<Option<Vec<u8>>, SettingsFileError> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let read_err = |source| SettingsFileError::Read { path: path.to_path_buf(), source };
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer;
    // a regular file ignores the flag.
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Ok(None)
        }
        Err(e) => return Err(read_err(e)),
    };
    let meta = file.metadata().map_err(read_err)?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a folder"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a plain file"
        };
        return Err(SettingsFileError::NotRegular { path: path.to_path_buf(), kind });
    }
    if meta.len() > SETTINGS_FILE_CAP {
        return Err(SettingsFileError::TooLarge { path: path.to_path_buf(), cap: SETTINGS_FILE_CAP });
    }
    let mut bytes = Vec::new();
    file.take(SETTINGS_FILE_CAP + 1).read_to_end(&mut bytes).map_err(read_err)?;
    if bytes.len() as u64 > SETTINGS_FILE_CAP {
        return Err(SettingsFileError::TooLarge { path: path.to_path_buf(), cap: SETTINGS_FILE_CAP });
    }
    Ok(Some(bytes))
}

/// A file the agent is to write, refused: it would land outside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutsideWorkspace {
    #[error(
        "`{path}` is not a path inside the workspace (no `..`, not absolute); tinycoder writes only files inside it"
    )]
    NotRelative { path: String },
    #[error(
        "`{path}` goes through the symbolic link `{link}` -> {target}, outside the workspace {root}; \
         tinycoder writes only inside the workspace, so nothing of this patch was written"
    )]
    ThroughLink { path: String, link: String, target: PathBuf, root: PathBuf },
    #[error(
        "`{path}` goes through the symbolic link `{link}`, whose target {target} does not resolve; \
         tinycoder does not write through a link it cannot follow to a place inside the workspace, \
         so nothing of this patch was written"
    )]
    BrokenLink { path: String, link: String, target: PathBuf },
    #[error(
        "cannot check where `{path}` leads under the workspace {root}: {message}; nothing of this patch was written"
    )]
    Unchecked { path: String, root: PathBuf, message: String },
}

/// Where the workspace-relative `rel` is written under `root`, refusing a path that leaves
/// the workspace: `..` or absolute, or through a symbolic link (any component, the file
/// itself included) whose target resolves outside `root`. A link whose target stays inside
/// the workspace (`lib -> ./src`) is followed; a link whose target does not resolve is
/// refused. Components that do not exist yet (a file or folders the patch creates) end the
/// walk: they will be made inside the last one that exists, which is inside.
///
/// Returns `root.join(rel)` (the path as the user's editor knows it, not the resolved one).
/// Every write of the agent (the CLI's `--yes`, ACP writes, the LSP's workspace edits, undo
/// restores) goes through this check first. It checks at the time of the call; a process
/// racing to swap a folder for a link between the check and the write is not defended against.
pub fn resolve_inside(root: &Path, rel: &str) -> Result<PathBuf, OutsideWorkspace> {
    use std::path::Component;
    let p = Path::new(rel);
    if rel.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(OutsideWorkspace::NotRelative { path: rel.to_string() });
    }
    let unchecked =
        |message: String| OutsideWorkspace::Unchecked { path: rel.to_string(), root: root.to_path_buf(), message };
    let real_root = root.canonicalize().map_err(|e| unchecked(format!("the workspace folder: {e}")))?;
    let mut cur = root.to_path_buf();
    let mut shown = PathBuf::new();
    for c in p.components() {
        let Component::Normal(name) = c else { continue };
        cur.push(name);
        shown.push(name);
        let meta = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => break,
            Err(e) => return Err(unchecked(format!("{}: {e}", shown.display()))),
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let link = shown.to_string_lossy().into_owned();
        match cur.canonicalize() {
            Ok(target) if target.starts_with(&real_root) => {}
            Ok(target) => {
                return Err(OutsideWorkspace::ThroughLink { path: rel.to_string(), link, target, root: real_root })
            }
            Err(_) => {
                let target = std::fs::read_link(&cur).unwrap_or_default();
                return Err(OutsideWorkspace::BrokenLink { path: rel.to_string(), link, target });
            }
        }
    }
    Ok(root.join(rel))
}

/// [`resolve_inside`] for every path of one patch, all before anything is written: the
/// first refusal refuses the whole patch.
pub fn resolve_all_inside<'a>(
    root: &Path,
    rels: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<PathBuf>, OutsideWorkspace> {
    rels.into_iter().map(|r| resolve_inside(root, r)).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_setting_path_is_trimmed_expanded_and_taken_from_its_base() {
        let root = Path::new("/ws");
        for blank in ["", " ", "\t ", "  \n"] {
            assert_eq!(setting_path(blank, Some(root)), None, "{blank:?}");
        }
        assert_eq!(setting_path("./", Some(root)), Some(PathBuf::from("/ws")));
        assert_eq!(setting_path(".", Some(root)), Some(PathBuf::from("/ws")));
        assert_eq!(setting_path("  .tinycoder-data ", Some(root)), Some(PathBuf::from("/ws/.tinycoder-data")));
        assert_eq!(setting_path("./a/./b/", Some(root)), Some(PathBuf::from("/ws/a/b")));
        assert_eq!(setting_path("/abs/x", Some(root)), Some(PathBuf::from("/abs/x")));
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(setting_path("~", Some(root)), Some(PathBuf::from(&home)));
            assert_eq!(setting_path(" ~/m ", Some(root)), Some(PathBuf::from(home).join("m")));
        }
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(setting_path("rel", None), Some(cwd.join("rel")));
    }

    #[test]
    fn the_store_is_opened_where_the_setting_path_says() {
        // The store-opening code and the trust check read `store.dir` with the same function.
        let root = Path::new("/ws");
        for v in ["", " ", "./", "  .tinycoder-data ", "/elsewhere", "~/d"] {
            let want =
                setting_path(v, Some(root)).unwrap_or_else(|| data_root().join("workspaces").join(workspace_key(root)));
            assert_eq!(WorkspacePaths::new(root, v).data_dir, want, "{v:?}");
        }
    }

    #[test]
    fn settings_files_must_be_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.toml");
        std::fs::write(&ok, "a = 1\n").unwrap();
        assert_eq!(read_settings_file(&ok).unwrap().unwrap(), b"a = 1\n");
        let link = dir.path().join("link.toml");
        symlink(&ok, &link).unwrap();
        assert!(read_settings_file(&link).unwrap().is_some(), "a link to a regular file is read");
        assert!(read_settings_file(&dir.path().join("none")).unwrap().is_none());
        let zero = dir.path().join("zero.toml");
        symlink("/dev/zero", &zero).unwrap();
        let err = read_settings_file(&zero).unwrap_err().to_string();
        assert!(err.contains("zero.toml") && err.contains("a device"), "{err}");
        let fifo = dir.path().join("fifo.toml");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_settings_file(&fifo).unwrap_err().to_string();
        assert!(err.contains("fifo.toml") && err.contains("a FIFO"), "{err}");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; SETTINGS_FILE_CAP as usize + 1]).unwrap();
        let err = read_settings_file(&big).unwrap_err().to_string();
        assert!(err.contains("big.toml") && err.contains("larger than"), "{err}");
    }

    #[test]
    fn writes_through_a_link_out_of_the_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, ws.join("link")).unwrap();
        symlink("./src", ws.join("lib")).unwrap();
        symlink(outside.join("f.py"), ws.join("file_link.py")).unwrap();
        symlink(dir.path().join("nowhere"), ws.join("dangling")).unwrap();
        let err = resolve_inside(&ws, "link/x").unwrap_err();
        assert!(matches!(&err, OutsideWorkspace::ThroughLink { link, .. } if link == "link"), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("`link/x`") && msg.contains("`link`") && msg.contains("outside"), "{msg}");
        assert!(msg.contains(&outside.canonicalize().unwrap().display().to_string()), "{msg}");
        assert!(resolve_inside(&ws, "link/deep/er/x.py").is_err());
        assert!(resolve_inside(&ws, "./link/x").is_err());
        assert!(resolve_inside(&ws, "file_link.py").is_err(), "a link to a file outside");
        assert!(matches!(resolve_inside(&ws, "dangling/x"), Err(OutsideWorkspace::BrokenLink { .. })));
        assert!(matches!(resolve_inside(&ws, "../x"), Err(OutsideWorkspace::NotRelative { .. })));
        assert!(matches!(resolve_inside(&ws, "/etc/x"), Err(OutsideWorkspace::NotRelative { .. })));
        // Inside stays allowed: plain paths, new folders, and a link whose target is inside.
        assert_eq!(resolve_inside(&ws, "src/a.py").unwrap(), ws.join("src/a.py"));
        assert_eq!(resolve_inside(&ws, "new/dir/a.py").unwrap(), ws.join("new/dir/a.py"));
        assert_eq!(resolve_inside(&ws, "lib/a.py").unwrap(), ws.join("lib/a.py"));
        assert!(resolve_all_inside(&ws, ["src/a.py", "link/x"]).is_err(), "one refusal refuses the patch");
    }
}
