//! tree-sitter languages (a registry: one file per language in `lang/`),
//! parsing, symbol extraction, and the syntax check of a candidate file.
//!
//! Architecture invariant: positions here are tree-sitter bytes and points
//! (row, byte column); conversion to LSP units happens in `text`/`lsp`.

mod code_tokens;
mod incremental;
mod lang;
mod module_values;
mod parse;
mod references;
mod symbols;

pub use code_tokens::{code_token_spans, code_tokens, commentary_lines};
pub use incremental::{parse_rope, IncrementalTree};
pub use lang::{language_by_name, language_for_path, LanguageSpec, LANGUAGES};
pub use module_values::{module_values, ModuleValue};
pub use parse::{parse, syntax_errors, SyntaxError, SyntaxParser};
pub use references::{extract_references, Reference, ReferenceKind};
pub use symbols::{extract_symbols, Symbol, SymbolKind};
