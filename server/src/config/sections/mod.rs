//! The typed sections of `tinycoder.toml`. Each section lives in its own file
//! so the layer that owns the setting owns its struct.

mod acp;
mod checkers;
mod completion;
mod core;
mod index;
mod memory;
mod sandbox;
mod store;
mod undo;

pub use self::core::*;
pub use acp::*;
pub use checkers::{CheckFormat, CheckerConfig, CheckersConfig};
pub use completion::*;
pub use index::*;
pub use memory::*;
pub use sandbox::*;
pub use store::*;
pub use undo::*;

use serde::{Deserialize, Serialize};

/// The whole effective configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub backend: BackendConfig,
    pub models: ModelsConfig,
    pub budget: BudgetConfig,
    pub runtime: RuntimeConfig,
    pub log: LogConfig,
    pub prompts: PromptsConfig,
    pub store: StoreConfig,
    pub index: IndexConfig,
    pub memory: MemoryConfig,
    pub sandbox: SandboxConfig,
    pub permissions: PermissionsConfig,
    pub acp: AcpConfig,
    pub undo: UndoConfig,
    pub completion: CompletionConfig,
    /// Checkers by name (`[checkers.NAME]`).
    #[serde(default)]
    pub checkers: CheckersConfig,
}

/// A semantic check failed: `key` holds `value`, but `expected` describes what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub key: String,
    pub value: String,
    pub expected: String,
}

impl Invalid {
    pub fn new(key: &str, value: impl ToString, expected: &str) -> Self {
        Self { key: key.to_string(), value: value.to_string(), expected: expected.to_string() }
    }
}

impl Config {
    /// Checks values that types alone cannot (ranges, cross-field rules).
    pub fn validate(&self) -> Result<(), Invalid> {
        self.backend.validate()?;
        for role in ModelRole::ALL {
            self.models.get(role).validate(role, &self.budget)?;
        }
        self.budget.validate()?;
        self.runtime.validate()?;
        self.store.validate()?;
        self.index.validate()?;
        self.memory.validate()?;
        self.sandbox.validate()?;
        self.permissions.validate()?;
        self.acp.validate()?;
        self.undo.validate()?;
        self.completion.validate()?;
        checkers::validate(&self.checkers)?;
        Ok(())
    }
}
