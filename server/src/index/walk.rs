//! The workspace walk: which files are indexed. Respects .gitignore,
//! `.tinycoderignore`, a size limit, and skips binary and generated files.

use crate::config::IndexConfig;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The ignore file of tinycoder itself (gitignore syntax).
pub const IGNORE_FILE: &str = ".tinycoderignore";

/// A file the walk found.
#[derive(Debug, Clone)]
pub struct WalkedFile {
    /// Path relative to the workspace root, `/`-separated.
    pub rel: String,
    /// Absolute path.
    pub abs: PathBuf,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: u64,
}

/// Why a file's content is not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Binary,
    Generated,
    TooLarge,
}

/// Rules deciding whether a file's content is indexable.
#[derive(Debug, Clone)]
pub struct ContentFilter {
    max_bytes: u64,
    minified_line_chars: usize,
    markers: Vec<String>,
}

impl ContentFilter {
    /// The filter configured by `[index]`.
    pub fn new(cfg: &IndexConfig) -> Self {
        Self {
            max_bytes: cfg.max_file_kb * 1024,
            minified_line_chars: cfg.minified_line_chars,
            markers: cfg.generated_markers.clone(),
        }
    }

    /// Decodes `bytes` as indexable text, or says why not.
    pub fn check(&self, bytes: Vec<u8>) -> Result<String, Skip> {
        if bytes.len() as u64 > self.max_bytes {
            return Err(Skip::TooLarge);
        }
        // NUL bytes near the start are the classic binary sign (git does the same).
        if bytes[..bytes.len().min(8192)].contains(&0) {
            return Err(Skip::Binary);
        }
        let text = String::from_utf8(bytes).map_err(|_| Skip::Binary)?;
        let head = &text[..floor_char_boundary(&text, 1024)];
        if self.markers.iter().any(|m| !m.is_empty() && head.contains(m.as_str())) {
            return Err(Skip::Generated);
        }
        if text.lines().any(|l| l.len() > self.minified_line_chars) {
            return Err(Skip::Generated);
        }
        Ok(text)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The `/`-separated path of `abs` relative to `root`, if it is inside.
pub fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Modification time of `meta` in nanoseconds since the epoch.
pub fn mtime_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// A walker over `root` honouring .gitignore (also outside git repos), `.tinycoderignore` and hidden files.
fn builder(root: &Path, cfg: &IndexConfig) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(true) // `ignore` detects symlink loops and reports them as errors, which we skip.
        .max_filesize(Some(cfg.max_file_kb * 1024))
        .add_custom_ignore_filename(IGNORE_FILE);
    // tinycoder's own cache and data (the index itself, shadows, SQLite) are never indexed.
    let own_dirs = crate::paths::OwnDirs::current();
    b.filter_entry(move |e| own_dirs.keep_entry(e));
    b
}

/// Every candidate file under `root` (content not yet checked), sorted by path.
pub fn walk_workspace(root: &Path, cfg: &IndexConfig) -> Vec<WalkedFile> {
    let mut out = Vec::new();
    for entry in builder(root, cfg).build() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!("walk: skipping {e}");
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let Some(rel) = relative(root, entry.path()) else {
            continue;
        };
        out.push(WalkedFile { rel, abs: entry.path().to_path_buf(), size: meta.len(), mtime_ns: mtime_ns(&meta) });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.dedup_by(|a, b| a.rel == b.rel);
    out
}

/// A matcher for single paths (the file watcher's events): the root's ignore files.
pub struct PathFilter {
    root: PathBuf,
    matchers: Vec<ignore::gitignore::Gitignore>,
    own_dirs: crate::paths::OwnDirs,
}

impl PathFilter {
    /// Reads `.gitignore` and `.tinycoderignore` at `root`.
    pub fn new(root: &Path) -> Self {
        let matchers =
            [".gitignore", IGNORE_FILE].iter().map(|f| ignore::gitignore::Gitignore::new(root.join(f)).0).collect();
        Self { root: root.to_path_buf(), matchers, own_dirs: crate::paths::OwnDirs::current() }
    }

    /// Whether a changed path may be indexed (inside the root, not hidden, not ignored).
    pub fn allows(&self, abs: &Path, is_dir: bool) -> bool {
        let Some(rel) = relative(&self.root, abs) else {
            return false;
        };
        if rel.split('/').any(|p| p.starts_with('.')) {
            return false;
        }
        // The index's own writes must not feed back into it.
        if self.own_dirs.contains_dir(abs) {
            return false;
        }
        !self.matchers.iter().any(|m| m.matched_path_or_any_parents(abs, is_dir).is_ignore())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> IndexConfig {
        crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config.index
    }

    #[test]
    fn content_filter_classifies() {
        let f = ContentFilter::new(&cfg());
        assert!(f.check(b"fn main() {}\n".to_vec()).is_ok());
        assert_eq!(f.check(b"abc\0def".to_vec()), Err(Skip::Binary));
        assert_eq!(f.check(vec![0xff, 0xfe, 0x41]), Err(Skip::Binary));
        assert_eq!(f.check(b"// @generated by protoc\nfn x() {}".to_vec()), Err(Skip::Generated));
        assert_eq!(f.check(format!("var a={};\n", "1,".repeat(2000)).into_bytes()), Err(Skip::Generated));
        assert_eq!(f.check(vec![b'a'; 600 * 1024]), Err(Skip::TooLarge));
    }

    #[test]
    fn walk_respects_ignore_files_and_survives_symlink_loops() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/gen")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join(IGNORE_FILE), "src/gen/\n").unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}").unwrap();
        std::fs::write(root.join("src/gen/b.rs"), "fn b() {}").unwrap();
        std::fs::write(root.join("target/c.rs"), "fn c() {}").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root, root.join("src/loop")).unwrap();
        let got: Vec<String> = walk_workspace(root, &cfg()).into_iter().map(|f| f.rel).collect();
        assert_eq!(got, vec!["src/a.rs".to_string()]);
        let filter = PathFilter::new(root);
        assert!(filter.allows(&root.join("src/a.rs"), false));
        assert!(!filter.allows(&root.join("target/c.rs"), false));
        assert!(!filter.allows(&root.join("src/gen/b.rs"), false));
    }
}
