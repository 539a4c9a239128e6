//! `[memory]`: long-term memory thresholds.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[memory]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    pub min_weight_for_context: f32,
}

impl MemoryConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !(0.0..=1.0).contains(&self.min_weight_for_context) {
            return Err(Invalid::new("memory.min_weight_for_context", self.min_weight_for_context, "a number from 0 to 1"));
        }
        Ok(())
    }
}
