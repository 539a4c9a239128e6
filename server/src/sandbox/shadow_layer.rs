//! The layered shadow: the workspace as the read-only lower layer of an overlay mounted in the
//! run's own mount namespace, with the shadow's changes (editor buffers, the patch) and every
//! write of the run in an upper layer under the cache. Nothing is copied, so a shadow of a large
//! tree costs three `mkdir`s; the workspace itself is never visible to the run except through the
//! overlay, which copies a file up before any change (contents, mode, owner, times, xattrs).

use super::mechanisms::{self, names, ChildPlan, UserMap, WritePlan};
use super::mount_plan::{MountPlan, TmpfsSize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The overlay one run mounts at `at` (the shadow tree's path): `lower` read-only beneath `upper`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShadowLayer {
    /// The real workspace (never written: the overlay copies up first).
    pub lower: PathBuf,
    /// The shadow's own files and the run's writes.
    pub upper: PathBuf,
    /// The overlay's work directory (same filesystem as `upper`).
    pub work: PathBuf,
    /// Where the merged tree appears in the run.
    pub at: PathBuf,
}

impl ShadowLayer {
    /// The overlay mount options; `user_ns` adds `userxattr` (an overlay mounted in a user namespace).
    pub fn mount_data(&self, user_ns: bool) -> String {
        let mut data = format!(
            "lowerdir={},upperdir={},workdir={}",
            self.lower.display(),
            self.upper.display(),
            self.work.display()
        );
        if user_ns {
            data.push_str(",userxattr");
        }
        data
    }
}

/// Characters the overlay's option string gives a meaning to; a path holding one is not layered.
fn plain_for_overlay(p: &Path) -> bool {
    let s = p.as_os_str().as_encoded_bytes();
    p.is_absolute() && !s.iter().any(|b| matches!(b, b',' | b':' | b'\\' | b'\n'))
}

/// Why a workspace is shadowed by copies instead of a layer, or `None` when a layer works here.
pub fn layer_unavailable(source: &Path, cache_dir: &Path) -> Option<String> {
    let caps = mechanisms::capabilities();
    if caps.disabled.iter().any(|d| d == names::LAYERED_SHADOW) {
        return Some(format!("{} is switched off", names::LAYERED_SHADOW));
    }
    if !caps.mount_ns || !(caps.is_root || caps.user_ns) {
        return Some("no mount namespace to mount the overlay in".into());
    }
    let _ = std::fs::create_dir_all(cache_dir.join("shadows"));
    let (Ok(source), Ok(cache)) = (source.canonicalize(), cache_dir.canonicalize()) else {
        return Some("the workspace or the cache folder cannot be resolved".into());
    };
    if cache.starts_with(&source) || source.starts_with(&cache) {
        // The overlay refuses an upper layer inside its lower one.
        return Some("the cache folder lies inside the workspace (or the workspace inside it)".into());
    }
    if !plain_for_overlay(&source) || !plain_for_overlay(&cache) {
        return Some("the workspace or cache path holds ',', ':' or '\\'".into());
    }
    // Per workspace and cache: either filesystem may refuse to be a layer (NFS, FUSE, ecryptfs).
    static PROBED: OnceLock<Mutex<HashMap<(PathBuf, PathBuf), bool>>> = OnceLock::new();
    let probed = PROBED.get_or_init(Default::default);
    let key = (source.clone(), cache.clone());
    let known = probed.lock().ok().and_then(|m| m.get(&key).copied());
    let works = known.unwrap_or_else(|| {
        let works = probe_overlay(&source, &cache);
        if let Ok(mut m) = probed.lock() {
            m.insert(key, works);
        }
        works
    });
    (!works).then(|| "the kernel refused an overlay of the workspace with its upper layer in the cache folder".into())
}

/// Mounts the workspace read-only beneath a scratch upper layer under `cache` in a throw-away
/// child with its own mount namespace (nothing is written to the workspace).
fn probe_overlay(source: &Path, cache: &Path) -> bool {
    let scratch = cache.join("shadows").join(format!(".layer-probe-{}-{}", std::process::id(), uuid::Uuid::new_v4()));
    let layer = ShadowLayer {
        lower: source.to_path_buf(),
        upper: scratch.join("upper"),
        work: scratch.join("work"),
        at: scratch.join("tree"),
    };
    let made = [&layer.upper, &layer.work, &layer.at].iter().all(|d| std::fs::create_dir_all(d).is_ok());
    let caps = mechanisms::capabilities();
    let works = made && {
        let plan = WritePlan { dirs: vec![layer.at.clone()], layer: Some(layer.clone()), ..WritePlan::default() };
        match MountPlan::build(&plan, false, TmpfsSize { mb: 1 }) {
            Ok(m) => {
                let mut p = ChildPlan::bare();
                p.userns = (!caps.is_root).then(UserMap::current);
                p.unshare_flags = libc::CLONE_NEWNS;
                p.mounts = Some(m);
                mechanisms::probe_spawn(p)
            }
            Err(e) => {
                tracing::debug!("no mount plan for the overlay probe: {e}");
                false
            }
        }
    };
    let _ = super::shadow::remove_tree(&scratch);
    if !works {
        tracing::info!(cache = %cache.display(), "overlay mounts do not work here: shadows are copies");
    }
    works
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_strings_name_the_layers_and_refuse_separator_characters() {
        let l = ShadowLayer { lower: "/ws".into(), upper: "/c/u".into(), work: "/c/w".into(), at: "/c/t".into() };
        assert_eq!(l.mount_data(false), "lowerdir=/ws,upperdir=/c/u,workdir=/c/w");
        assert!(l.mount_data(true).ends_with(",userxattr"));
        assert!(plain_for_overlay(Path::new("/home/me/project")));
        for odd in ["/a,b", "/a:b", "/a\\b", "relative"] {
            assert!(!plain_for_overlay(Path::new(odd)), "{odd}");
        }
    }

    #[test]
    fn a_cache_inside_the_workspace_is_shadowed_by_copies() {
        let ws = tempfile::tempdir().unwrap();
        let cache = ws.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        let why = layer_unavailable(ws.path(), &cache).expect("no layer");
        assert!(why.contains("inside") || why.contains("mount namespace") || why.contains("switched off"), "{why}");
    }
}
