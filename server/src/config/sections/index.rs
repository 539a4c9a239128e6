//! `[index]`: the workspace index.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[index]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    pub max_file_kb: u64,
    pub debounce_ms: u64,
}

impl IndexConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.max_file_kb == 0 {
            return Err(Invalid::new("index.max_file_kb", 0, "at least 1 KiB"));
        }
        Ok(())
    }
}
