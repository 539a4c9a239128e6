//! The one-model-at-a-time gate: a per-client async lock held for each call,
//! the models this client loaded, and the priority of interactive calls over
//! background ones.
//!
//! Small machines hold one model in memory. Before a call switches to a model
//! that is not loaded, the adapter unloads models *this client loaded* until
//! fewer than `backend.max_loaded_models` of them remain (Ollama:
//! `keep_alive: 0`). Models another application loaded are never unloaded,
//! not even when this client used them too. The lock is held for the whole
//! call (until its stream ends or is dropped), so two roles never interleave
//! loads and generation on a CPU never competes with itself.
//!
//! Background calls (session summaries) take the gate only after
//! `backend.background_idle_ms` without an interactive call, and an interactive
//! call that arrives cancels the background call holding the gate, so a summary
//! never makes the user wait and never evicts the model a request is using.

use super::LlmError;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, Notify, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

/// Who a model call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Priority {
    /// Someone waits for it (chat, fix, …): goes first, cancels background work.
    #[default]
    Interactive,
    /// Nobody waits (session summaries): runs only when idle, and yields at once.
    Background,
}

/// What the gate remembers between calls.
#[derive(Debug, Default)]
pub struct GateState {
    /// Models this client has used and believes loaded, least recent first.
    pub loaded: Vec<String>,
    /// Of those, the ones another application had loaded before this client used them: never unloaded.
    pub shared: Vec<String>,
    /// The model the last interactive call used (reloaded after background work evicted it).
    pub interactive_model: Option<String>,
}

impl GateState {
    /// Records `model` as the most recently used.
    pub fn touch(&mut self, model: &str) {
        self.loaded.retain(|m| m != model);
        self.loaded.push(model.to_string());
    }

    /// Takes the server's view before a call to `model`: models gone from the server are
    /// forgotten, and `model` counts as shared when it is loaded without this client having loaded it.
    pub fn observe(&mut self, model: &str, server_loaded: &[String]) {
        self.loaded.retain(|m| server_loaded.contains(m));
        self.shared.retain(|m| server_loaded.contains(m));
        let known = self.loaded.iter().chain(&self.shared).any(|m| m == model);
        if server_loaded.iter().any(|m| m == model) && !known {
            self.shared.push(model.to_string());
        }
    }

    /// The models to unload so that `model` can load with at most `max` of this client's
    /// models loaded: the least recently used ones it loaded itself, never shared ones.
    pub fn to_unload(&self, model: &str, max: usize) -> Vec<String> {
        let mut ours: Vec<String> =
            self.loaded.iter().filter(|m| *m != model && !self.shared.contains(m)).cloned().collect();
        let mut out = Vec::new();
        while ours.len() + 1 > max && !ours.is_empty() {
            out.push(ours.remove(0));
        }
        out
    }
}

#[derive(Debug)]
struct Activity {
    /// Interactive calls waiting for the gate.
    interactive_waiting: AtomicUsize,
    /// When an interactive call last took or released the gate.
    last_interactive: std::sync::Mutex<Instant>,
    /// The cancellation of the background call holding the gate, if one does.
    background: std::sync::Mutex<Option<CancellationToken>>,
    /// Signalled whenever the gate is released.
    released: Notify,
}

/// The per-client lock around model calls.
#[derive(Debug, Clone)]
pub struct ModelGate {
    state: Arc<Mutex<GateState>>,
    activity: Arc<Activity>,
}

impl Default for ModelGate {
    fn default() -> Self {
        Self {
            state: Arc::default(),
            activity: Arc::new(Activity {
                interactive_waiting: AtomicUsize::new(0),
                last_interactive: std::sync::Mutex::new(Instant::now()),
                background: std::sync::Mutex::new(None),
                released: Notify::new(),
            }),
        }
    }
}

/// The gate, held for one call; released on drop.
#[derive(Debug)]
pub struct GateGuard {
    /// Always `Some` until dropped (taken in `drop` to release the lock before waking waiters).
    guard: Option<OwnedMutexGuard<GateState>>,
    activity: Arc<Activity>,
    priority: Priority,
}

impl GateGuard {
    /// The priority of the call holding the gate.
    pub fn priority(&self) -> Priority {
        self.priority
    }
}

impl Deref for GateGuard {
    type Target = GateState;
    fn deref(&self) -> &GateState {
        self.guard.as_deref().expect("held until dropped")
    }
}

impl DerefMut for GateGuard {
    fn deref_mut(&mut self) -> &mut GateState {
        self.guard.as_deref_mut().expect("held until dropped")
    }
}

impl Drop for GateGuard {
    fn drop(&mut self) {
        match self.priority {
            Priority::Interactive => {
                if let Ok(mut t) = self.activity.last_interactive.lock() {
                    *t = Instant::now();
                }
            }
            Priority::Background => {
                if let Ok(mut b) = self.activity.background.lock() {
                    *b = None;
                }
            }
        }
        drop(self.guard.take());
        self.activity.released.notify_waiters();
    }
}

/// Decrements the waiting count however the wait ends.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ModelGate {
    /// Waits for the gate for an interactive call (or cancellation); a background call
    /// holding it is cancelled so this one does not wait for it.
    pub async fn acquire(&self, cancel: &CancellationToken) -> Result<GateGuard, LlmError> {
        self.activity.interactive_waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.activity.interactive_waiting);
        if let Ok(background) = self.activity.background.lock() {
            if let Some(token) = background.as_ref() {
                tracing::debug!("an interactive model call pre-empts a background one");
                token.cancel();
            }
        }
        let guard = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            g = self.state.clone().lock_owned() => g,
        };
        if let Ok(mut t) = self.activity.last_interactive.lock() {
            *t = Instant::now();
        }
        Ok(GateGuard { guard: Some(guard), activity: self.activity.clone(), priority: Priority::Interactive })
    }

    /// Waits until no interactive call has run for `idle` and none waits, then takes the
    /// gate for a background call. The returned token (a child of `cancel`) is cancelled
    /// when an interactive call wants the gate: the call must stop and release it.
    pub async fn acquire_background(
        &self,
        idle: Duration,
        cancel: &CancellationToken,
    ) -> Result<(GateGuard, CancellationToken), LlmError> {
        loop {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let since = self.activity.last_interactive.lock().map(|t| t.elapsed()).unwrap_or(idle);
            let waiting = self.activity.interactive_waiting.load(Ordering::SeqCst);
            if waiting == 0 && since >= idle {
                if let Ok(guard) = self.state.clone().try_lock_owned() {
                    let token = cancel.child_token();
                    if let Ok(mut b) = self.activity.background.lock() {
                        *b = Some(token.clone());
                    }
                    let guard = GateGuard {
                        guard: Some(guard),
                        activity: self.activity.clone(),
                        priority: Priority::Background,
                    };
                    // An interactive call that arrived meanwhile wins.
                    if self.activity.interactive_waiting.load(Ordering::SeqCst) == 0 {
                        return Ok((guard, token));
                    }
                    drop(guard);
                }
            }
            let wait = idle.saturating_sub(since).max(Duration::from_millis(50));
            tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                _ = tokio::time::sleep(wait) => {}
                _ = self.activity.released.notified() => {}
            }
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
    fn switching_unloads_the_least_recent_model_this_client_loaded() {
        let mut g = GateState::default();
        g.touch("a");
        assert_eq!(g.to_unload("a", 1), Vec::<String>::new());
        assert_eq!(g.to_unload("b", 1), s(&["a"]));
        g.touch("b");
        assert_eq!(g.to_unload("a", 2), Vec::<String>::new());
        assert_eq!(g.to_unload("c", 2), s(&["a"]));
        assert_eq!(g.to_unload("c", 1), s(&["a", "b"]));
    }

    #[test]
    fn models_of_other_applications_are_never_unloaded() {
        let mut g = GateState::default();
        // "x" was loaded by someone else; this client loads "a".
        g.observe("a", &s(&["x"]));
        g.touch("a");
        g.observe("b", &s(&["x", "a"]));
        assert_eq!(g.to_unload("b", 1), s(&["a"]), "only our own model goes");
        // This client uses "x" too, which another application loaded: still not ours to unload.
        g.observe("x", &s(&["x", "a"]));
        g.touch("x");
        assert_eq!(g.shared, s(&["x"]));
        assert_eq!(g.to_unload("b", 1), s(&["a"]));
        // The server dropped "a" on its own: forgotten.
        g.observe("b", &s(&["x"]));
        assert_eq!(g.loaded, s(&["x"]));
        assert_eq!(g.to_unload("b", 1), Vec::<String>::new());
        // Once "x" is gone and this client loads it, it is ours.
        g.observe("x", &s(&[]));
        g.touch("x");
        assert!(g.shared.is_empty());
        assert_eq!(g.to_unload("b", 1), s(&["x"]));
    }

    #[tokio::test]
    async fn background_waits_for_idle_and_yields_to_interactive_calls() {
        let gate = ModelGate::default();
        let never = CancellationToken::new();
        let idle = Duration::from_millis(200);
        let held = gate.acquire(&never).await.expect("interactive");
        drop(held);
        let started = Instant::now();
        let (bg, preempt) = gate.acquire_background(idle, &never).await.expect("background");
        assert!(started.elapsed() >= Duration::from_millis(150), "waited for idle: {:?}", started.elapsed());
        assert_eq!(bg.priority(), Priority::Background);
        // An interactive call cancels the background call and gets the gate once it lets go.
        let gate2 = gate.clone();
        let interactive = tokio::spawn(async move { gate2.acquire(&CancellationToken::new()).await.map(|_| ()) });
        tokio::time::timeout(Duration::from_secs(5), preempt.cancelled()).await.expect("pre-empted");
        drop(bg);
        tokio::time::timeout(Duration::from_secs(5), interactive)
            .await
            .expect("interactive got it")
            .expect("join")
            .expect("ok");
        // Right after an interactive call, background work waits again.
        let started = Instant::now();
        let (bg, _) = gate.acquire_background(idle, &never).await.expect("background");
        assert!(started.elapsed() >= Duration::from_millis(150));
        drop(bg);
    }

    #[tokio::test]
    async fn a_cancelled_background_wait_ends() {
        let gate = ModelGate::default();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(matches!(gate.acquire_background(Duration::from_secs(60), &cancel).await, Err(LlmError::Cancelled)));
    }
}
