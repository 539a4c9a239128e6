//! Typed configuration: built-in defaults, layered sources with provenance,
//! validation, prompt templates, and workspace trust for the security keys.

mod layers;
mod prompts;
mod sections;
pub mod security;
pub mod trust;
#[cfg(test)]
mod trust_tests;

pub use layers::{
    ConfigError, ConfigInputs, LoadedConfig, Loosening, Origin, TrustReport, TrustRequest, WORKSPACE_FILE,
};
pub use prompts::{PromptError, PromptId, PromptLibrary};
pub use sections::*;

/// The built-in defaults: the commented `config/tinycoder.toml` of the project.
pub const DEFAULT_TOML: &str = include_str!("../../../config/tinycoder.toml");
