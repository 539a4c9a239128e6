//! Conversions between LSP types and the text layer's plain types.

use crate::text::{TextChange, TextPosition, TextRange};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// LSP position → text position.
pub fn to_text_position(p: Position) -> TextPosition {
    TextPosition::new(p.line, p.character)
}

/// Text position → LSP position.
pub fn to_lsp_position(p: TextPosition) -> Position {
    Position::new(p.line, p.character)
}

/// LSP range → text range.
pub fn to_text_range(r: Range) -> TextRange {
    TextRange::new(to_text_position(r.start), to_text_position(r.end))
}

/// Text range → LSP range.
pub fn to_lsp_range(r: TextRange) -> Range {
    Range::new(to_lsp_position(r.start), to_lsp_position(r.end))
}

/// One `didChange` content change → a text change.
pub fn to_text_change(c: TextDocumentContentChangeEvent) -> TextChange {
    TextChange { range: c.range.map(to_text_range), text: c.text }
}
