//! `[sandbox]` and `[permissions]`: test runs and shell commands.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[sandbox]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    pub test_command: String,
    pub wall_timeout_s: u64,
}

impl SandboxConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.wall_timeout_s == 0 {
            return Err(Invalid::new("sandbox.wall_timeout_s", 0, "a positive number of seconds"));
        }
        Ok(())
    }
}

/// `[permissions]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    pub non_interactive: String,
}

impl PermissionsConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !matches!(self.non_interactive.as_str(), "deny" | "allow") {
            return Err(Invalid::new("permissions.non_interactive", &self.non_interactive, "\"deny\" or \"allow\""));
        }
        Ok(())
    }
}
