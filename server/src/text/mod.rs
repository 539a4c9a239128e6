//! Open documents as ropes, position encodings (UTF-8/16/32), edits, tree-sitter `InputEdit`s.
//!
//! Architecture invariant: no LSP types here. Positions are [`TextPosition`]
//! (line, character in the negotiated [`PositionEncoding`]); `lsp/` converts.
//! Lines end at `\n`, `\r\n` or a lone `\r`, as LSP says (ropey's `cr_lines`).
//! Every conversion clamps what is out of range (logged), none panics.

mod document;
mod encoding;

pub use document::{Document, TextChange};
pub use encoding::{PositionEncoding, TextPosition, TextRange};

#[cfg(test)]
mod proptests;
