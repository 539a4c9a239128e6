//! Property tests: the rope conversions against a naive `Vec<char>` reference.

use super::*;
use proptest::prelude::*;

/// The reference: lines as char vectors, each with its start char index (breaks: `\r\n`, `\r`, `\n`).
struct NaiveLines {
    chars: Vec<char>,
    /// (start char index, content length in chars) per line.
    lines: Vec<(usize, usize)>,
}

impl NaiveLines {
    fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\r' if chars.get(i + 1) == Some(&'\n') => {
                    lines.push((start, i - start));
                    i += 2;
                    start = i;
                }
                '\r' | '\n' => {
                    lines.push((start, i - start));
                    i += 1;
                    start = i;
                }
                _ => i += 1,
            }
        }
        lines.push((start, chars.len() - start));
        Self { chars, lines }
    }

    fn units(&self, from: usize, to: usize, enc: PositionEncoding) -> usize {
        self.chars[from..to].iter().map(|c| enc.len_of(*c)).sum()
    }

    fn to_char(&self, pos: TextPosition, enc: PositionEncoding) -> usize {
        let Some(&(start, len)) = self.lines.get(pos.line as usize) else {
            return self.chars.len();
        };
        let mut units = 0;
        for i in start..start + len {
            let w = enc.len_of(self.chars[i]);
            if units + w > pos.character as usize {
                return i;
            }
            units += w;
        }
        start + len
    }

    fn to_position(&self, idx: usize, enc: PositionEncoding) -> TextPosition {
        let line = self.lines.iter().rposition(|(s, _)| *s <= idx).unwrap_or(0);
        let (start, _) = self.lines[line];
        TextPosition::new(line as u32, self.units(start, idx, enc) as u32)
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a".to_string()),
        Just("xyz".to_string()),
        Just("é".to_string()),
        Just("e\u{301}".to_string()),
        Just("😀".to_string()),
        Just("𝕏".to_string()),
        Just("中".to_string()),
        Just("\r\n".to_string()),
        Just("\r".to_string()),
        Just("\n".to_string()),
        Just(" ".to_string()),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn enc_strategy() -> impl Strategy<Value = PositionEncoding> {
    prop_oneof![Just(PositionEncoding::Utf8), Just(PositionEncoding::Utf16), Just(PositionEncoding::Utf32)]
}

proptest! {
    #[test]
    fn position_to_char_matches_reference(text in text_strategy(), line in 0u32..12, character in 0u32..30, enc in enc_strategy()) {
        let doc = Document::new(&text, 0, "plaintext");
        let naive = NaiveLines::new(&text);
        prop_assert_eq!(doc.len_lines(), naive.lines.len());
        let pos = TextPosition::new(line, character);
        prop_assert_eq!(doc.position_to_char(pos, enc), naive.to_char(pos, enc));
    }

    #[test]
    fn char_to_position_round_trips(text in text_strategy(), idx in 0usize..200, enc in enc_strategy()) {
        let doc = Document::new(&text, 0, "plaintext");
        let naive = NaiveLines::new(&text);
        let idx = idx.min(naive.chars.len());
        // Char indices inside a CRLF have no position of their own; skip them.
        prop_assume!(!(idx > 0 && naive.chars[idx - 1] == '\r' && naive.chars.get(idx) == Some(&'\n')));
        let pos = doc.char_to_position(idx, enc);
        prop_assert_eq!(pos, naive.to_position(idx, enc));
        prop_assert_eq!(doc.position_to_char(pos, enc), idx);
        let byte = doc.rope().char_to_byte(idx);
        prop_assert_eq!(doc.byte_to_position(byte, enc), pos);
        prop_assert_eq!(doc.position_to_byte(pos, enc), byte);
    }

    #[test]
    fn changes_match_string_edits_and_points(text in text_strategy(), edits in proptest::collection::vec((0u32..8, 0u32..12, 0u32..8, 0u32..12, text_strategy()), 1..6), enc in enc_strategy()) {
        let mut doc = Document::new(&text, 0, "plaintext");
        let mut reference = text.clone();
        for (l1, c1, l2, c2, insert) in edits {
            let naive = NaiveLines::new(&reference);
            let (a, b) = (naive.to_char(TextPosition::new(l1, c1), enc), naive.to_char(TextPosition::new(l2, c2), enc));
            let (a, b) = (a.min(b), a.max(b));
            let chars: Vec<char> = reference.chars().collect();
            reference = chars[..a].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[b..].iter()).collect();
            let range = TextRange::new(TextPosition::new(l1, c1), TextPosition::new(l2, c2));
            let e = doc.apply_change(&TextChange { range: Some(range), text: insert.clone() }, enc);
            prop_assert_eq!(doc.text(), reference.clone());
            // tree-sitter points count rows by '\n' only, columns in bytes.
            let before = &reference.as_bytes()[..e.new_end_byte];
            let row = before.iter().filter(|b| **b == b'\n').count();
            let col = e.new_end_byte - before.iter().rposition(|b| *b == b'\n').map(|i| i + 1).unwrap_or(0);
            prop_assert_eq!(e.new_end_position, tree_sitter::Point::new(row, col));
        }
    }
}
