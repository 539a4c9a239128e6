//! `[store]`: the per-workspace SQLite database.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[store]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    pub dir: String,
    pub synchronous: String,
}

impl StoreConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !matches!(self.synchronous.as_str(), "normal" | "full") {
            return Err(Invalid::new("store.synchronous", &self.synchronous, "\"normal\" or \"full\""));
        }
        Ok(())
    }
}
