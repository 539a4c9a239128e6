//! `[store]`: the per-workspace SQLite database.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[store]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// Directory of the database; empty = the user's data directory.
    pub dir: String,
    /// SQLite `synchronous`: "normal" or "full".
    pub synchronous: String,
    /// Periodic checkpoint every this many events (0 = only at critical transitions).
    pub checkpoint_every_events: u32,
    /// Start-up policy for unfinished tasks: "resume" or "fail".
    pub on_unfinished: String,
    /// Days after which a finished task's events and checkpoints are pruned (0 = never).
    pub retention_days: u32,
    /// Newest events kept per finished task (0 = all).
    pub retention_max_events_per_task: u32,
    /// Newest checkpoints kept per task (0 = all).
    pub retention_max_checkpoints_per_task: u32,
    /// Session turns beyond this many tokens get summarized.
    pub session_history_tokens: u32,
    /// Newest turns always kept verbatim.
    pub session_keep_recent_turns: u32,
    /// Token cap of a session's running summary.
    pub session_summary_tokens: u32,
    /// Chat sessions kept in memory when the store is unavailable (least recently used go first).
    pub session_cache_sessions: u32,
    /// Messages of one session kept in memory when the store is unavailable (oldest go first).
    pub session_cache_messages: u32,
}

impl StoreConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !matches!(self.synchronous.as_str(), "normal" | "full") {
            return Err(Invalid::new("store.synchronous", &self.synchronous, "\"normal\" or \"full\""));
        }
        if !matches!(self.on_unfinished.as_str(), "resume" | "fail") {
            return Err(Invalid::new("store.on_unfinished", &self.on_unfinished, "\"resume\" or \"fail\""));
        }
        if self.session_cache_sessions == 0 || self.session_cache_messages < 2 {
            return Err(Invalid::new(
                "store.session_cache_sessions",
                format!("{} sessions of {} messages", self.session_cache_sessions, self.session_cache_messages),
                "at least 1 session and 2 messages (one exchange)",
            ));
        }
        if self.session_summary_tokens == 0 {
            return Err(Invalid::new("store.session_summary_tokens", 0, "a positive number of tokens"));
        }
        if self.session_summary_tokens >= self.session_history_tokens {
            return Err(Invalid::new(
                "store.session_summary_tokens",
                self.session_summary_tokens,
                "fewer tokens than store.session_history_tokens",
            ));
        }
        Ok(())
    }
}
