//! The files as earlier steps of a plan left them: the user's view with each
//! finished step's changes on top. A step's coder and tests see this view; the
//! user's files are untouched until the whole patch is accepted.

use crate::agent::SourceView;
use crate::sandbox::BufferOverlay;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The user's files with pending changes laid over them.
pub struct LayeredSources {
    base: Arc<dyn SourceView>,
    /// Workspace-relative path → text after the steps so far ("" for a file being created).
    changed: BTreeMap<String, String>,
}

impl LayeredSources {
    /// `changed` over `base`.
    pub fn new(base: Arc<dyn SourceView>, changed: BTreeMap<String, String>) -> Self {
        Self { base, changed }
    }
}

impl SourceView for LayeredSources {
    fn read(&self, rel: &str) -> Option<String> {
        self.changed.get(rel).cloned().or_else(|| self.base.read(rel))
    }

    fn overlays(&self) -> Vec<BufferOverlay> {
        let mut out: Vec<BufferOverlay> = self
            .base
            .overlays()
            .into_iter()
            .filter(|o| !self.changed.contains_key(&*o.rel_path.to_string_lossy()))
            .collect();
        out.extend(self.changed.iter().map(|(p, t)| BufferOverlay { rel_path: PathBuf::from(p), text: t.clone() }));
        out
    }
}
