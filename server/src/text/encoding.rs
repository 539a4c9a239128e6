//! Position encodings and the small position types of the text layer.

use serde::{Deserialize, Serialize};

/// The unit LSP `character` offsets count in, negotiated at `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum PositionEncoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units (the LSP default).
    #[default]
    Utf16,
    /// Unicode scalar values (chars).
    Utf32,
}

impl PositionEncoding {
    /// The LSP name (`utf-8`, `utf-16`, `utf-32`).
    pub fn as_lsp_str(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf16 => "utf-16",
            Self::Utf32 => "utf-32",
        }
    }

    /// Parses an LSP encoding name; `None` for unknown names.
    pub fn from_lsp_str(s: &str) -> Option<Self> {
        match s {
            "utf-8" => Some(Self::Utf8),
            "utf-16" => Some(Self::Utf16),
            "utf-32" => Some(Self::Utf32),
            _ => None,
        }
    }

    /// Picks the encoding from the client's offered list: UTF-8 when offered, else the
    /// client's first choice among the ones we know, else UTF-16 (always supported).
    pub fn negotiate(offered: &[String]) -> Self {
        if offered.iter().any(|o| o == "utf-8") {
            return Self::Utf8;
        }
        offered.iter().find_map(|o| Self::from_lsp_str(o)).unwrap_or(Self::Utf16)
    }

    /// Code units of `c` in this encoding.
    pub fn len_of(self, c: char) -> usize {
        match self {
            Self::Utf8 => c.len_utf8(),
            Self::Utf16 => c.len_utf16(),
            Self::Utf32 => 1,
        }
    }
}

/// A 0-based line and a `character` offset counted in a [`PositionEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct TextPosition {
    pub line: u32,
    pub character: u32,
}

impl TextPosition {
    /// A position.
    pub fn new(line: u32, character: u32) -> Self {
        Self { line, character }
    }
}

/// A half-open range of positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct TextRange {
    pub start: TextPosition,
    pub end: TextPosition,
}

impl TextRange {
    /// A range.
    pub fn new(start: TextPosition, end: TextPosition) -> Self {
        Self { start, end }
    }
}
