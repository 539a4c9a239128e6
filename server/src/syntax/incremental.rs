//! A document's syntax tree, kept up to date incrementally from a rope.

use super::{LanguageSpec, SyntaxParser};
use ropey::Rope;
use tree_sitter::{InputEdit, Tree};

/// The tree of one open document: edited with each change's `InputEdit`s at once
/// (cheap), reparsed incrementally only when someone asks for the tree, so a burst
/// of keystrokes costs one reparse.
pub struct IncrementalTree {
    parser: SyntaxParser,
    tree: Option<Tree>,
    stale: bool,
}

impl IncrementalTree {
    /// A tree for `lang`, parsed on first use.
    pub fn new(lang: &'static LanguageSpec) -> Self {
        Self { parser: SyntaxParser::new(lang), tree: None, stale: true }
    }

    /// The language.
    pub fn language(&self) -> &'static LanguageSpec {
        self.parser.language()
    }

    /// Records edits of the text (in order) so the next parse can reuse the old tree.
    pub fn edit(&mut self, edits: &[InputEdit]) {
        if let Some(tree) = &mut self.tree {
            for e in edits {
                tree.edit(e);
            }
        }
        self.stale = true;
    }

    /// Forgets the tree (the whole text was replaced); the next parse starts from scratch.
    pub fn reset(&mut self) {
        self.tree = None;
        self.stale = true;
    }

    /// The tree of `rope`'s text, reparsing incrementally if it changed since the last parse.
    pub fn tree(&mut self, rope: &Rope) -> Option<&Tree> {
        if self.stale {
            let new_tree = parse_rope(&mut self.parser, rope, self.tree.as_ref());
            self.tree = new_tree;
            self.stale = false;
        }
        self.tree.as_ref()
    }
}

/// Parses a rope chunk by chunk (no copy of the text), reusing `old` if given.
pub fn parse_rope(parser: &mut SyntaxParser, rope: &Rope, old: Option<&Tree>) -> Option<Tree> {
    let len = rope.len_bytes();
    let mut read = |byte: usize, _: tree_sitter::Point| -> &[u8] {
        if byte >= len {
            return &[];
        }
        let (chunk, start, _, _) = rope.chunk_at_byte(byte);
        &chunk.as_bytes()[byte - start..]
    };
    parser.parse_with(&mut read, old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{extract_symbols, language_by_name};
    use crate::text::{Document, PositionEncoding, TextChange, TextPosition, TextRange};

    #[test]
    fn incremental_reparse_matches_a_fresh_parse() {
        let py = language_by_name("python").unwrap();
        let mut doc = Document::new("def f():\n    pass\n", 1, "python");
        let mut tree = IncrementalTree::new(py);
        assert!(tree.tree(doc.rope()).is_some());
        let change = TextChange {
            range: Some(TextRange::new(TextPosition::new(2, 0), TextPosition::new(2, 0))),
            text: "class Ärger:\n    def g(self):\n        pass\n".into(),
        };
        let edits = doc.apply_changes(&[change], PositionEncoding::Utf16, 2);
        tree.edit(&edits);
        let text = doc.text();
        let incremental = tree.tree(doc.rope()).unwrap().root_node().to_sexp();
        let fresh = crate::syntax::parse(py, &text).unwrap();
        assert_eq!(incremental, fresh.root_node().to_sexp());
        let syms = extract_symbols(py, tree.tree(doc.rope()).unwrap(), text.as_bytes());
        assert_eq!(syms.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["f", "Ärger", "g"]);
    }
}
