//! `ShadowWorkspace`: a disposable copy of the workspace where patches are
//! applied and tests run. The shadow shares no inode with the real tree: every
//! file is its own copy (a reflink through the FICLONE ioctl where the
//! filesystem has copy-on-write, a plain copy otherwise), so nothing a
//! sandboxed process does to a shadow file (write, truncate, chmod, utime,
//! setxattr) reaches the workspace, even when no kernel mechanism is enforced.
//! A copy carries its source's mtime, so a refresh re-copies only files whose
//! size, mtime or mode differ.

use super::{SandboxError, ShadowLayer};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Name of the lock file holding the owner's pid inside each shadow.
const OWNER_FILE: &str = ".tinycoder-shadow-owner";
/// A shadow being created is `.staging-<pid>-<uuid>` until it holds its owner file.
const STAGING_PREFIX: &str = ".staging-";

/// A shadow copy of a workspace under `<cache>/shadows/<task id>`; removed on drop.
#[derive(Debug)]
pub struct ShadowWorkspace {
    source: PathBuf,
    root: PathBuf,
    tree: PathBuf,
    /// Files written in the shadow (real copies, not links), workspace-relative.
    owned: HashSet<PathBuf>,
    keep: bool,
    /// Set for a layered shadow: `tree` is then only a mount point, its files come from the
    /// workspace through the overlay, and the shadow's own files live in the upper layer.
    layer: Option<ShadowLayer>,
}

impl ShadowWorkspace {
    /// Creates (or reuses and refreshes) the shadow of `source` for `task_id` under `cache_dir/shadows`.
    pub fn create(source: &Path, cache_dir: &Path, task_id: &str) -> Result<Self, SandboxError> {
        let mut shadow = Self::create_empty(source, cache_dir, task_id)?;
        shadow.refresh()?;
        Ok(shadow)
    }

    /// A shadow for one sandboxed run: layered over the workspace where this machine can mount
    /// an overlay in the run's namespace (nothing copied), else [`ShadowWorkspace::create`]'s copies.
    pub fn create_for_run(source: &Path, cache_dir: &Path, task_id: &str) -> Result<Self, SandboxError> {
        if let Some(why) = super::shadow_layer::layer_unavailable(source, cache_dir) {
            tracing::debug!("shadow by copies: {why}");
            return Self::create(source, cache_dir, task_id);
        }
        let mut shadow = Self::create_empty(source, cache_dir, task_id)?;
        let layer = ShadowLayer {
            lower: source.canonicalize().map_err(|e| SandboxError::io("resolve the workspace", source, e))?,
            upper: shadow.root.join("upper"),
            work: shadow.root.join("work"),
            at: shadow.tree.clone(),
        };
        for d in [&layer.upper, &layer.work] {
            std::fs::create_dir_all(d).map_err(|e| SandboxError::io("create the shadow's layer", d, e))?;
        }
        shadow.layer = Some(layer);
        Ok(shadow)
    }

    /// The shadow's folders, without copying anything yet.
    fn create_empty(source: &Path, cache_dir: &Path, task_id: &str) -> Result<Self, SandboxError> {
        let safe_id: String =
            task_id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let shadows = cache_dir.join("shadows");
        let root = shadows.join(if safe_id.is_empty() { "task".to_string() } else { safe_id });
        let tree = root.join("tree");
        if !root.join(OWNER_FILE).is_file() {
            create_owned_dir(&shadows, &root)?;
        }
        // A reused shadow: its owner is this process now (the file is replaced in one rename).
        write_owner(&root)?;
        std::fs::create_dir_all(&tree).map_err(|e| SandboxError::io("create the shadow directory", &tree, e))?;
        Ok(Self { source: source.to_path_buf(), root, tree, owned: HashSet::new(), keep: false, layer: None })
    }

    /// The overlay a run mounts for a layered shadow (`None` for copies).
    pub fn layer(&self) -> Option<&ShadowLayer> {
        self.layer.as_ref()
    }

    /// Where this process reads the project's files as the shadow has them (test detection):
    /// the tree of a copied shadow, the workspace under a layered one (its tree is a mount point).
    pub fn project_dir(&self) -> &Path {
        match &self.layer {
            Some(_) => &self.source,
            None => &self.tree,
        }
    }

    /// Where this process writes the shadow's own files: the tree, or the upper layer.
    fn files_dir(&self) -> &Path {
        match &self.layer {
            Some(l) => &l.upper,
            None => &self.tree,
        }
    }

    /// The shadow tree (the copy of the workspace root).
    pub fn path(&self) -> &Path {
        &self.tree
    }

    /// A per-shadow scratch directory (TMPDIR for sandboxed runs).
    pub fn temp_dir(&self) -> Result<PathBuf, SandboxError> {
        let t = self.root.join("tmp");
        std::fs::create_dir_all(&t).map_err(|e| SandboxError::io("create the shadow temp dir", &t, e))?;
        Ok(t)
    }

    /// Brings the shadow in line with the workspace: copies new/changed files
    /// (size, mtime or mode differ), removes files gone from the workspace,
    /// drops earlier overlays and patches.
    pub fn refresh(&mut self) -> Result<(), SandboxError> {
        if let Some(layer) = &self.layer {
            // The workspace shows through as it is now; only the shadow's own layer is dropped.
            for d in [&layer.upper, &layer.work] {
                let _ = remove_tree(d);
                std::fs::create_dir_all(d).map_err(|e| SandboxError::io("reset the shadow's layer", d, e))?;
            }
            self.owned.clear();
            return Ok(());
        }
        let files = list_workspace_files(&self.source)?;
        let wanted: HashSet<PathBuf> = files.iter().cloned().collect();
        // Remove stale files in the shadow (build outputs in the shadow are not listed, so they go too,
        // unless ignored: we only walk what we created, i.e. paths from the previous listing or owned).
        for rel in existing_shadow_files(&self.tree) {
            if !wanted.contains(&rel) || self.owned.contains(&rel) {
                let _ = std::fs::remove_file(self.tree.join(&rel));
            }
        }
        self.owned.clear();
        let mut dirs = DirGuard::new(&self.tree);
        for rel in &files {
            let src = self.source.join(rel);
            let dst = self.tree.join(rel);
            // A directory a sandboxed run replaced by a symlink must not lead this
            // (unsandboxed) process out of the shadow.
            if let Some(parent) = rel.parent() {
                dirs.ensure(parent)?;
            }
            if up_to_date(&src, &dst) {
                continue;
            }
            match std::fs::symlink_metadata(&dst) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dst),
                Ok(_) => std::fs::remove_file(&dst),
                Err(_) => Ok(()),
            }
            .map_err(|e| SandboxError::io("remove a stale shadow file", &dst, e))?;
            copy_entry(&src, &dst).map_err(|e| SandboxError::io("copy into the shadow", &src, e))?;
        }
        Ok(())
    }

    /// Writes `bytes` to `rel` in the shadow (a new inode; the workspace file is untouched).
    pub fn write_file(&mut self, rel: &Path, bytes: &[u8]) -> Result<(), SandboxError> {
        let rel = checked_relative(rel)?;
        self.refuse_symlinked_parents(&rel)?;
        let dst = self.files_dir().join(&rel);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SandboxError::io("create a shadow directory", parent, e))?;
        }
        // Unlink, then create a new inode: the file may be a symlink a sandboxed run left.
        match std::fs::remove_file(&dst) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(SandboxError::io("unlink a shadow file", &dst, e)),
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dst)
            .map_err(|e| SandboxError::io("write a shadow file", &dst, e))?;
        f.write_all(bytes).map_err(|e| SandboxError::io("write a shadow file", &dst, e))?;
        if let Ok(meta) = std::fs::metadata(self.source.join(&rel)) {
            let _ = std::fs::set_permissions(&dst, meta.permissions());
        }
        self.owned.insert(rel);
        Ok(())
    }

    /// Overlays an unsaved editor buffer for `rel`.
    pub fn overlay(&mut self, rel: &Path, text: &str) -> Result<(), SandboxError> {
        self.write_file(rel, text.as_bytes())
    }

    /// Deletes `rel` in the shadow only.
    pub fn remove_file(&mut self, rel: &Path) -> Result<(), SandboxError> {
        let rel = checked_relative(rel)?;
        if self.layer.is_some() {
            // Hiding a lower file takes a whiteout device node, which only root may make.
            let e =
                std::io::Error::new(std::io::ErrorKind::Unsupported, "a layered shadow cannot delete a workspace file");
            return Err(SandboxError::io("remove a shadow file", &self.source.join(&rel), e));
        }
        self.refuse_symlinked_parents(&rel)?;
        let dst = self.tree.join(&rel);
        std::fs::remove_file(&dst).map_err(|e| SandboxError::io("remove a shadow file", &dst, e))?;
        self.owned.insert(rel);
        Ok(())
    }

    /// Refuses a path whose parent directories in the shadow include a symlink:
    /// this process is not sandboxed, and writing through a link could leave the shadow.
    /// A layered shadow checks the workspace too: its links show through the overlay.
    fn refuse_symlinked_parents(&self, rel: &Path) -> Result<(), SandboxError> {
        let mut bases = vec![self.files_dir().to_path_buf()];
        if self.layer.is_some() {
            bases.push(self.source.clone());
        }
        for mut at in bases {
            for c in rel.parent().into_iter().flat_map(Path::components) {
                at.push(c);
                if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(SandboxError::PathOutsideShadow(rel.to_path_buf()));
                }
            }
        }
        Ok(())
    }

    /// Absolute paths of the files written by `write_file`/`overlay` since the last refresh.
    pub fn owned_files(&self) -> Vec<PathBuf> {
        self.owned.iter().map(|r| self.files_dir().join(r)).filter(|p| p.is_file()).collect()
    }

    /// Keeps the directory on drop (for reuse by a later process; stale-cleanup still applies).
    pub fn keep_on_drop(&mut self, keep: bool) {
        self.keep = keep;
    }
}

impl Drop for ShadowWorkspace {
    fn drop(&mut self) {
        if !self.keep {
            if let Err(e) = remove_tree(&self.root) {
                tracing::warn!(dir = %self.root.display(), "could not remove shadow workspace: {e}");
            }
        }
    }
}

/// Removes a shadow folder. An overlay leaves a folder of mode 000 in its work directory,
/// which its unprivileged owner may only remove after giving itself the right to.
pub(super) fn remove_tree(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            fn open_up(dir: &Path) {
                let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
                for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        open_up(&entry.path());
                    }
                }
            }
            open_up(dir);
            std::fs::remove_dir_all(dir)
        }
        other => other,
    }
}

/// Creates `root` with its owner file already in it: the directory is built under a
/// staging name and renamed into place, so a concurrent [`cleanup_stale_shadows`] (another
/// task's shadow starting) never finds it without an owner and removes it.
fn create_owned_dir(shadows: &Path, root: &Path) -> Result<(), SandboxError> {
    std::fs::create_dir_all(shadows).map_err(|e| SandboxError::io("create the shadows directory", shadows, e))?;
    let staging = shadows.join(format!("{STAGING_PREFIX}{}-{}", std::process::id(), uuid::Uuid::new_v4()));
    std::fs::create_dir(&staging).map_err(|e| SandboxError::io("create the shadow directory", &staging, e))?;
    let placed = write_owner(&staging).and_then(|()| {
        // A leftover without an owner (an interrupted creation) is in the way of the rename.
        if root.exists() && !root.join(OWNER_FILE).is_file() {
            let _ = std::fs::remove_dir_all(root);
        }
        match std::fs::rename(&staging, root) {
            Ok(()) => Ok(()),
            // Another thread placed the same shadow first: it is reused.
            Err(_) if root.join(OWNER_FILE).is_file() => Ok(()),
            Err(e) => Err(SandboxError::io("move the new shadow into place", root, e)),
        }
    });
    if staging.exists() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    placed
}

/// Writes this process's pid as `dir`'s owner, replacing any earlier owner in one rename
/// (a reader never sees the file empty).
fn write_owner(dir: &Path) -> Result<(), SandboxError> {
    let temp = dir.join(format!("{OWNER_FILE}.{}", uuid::Uuid::new_v4()));
    std::fs::write(&temp, std::process::id().to_string())
        .and_then(|()| std::fs::rename(&temp, dir.join(OWNER_FILE)))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            SandboxError::io("write the shadow owner file", dir, e)
        })
}

/// Whether process `pid` is running.
fn alive(pid: i32) -> bool {
    pid > 0 && Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes shadows under `cache_dir/shadows` whose owner process is gone (crash leftovers),
/// and staging directories of dead processes. Returns how many were removed.
pub fn cleanup_stale_shadows(cache_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(cache_dir.join("shadows")) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let owner = match name.strip_prefix(STAGING_PREFIX) {
            Some(rest) => rest.split('-').next().and_then(|p| p.parse::<i32>().ok()),
            None => std::fs::read_to_string(dir.join(OWNER_FILE)).ok().and_then(|s| s.trim().parse::<i32>().ok()),
        };
        if !owner.is_some_and(alive) && remove_tree(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Workspace-relative paths of tracked and untracked-but-not-ignored files.
pub fn list_workspace_files(root: &Path) -> Result<Vec<PathBuf>, SandboxError> {
    let mut out = Vec::new();
    // tinycoder's own cache and data (shadows, index, SQLite) never enter a shadow.
    let own_dirs = crate::paths::OwnDirs::current();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .filter_entry(move |e| own_dirs.keep_entry(e))
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| SandboxError::Walk(e.to_string()))?;
        // Symlinks are kept as links (hard-linking a symlink links the link itself).
        if !entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()) {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(root) {
            if rel.components().next().is_some_and(|c| c.as_os_str() == ".git") {
                continue;
            }
            out.push(rel.to_path_buf());
        }
    }
    Ok(out)
}

fn existing_shadow_files(tree: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(tree).standard_filters(false).build();
    for entry in walker.flatten() {
        if entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()) {
            if let Ok(rel) = entry.path().strip_prefix(tree) {
                out.push(rel.to_path_buf());
            }
        }
    }
    out
}

/// Whether `dst` is already a copy of `src`: same kind, and for a file the same
/// size, mtime and permission bits (copies carry their source's mtime); for a
/// symlink the same target.
fn up_to_date(src: &Path, dst: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(s), Ok(d)) = (std::fs::symlink_metadata(src), std::fs::symlink_metadata(dst)) else {
        return false;
    };
    if s.file_type().is_symlink() {
        return d.file_type().is_symlink() && std::fs::read_link(src).ok() == std::fs::read_link(dst).ok();
    }
    d.file_type().is_file()
        && d.nlink() == 1
        && s.len() == d.len()
        && s.mtime() == d.mtime()
        && s.mtime_nsec() == d.mtime_nsec()
        && (s.mode() & 0o777) == (d.mode() & 0o777)
}

/// How the last file copy was made (for the benchmark and the docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// FICLONE: a copy-on-write clone sharing extents (btrfs, XFS, bcachefs...).
    Reflink,
    /// Bytes copied (copy_file_range, in-kernel).
    Copy,
}

/// Copies one workspace entry (file or symlink) to `dst`, which must not exist.
/// A file becomes a new inode with the source's permission bits (never setuid
/// or setgid) and mtime.
fn copy_entry(src: &Path, dst: &Path) -> std::io::Result<CopyKind> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = std::fs::symlink_metadata(src)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(src)?, dst)?;
        return Ok(CopyKind::Copy);
    }
    let mut from = std::fs::File::open(src)?;
    let mut to = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(dst)?;
    let kind = clone_or_copy(&mut from, &mut to)?;
    to.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(meta.mode() & 0o777))?;
    let mtime = std::time::UNIX_EPOCH + std::time::Duration::new(meta.mtime() as u64, meta.mtime_nsec() as u32);
    to.set_times(std::fs::FileTimes::new().set_modified(mtime).set_accessed(mtime))?;
    Ok(kind)
}

/// Reflinks `from` into `to` where the filesystem can (FICLONE), else copies the bytes.
fn clone_or_copy(from: &mut std::fs::File, to: &mut std::fs::File) -> std::io::Result<CopyKind> {
    use std::os::fd::AsRawFd;
    static NO_REFLINK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !NO_REFLINK.load(std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: FICLONE takes the source fd as its argument; both fds are open.
        let rc = unsafe { libc::ioctl(to.as_raw_fd(), libc::FICLONE, from.as_raw_fd()) };
        if rc == 0 {
            return Ok(CopyKind::Reflink);
        }
        let err = std::io::Error::last_os_error();
        if matches!(err.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::ENOSYS)) {
            // The filesystem has no reflinks: do not ask again for every file.
            NO_REFLINK.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    std::io::copy(from, to)?;
    Ok(CopyKind::Copy)
}

/// Creates shadow directories, replacing anything that is not a real directory
/// (a symlink a sandboxed run put there) and checking each directory once.
struct DirGuard<'a> {
    tree: &'a Path,
    checked: HashSet<PathBuf>,
}

impl<'a> DirGuard<'a> {
    fn new(tree: &'a Path) -> Self {
        Self { tree, checked: HashSet::new() }
    }

    fn ensure(&mut self, rel_dir: &Path) -> Result<(), SandboxError> {
        if rel_dir.as_os_str().is_empty() || self.checked.contains(rel_dir) {
            return Ok(());
        }
        if let Some(parent) = rel_dir.parent() {
            self.ensure(parent)?;
        }
        let at = self.tree.join(rel_dir);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&at).map_err(|e| SandboxError::io("remove a shadow entry", &at, e))?;
                std::fs::create_dir(&at).map_err(|e| SandboxError::io("create a shadow directory", &at, e))?;
            }
            Err(_) => std::fs::create_dir(&at).map_err(|e| SandboxError::io("create a shadow directory", &at, e))?,
        }
        self.checked.insert(rel_dir.to_path_buf());
        Ok(())
    }
}

fn checked_relative(rel: &Path) -> Result<PathBuf, SandboxError> {
    let ok = rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !ok || rel.as_os_str().is_empty() {
        return Err(SandboxError::PathOutsideShadow(rel.to_path_buf()));
    }
    Ok(rel.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_breaks_the_link_and_never_touches_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("src/lib.rs"), "original").unwrap();
        std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(ws.path().join("target")).unwrap();
        std::fs::write(ws.path().join("target/big"), "ignored").unwrap();
        let mut shadow = ShadowWorkspace::create(ws.path(), cache.path(), "t1").unwrap();
        assert!(!shadow.path().join("target/big").exists(), "ignored files are not copied");
        shadow.write_file(Path::new("src/lib.rs"), b"patched").unwrap();
        shadow.overlay(Path::new("src/new.rs"), "unsaved").unwrap();
        assert_eq!(std::fs::read_to_string(ws.path().join("src/lib.rs")).unwrap(), "original");
        assert_eq!(std::fs::read_to_string(shadow.path().join("src/lib.rs")).unwrap(), "patched");
        assert!(!ws.path().join("src/new.rs").exists());
        assert!(shadow.write_file(Path::new("../escape"), b"x").is_err());
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link")).unwrap();
        shadow.refresh().unwrap();
        assert!(std::fs::symlink_metadata(shadow.path().join("link")).unwrap().file_type().is_symlink());
        assert!(shadow.write_file(Path::new("link/pwned"), b"x").is_err());
        assert!(!outside.path().join("pwned").exists());
        shadow.refresh().unwrap();
        assert_eq!(std::fs::read_to_string(shadow.path().join("src/lib.rs")).unwrap(), "original");
        assert!(!shadow.path().join("src/new.rs").exists(), "refresh drops overlays");
        let root = shadow.root.clone();
        drop(shadow);
        assert!(!root.exists(), "removed on drop");
    }

    #[test]
    fn the_shadow_shares_no_inode_with_the_workspace() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let ws = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("d")).unwrap();
        std::fs::write(ws.path().join("d/a.txt"), "original").unwrap();
        let real = std::fs::metadata(ws.path().join("d/a.txt")).unwrap();
        let mut shadow = ShadowWorkspace::create(ws.path(), cache.path(), "copies").unwrap();
        let copy = shadow.path().join("d/a.txt");
        assert_eq!(std::fs::metadata(ws.path().join("d/a.txt")).unwrap().nlink(), 1, "no hard link");
        assert_eq!(std::fs::metadata(&copy).unwrap().mtime_nsec(), real.mtime_nsec(), "the copy keeps the mtime");
        // What a sandboxed test may do to its copy reaches nothing else.
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).unwrap();
        std::fs::write(&copy, "pwned").unwrap();
        let after = std::fs::metadata(ws.path().join("d/a.txt")).unwrap();
        assert_eq!((after.mode(), after.mtime_nsec()), (real.mode(), real.mtime_nsec()));
        assert_eq!(std::fs::read_to_string(ws.path().join("d/a.txt")).unwrap(), "original");
        // A refresh puts the copy back; a directory replaced by a symlink is replaced again.
        let outside = tempfile::tempdir().unwrap();
        shadow.refresh().unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "original");
        assert_eq!(std::fs::metadata(&copy).unwrap().mode() & 0o7777, real.mode() & 0o7777);
        std::fs::remove_dir_all(shadow.path().join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path(), shadow.path().join("d")).unwrap();
        shadow.refresh().unwrap();
        assert!(std::fs::symlink_metadata(shadow.path().join("d")).unwrap().is_dir());
        assert!(!outside.path().join("a.txt").exists(), "refresh followed a symlink out of the shadow");
    }

    #[test]
    fn stale_shadows_of_dead_owners_are_removed() {
        let cache = tempfile::tempdir().unwrap();
        let dead = cache.path().join("shadows/dead");
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join(OWNER_FILE), "999999999").unwrap();
        let ws = tempfile::tempdir().unwrap();
        let live = ShadowWorkspace::create(ws.path(), cache.path(), "live").unwrap();
        let dead_staging = cache.path().join(format!("shadows/{STAGING_PREFIX}999999999-x"));
        std::fs::create_dir_all(&dead_staging).unwrap();
        let live_staging = cache.path().join(format!("shadows/{STAGING_PREFIX}{}-y", std::process::id()));
        std::fs::create_dir_all(&live_staging).unwrap();
        assert_eq!(cleanup_stale_shadows(cache.path()), 2);
        assert!(!dead.exists() && !dead_staging.exists());
        assert!(live.path().exists());
        assert!(live_staging.exists(), "a shadow this process is creating is left alone");
    }

    #[test]
    fn shadows_created_while_others_clean_up_are_never_removed_half_made() {
        // Parallel plan steps each start a shadow, and each start cleans up stale ones first.
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.py"), "x = 1\n").unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (ws, cache) = (ws.path(), cache.path());
                scope.spawn(move || {
                    for i in 0..150 {
                        cleanup_stale_shadows(cache);
                        let shadow = ShadowWorkspace::create(ws, cache, &format!("t{t}-{i}"))
                            .unwrap_or_else(|e| panic!("thread {t}, shadow {i}: {e}"));
                        assert!(shadow.path().join("a.py").is_file());
                    }
                });
            }
        });
        let left: Vec<_> = std::fs::read_dir(cache.path().join("shadows")).unwrap().flatten().collect();
        assert!(left.is_empty(), "every shadow and staging directory is gone: {left:?}");
    }
}
