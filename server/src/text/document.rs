//! One open document: a rope, its version and language, exact position
//! conversions, and incremental changes that yield tree-sitter `InputEdit`s.

use super::{PositionEncoding, TextPosition, TextRange};
use ropey::Rope;
use tree_sitter::{InputEdit, Point};

/// One content change: replace `range` (or, when `None`, the whole text) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    pub range: Option<TextRange>,
    pub text: String,
}

/// An open buffer as the editor sees it.
#[derive(Debug, Clone)]
pub struct Document {
    rope: Rope,
    version: i32,
    language_id: String,
    /// Whether the text may hold a `\r` not followed by `\n`; tree-sitter rows then differ from LSP lines.
    has_lone_cr: bool,
}

impl Document {
    /// A document with `text` at `version`, in the editor's `language_id`.
    pub fn new(text: &str, version: i32, language_id: impl Into<String>) -> Self {
        Self { rope: Rope::from_str(text), version, language_id: language_id.into(), has_lone_cr: has_lone_cr(text) }
    }

    /// The rope.
    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    /// The whole text.
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// The editor's version of the text.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The editor's `languageId`.
    pub fn language_id(&self) -> &str {
        &self.language_id
    }

    /// Length in bytes.
    pub fn len_bytes(&self) -> usize {
        self.rope.len_bytes()
    }

    /// Number of lines as LSP counts them (a trailing line break starts one more, empty, line).
    pub fn len_lines(&self) -> usize {
        self.rope.len_lines()
    }

    /// Char index where the content of `line` ends (before its line break).
    fn line_content_end(&self, line: usize) -> usize {
        let start = self.rope.line_to_char(line);
        let next =
            if line + 1 < self.rope.len_lines() { self.rope.line_to_char(line + 1) } else { self.rope.len_chars() };
        let mut end = next;
        if end > start && self.rope.char(end - 1) == '\n' {
            end -= 1;
        }
        if end > start && self.rope.char(end - 1) == '\r' {
            end -= 1;
        }
        end
    }

    /// The char index of `pos`; a line past the end clamps to the end of the text, a
    /// character past the end of its line to the end of the line, and an offset inside a
    /// character (e.g. half a surrogate pair) to the start of that character.
    pub fn position_to_char(&self, pos: TextPosition, enc: PositionEncoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            tracing::warn!(
                line,
                lines = self.rope.len_lines(),
                "position past the end of the document; clamped to its end"
            );
            return self.rope.len_chars();
        }
        let start = self.rope.line_to_char(line);
        let end = self.line_content_end(line);
        let col = pos.character as usize;
        let idx = match enc {
            PositionEncoding::Utf32 => start + col,
            PositionEncoding::Utf8 => {
                let b = self.rope.char_to_byte(start) + col;
                if b >= self.rope.char_to_byte(end) {
                    end
                } else {
                    self.rope.byte_to_char(b)
                }
            }
            PositionEncoding::Utf16 => {
                let u = self.rope.char_to_utf16_cu(start) + col;
                if u >= self.rope.char_to_utf16_cu(end) {
                    end
                } else {
                    self.rope.utf16_cu_to_char(u)
                }
            }
        };
        if idx > end {
            tracing::debug!(line, character = col, "position past the end of its line; clamped");
            return end;
        }
        idx
    }

    /// The position of char index `idx` (clamped to the end of the text).
    pub fn char_to_position(&self, idx: usize, enc: PositionEncoding) -> TextPosition {
        let idx = if idx > self.rope.len_chars() {
            tracing::warn!(idx, len = self.rope.len_chars(), "char index past the end; clamped");
            self.rope.len_chars()
        } else {
            idx
        };
        let line = self.rope.char_to_line(idx);
        let start = self.rope.line_to_char(line);
        let character = match enc {
            PositionEncoding::Utf32 => idx - start,
            PositionEncoding::Utf8 => self.rope.char_to_byte(idx) - self.rope.char_to_byte(start),
            PositionEncoding::Utf16 => self.rope.char_to_utf16_cu(idx) - self.rope.char_to_utf16_cu(start),
        };
        TextPosition::new(to_u32(line), to_u32(character))
    }

    /// The byte offset of `pos`.
    pub fn position_to_byte(&self, pos: TextPosition, enc: PositionEncoding) -> usize {
        self.rope.char_to_byte(self.position_to_char(pos, enc))
    }

    /// The position of byte `offset` (inside a character: that character's start).
    pub fn byte_to_position(&self, offset: usize, enc: PositionEncoding) -> TextPosition {
        let offset = offset.min(self.rope.len_bytes());
        self.char_to_position(self.rope.byte_to_char(offset), enc)
    }

    /// The tree-sitter point (row counted in `\n` only, column in bytes) of byte `offset`.
    pub fn byte_to_point(&self, offset: usize) -> Point {
        let offset = offset.min(self.rope.len_bytes());
        if !self.has_lone_cr {
            // Without lone CRs, LSP lines and tree-sitter rows coincide.
            let row = self.rope.byte_to_line(offset);
            return Point::new(row, offset - self.rope.line_to_byte(row));
        }
        let mut row = 0;
        let mut row_start = 0;
        let mut at = 0;
        for chunk in self.rope.byte_slice(..offset).chunks() {
            for (i, b) in chunk.bytes().enumerate() {
                if b == b'\n' {
                    row += 1;
                    row_start = at + i + 1;
                }
            }
            at += chunk.len();
        }
        Point::new(row, offset - row_start)
    }

    /// Applies `changes` in order (as one `didChange`), sets `version`, and returns the
    /// tree-sitter edits to apply, in order, to a tree of the old text.
    pub fn apply_changes(&mut self, changes: &[TextChange], enc: PositionEncoding, version: i32) -> Vec<InputEdit> {
        if version <= self.version {
            tracing::warn!(old = self.version, new = version, "didChange version does not increase; applied anyway");
        }
        let edits = changes.iter().map(|c| self.apply_change(c, enc)).collect();
        self.version = version;
        edits
    }

    /// Applies one change and returns its `InputEdit`.
    pub fn apply_change(&mut self, change: &TextChange, enc: PositionEncoding) -> InputEdit {
        let (start_char, end_char) = match &change.range {
            Some(r) => {
                let a = self.position_to_char(r.start, enc);
                let b = self.position_to_char(r.end, enc);
                if b < a {
                    tracing::warn!(?r, "change range ends before it starts; swapped");
                    (b, a)
                } else {
                    (a, b)
                }
            }
            None => (0, self.rope.len_chars()),
        };
        let start_byte = self.rope.char_to_byte(start_char);
        let old_end_byte = self.rope.char_to_byte(end_char);
        let start_position = self.byte_to_point(start_byte);
        let old_end_position = self.byte_to_point(old_end_byte);
        // A `\r` right before the edit or inserted can make (or unmake) a lone CR.
        let touches_cr = change.text.contains('\r')
            || (start_char > 0 && self.rope.char(start_char - 1) == '\r')
            || (self.has_lone_cr && self.rope.slice(start_char..end_char).chars().any(|c| c == '\r'));
        self.rope.remove(start_char..end_char);
        self.rope.insert(start_char, &change.text);
        if touches_cr {
            self.has_lone_cr = rope_has_lone_cr(&self.rope);
        }
        let new_end_byte = start_byte + change.text.len();
        InputEdit {
            start_byte,
            old_end_byte,
            new_end_byte,
            start_position,
            old_end_position,
            new_end_position: self.byte_to_point(new_end_byte),
        }
    }

    /// The text of `range`.
    pub fn slice_text(&self, range: TextRange, enc: PositionEncoding) -> String {
        let a = self.position_to_char(range.start, enc);
        let b = self.position_to_char(range.end, enc).max(a);
        self.rope.slice(a..b).to_string()
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn has_lone_cr(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'))
}

fn rope_has_lone_cr(rope: &Rope) -> bool {
    let mut prev_cr = false;
    for chunk in rope.chunks() {
        for &b in chunk.as_bytes() {
            if prev_cr && b != b'\n' {
                return true;
            }
            prev_cr = b == b'\r';
        }
    }
    prev_cr
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn p(l: u32, c: u32) -> TextPosition {
        TextPosition::new(l, c)
    }

    #[test]
    fn surrogate_pairs_and_clamping() {
        let d = Document::new("a😀b\r\nx", 1, "rust");
        assert_eq!(d.position_to_char(p(0, 3), Utf16), 2); // after the emoji
        assert_eq!(d.position_to_char(p(0, 2), Utf16), 1); // half a pair → its start
        assert_eq!(d.position_to_char(p(0, 5), Utf8), 2);
        assert_eq!(d.position_to_char(p(0, 99), Utf8), 3); // clamped before \r\n
        assert_eq!(d.position_to_char(p(9, 0), Utf8), 6);
        assert_eq!(d.char_to_position(2, Utf16), p(0, 3));
        assert_eq!(d.char_to_position(5, Utf32), p(1, 0));
        // Past the end of a line, in every encoding: the line's end, before its break.
        assert_eq!(d.position_to_char(p(0, 99), Utf32), 3);
        assert_eq!(d.position_to_char(p(0, 99), Utf16), 3);
        assert_eq!(d.position_to_char(p(1, 99), Utf32), 6);
        // A char index past the end of the text: the text's end.
        assert_eq!(d.char_to_position(6, Utf16), p(1, 1));
        assert_eq!(d.char_to_position(60, Utf16), p(1, 1));
        assert_eq!(d.char_to_position(60, Utf8), p(1, 1));
    }

    #[test]
    fn lone_cr_is_a_line_break_but_not_a_tree_sitter_row() {
        let mut d = Document::new("a\rb\nc", 1, "python");
        assert_eq!(d.len_lines(), 3);
        assert_eq!(d.position_to_char(p(1, 0), Utf16), 2);
        assert_eq!(d.byte_to_point(4), Point::new(1, 0));
        assert_eq!(d.byte_to_point(2), Point::new(0, 2));
        let e =
            d.apply_change(&TextChange { range: Some(TextRange::new(p(0, 1), p(1, 0))), text: "\r\n".into() }, Utf16);
        assert_eq!(d.text(), "a\r\nb\nc");
        assert_eq!(e.new_end_position, Point::new(1, 0));
    }

    #[test]
    fn a_batch_of_changes_sets_the_version_and_keeps_the_language() {
        let mut d = Document::new("héllo\n", 3, "python");
        assert_eq!((d.version(), d.language_id(), d.len_bytes()), (3, "python", 7));
        let change = TextChange { range: Some(TextRange::new(p(0, 5), p(0, 5))), text: " wörld".into() };
        d.apply_changes(&[change], Utf16, 7);
        assert_eq!(d.text(), "héllo wörld\n");
        assert_eq!((d.version(), d.language_id(), d.len_bytes()), (7, "python", 14));
    }
}
