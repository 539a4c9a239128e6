//! tinycoder: a language server that puts a local coding agent inside any LSP editor.
//!
//! Layers, bottom to top (each depends only on layers listed before it):
//! `config` → `text` → `syntax` → `llm` → `store` → `memory` → `index` →
//! `context` → `edits` → `sandbox` → `agent` → `lsp` / `cli` (adapters).
//! See `docs/architecture.md` for the codemap and invariants.

pub mod config;
pub mod text;
pub mod syntax;
pub mod llm;
pub mod store;
pub mod memory;
pub mod index;
pub mod context;
pub mod edits;
pub mod sandbox;
pub mod agent;
pub mod lsp;
pub mod cli;
pub mod paths;
