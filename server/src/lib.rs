//! tinycoder: a language server that puts a local coding agent inside any LSP editor.
//!
//! Layers, bottom to top (each depends only on layers listed before it):
//! `contracts`, `paths`, `text`, `syntax` → `config` → `llm` → `store` → `memory` →
//! `index` → `context` → `complete` → `edits` → `undo` → `sandbox` → `agent` →
//! `lsp` / `acp` / `cli` (adapters over `agent::Workspace`).
//! See `docs/architecture.md` for the codemap and invariants.

pub mod acp;
pub mod agent;
pub mod cli;
pub mod complete;
pub mod config;
pub mod context;
pub mod contracts;
pub mod edits;
pub mod index;
pub mod llm;
pub mod lsp;
pub mod memory;
pub mod paths;
pub mod sandbox;
pub mod store;
pub mod syntax;
pub mod text;
pub mod undo;
