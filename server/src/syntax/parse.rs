//! Parsing and the syntax check of a candidate file.

use super::LanguageSpec;
use tree_sitter::{Parser, Point, Tree};

/// A parser bound to one language, reusable across parses of that language.
pub struct SyntaxParser {
    parser: Parser,
    lang: &'static LanguageSpec,
}

impl SyntaxParser {
    /// A parser for `lang`.
    pub fn new(lang: &'static LanguageSpec) -> Self {
        let mut parser = Parser::new();
        // Grammars are compiled in with a matching ABI; a mismatch is a build bug.
        parser.set_language(&(lang.grammar)()).expect("tree-sitter grammar ABI matches the tree-sitter crate");
        Self { parser, lang }
    }

    /// The parser's language.
    pub fn language(&self) -> &'static LanguageSpec {
        self.lang
    }

    /// Parses `text`, reusing `old` (already edited with `InputEdit`s) for an incremental parse.
    pub fn parse(&mut self, text: &[u8], old: Option<&Tree>) -> Option<Tree> {
        self.parser.parse(text, old)
    }
}

/// Parses `text` from scratch.
pub fn parse(lang: &'static LanguageSpec, text: &str) -> Option<Tree> {
    SyntaxParser::new(lang).parse(text.as_bytes(), None)
}

/// A place where the parser found invalid or missing syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Start of the error node (row, byte column), 0-based.
    pub start: Point,
    pub end: Point,
    /// `true` when the parser inserted a missing token; `false` for an ERROR node.
    pub missing: bool,
    /// What is wrong, in words.
    pub message: String,
}

/// The syntax errors of a tree (at most `limit`), outermost first.
pub fn syntax_errors(tree: &Tree, text: &[u8], limit: usize) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    if !tree.root_node().has_error() {
        return out;
    }
    let mut cursor = tree.walk();
    let mut visit = true;
    loop {
        let node = cursor.node();
        if visit && node.has_error() {
            if node.is_error() || node.is_missing() {
                let snippet: String = String::from_utf8_lossy(&text[node.byte_range()]).chars().take(40).collect();
                out.push(SyntaxError {
                    start: node.start_position(),
                    end: node.end_position(),
                    missing: node.is_missing(),
                    message: if node.is_missing() {
                        format!("missing `{}`", node.kind())
                    } else {
                        format!("unexpected `{}`", snippet.trim())
                    },
                });
                if out.len() >= limit {
                    break;
                }
            } else if cursor.goto_first_child() {
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            visit = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        visit = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::language_by_name;

    #[test]
    fn valid_code_has_no_errors() {
        let py = language_by_name("python").unwrap();
        let tree = parse(py, "def f(x):\n    return x\n").unwrap();
        assert!(syntax_errors(&tree, b"", 10).is_empty());
    }

    #[test]
    fn broken_code_reports_the_place() {
        let rs = language_by_name("rust").unwrap();
        let src = "fn f() {\n    let x = ;\n}\n";
        let tree = parse(rs, src).unwrap();
        let errs = syntax_errors(&tree, src.as_bytes(), 10);
        assert!(!errs.is_empty());
        assert_eq!(errs[0].start.row, 1);
    }
}
