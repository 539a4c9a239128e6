//! The one-model-at-a-time gate: a per-client async lock held for each call,
//! and the list of models this client loaded, most recent last.
//!
//! Small machines hold one model in memory. Before a call switches to a model
//! that is not loaded, the adapter unloads models until fewer than
//! `backend.max_loaded_models` remain (Ollama: `keep_alive: 0`). The lock is
//! held for the whole call (until its stream ends or is dropped), so two roles
//! never interleave loads and generation on a CPU never competes with itself.

use super::LlmError;
use std::sync::Arc;
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

/// What the gate remembers between calls.
#[derive(Debug, Default)]
pub struct GateState {
    /// Models this client has used and believes loaded, least recent first.
    pub loaded: Vec<String>,
}

impl GateState {
    /// Records `model` as the most recently used.
    pub fn touch(&mut self, model: &str) {
        self.loaded.retain(|m| m != model);
        self.loaded.push(model.to_string());
    }

    /// The models to unload so that `model` can load with at most `max` loaded:
    /// the least recently used ones, from `server_loaded` (the server's view) when known.
    pub fn to_unload(
        &self,
        model: &str,
        max: usize,
        server_loaded: Option<&[String]>,
    ) -> Vec<String> {
        let mut loaded: Vec<String> = match server_loaded {
            // Order the server's list by our recency; models we never used go first.
            Some(list) => {
                let mut l: Vec<String> = list
                    .iter()
                    .filter(|m| !self.loaded.contains(m))
                    .cloned()
                    .collect();
                l.extend(self.loaded.iter().filter(|m| list.contains(m)).cloned());
                l
            }
            None => self.loaded.clone(),
        };
        loaded.retain(|m| m != model);
        let mut out = Vec::new();
        while loaded.len() + 1 > max && !loaded.is_empty() {
            out.push(loaded.remove(0));
        }
        out
    }
}

/// The per-client lock around model calls.
#[derive(Debug, Clone, Default)]
pub struct ModelGate {
    state: Arc<Mutex<GateState>>,
}

impl ModelGate {
    /// Waits for the gate (or cancellation).
    pub async fn acquire(
        &self,
        cancel: &CancellationToken,
    ) -> Result<OwnedMutexGuard<GateState>, LlmError> {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
            g = self.state.clone().lock_owned() => Ok(g),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn switching_unloads_the_least_recent_model() {
        let mut g = GateState::default();
        g.touch("a");
        assert_eq!(g.to_unload("a", 1, None), Vec::<String>::new());
        assert_eq!(g.to_unload("b", 1, None), s(&["a"]));
        g.touch("b");
        assert_eq!(g.to_unload("a", 2, None), Vec::<String>::new());
        assert_eq!(g.to_unload("c", 2, None), s(&["a"]));
    }

    #[test]
    fn the_servers_view_wins_and_foreign_models_go_first() {
        let mut g = GateState::default();
        g.touch("a");
        // The server also holds "x" (loaded by someone else) and no longer "a".
        assert_eq!(g.to_unload("b", 1, Some(&s(&["x"]))), s(&["x"]));
        assert_eq!(g.to_unload("b", 2, Some(&s(&["x", "a"]))), s(&["x"]));
        assert_eq!(g.to_unload("a", 1, Some(&s(&["x", "a"]))), s(&["x"]));
        assert_eq!(
            g.to_unload("a", 2, Some(&s(&["x", "a"]))),
            Vec::<String>::new()
        );
    }
}
