//! Typed configuration: built-in defaults, layered sources with provenance,
//! validation, and prompt templates.

mod layers;
mod prompts;
mod sections;

pub use layers::{ConfigError, ConfigInputs, LoadedConfig, Origin};
pub use prompts::{PromptError, PromptId, PromptLibrary};
pub use sections::*;

/// The built-in defaults: the commented `config/tinycoder.toml` of the project.
pub const DEFAULT_TOML: &str = include_str!("../../../config/tinycoder.toml");
