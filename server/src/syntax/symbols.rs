//! Symbols (definitions) of a parsed file, with nesting, signature and doc.

use super::LanguageSpec;
use serde::Serialize;
use std::ops::Range;
use tree_sitter::{Node, Point, Tree};

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Module,
    Class,
    Struct,
    Enum,
    Trait,
    Impl,
    Function,
    Method,
    Constant,
    TypeAlias,
    Macro,
}

impl SymbolKind {
    /// Lower-case name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Module => "module",
            Self::Class => "class",
            Self::Struct => "struct",
            Self::Enum => "enum",
            Self::Trait => "trait",
            Self::Impl => "impl",
            Self::Function => "function",
            Self::Method => "method",
            Self::Constant => "constant",
            Self::TypeAlias => "type_alias",
            Self::Macro => "macro",
        }
    }

    /// Kinds whose children are methods rather than functions.
    fn holds_methods(self) -> bool {
        matches!(self, Self::Class | Self::Impl | Self::Trait)
    }
}

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// Byte range of the whole definition.
    pub byte_range: Range<usize>,
    /// Start and end points (row, byte column), 0-based.
    #[serde(skip)]
    pub start: Point,
    #[serde(skip)]
    pub end: Point,
    /// Byte range of the name (the LSP `selectionRange`).
    pub name_range: Range<usize>,
    /// Index of the enclosing symbol in the same list.
    pub parent: Option<usize>,
    /// The definition up to its body, on one line (e.g. `fn add(a: i32) -> i32`).
    pub signature: String,
    /// Doc comment or docstring, if any.
    pub doc: Option<String>,
}

impl Symbol {
    /// 0-based first and last line of the definition.
    pub fn line_range(&self) -> (usize, usize) {
        (self.start.row, self.end.row)
    }
}

/// Every symbol of `tree`, in document order (parents before children).
pub fn extract_symbols(lang: &LanguageSpec, tree: &Tree, src: &[u8]) -> Vec<Symbol> {
    let mut out = Vec::new();
    visit(lang, tree.root_node(), src, None, false, &mut out);
    out
}

fn visit(lang: &LanguageSpec, node: Node, src: &[u8], parent: Option<usize>, in_holder: bool, out: &mut Vec<Symbol>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let mut next_parent = parent;
        let mut next_in_holder = in_holder;
        if let Some(kind) = (lang.symbol_kind)(&child, in_holder) {
            if let Some(name) = (lang.symbol_name)(&child, src) {
                let name_range =
                    child.child_by_field_name("name").map(|n| n.byte_range()).unwrap_or(child.start_byte()..child.start_byte());
                out.push(Symbol {
                    name,
                    kind,
                    byte_range: child.byte_range(),
                    start: child.start_position(),
                    end: child.end_position(),
                    name_range,
                    parent,
                    signature: signature(lang, &child, src),
                    doc: (lang.doc)(&child, src),
                });
                next_parent = Some(out.len() - 1);
                next_in_holder = kind.holds_methods();
            }
        }
        visit(lang, child, src, next_parent, next_in_holder, out);
    }
}

/// The definition's text up to its body, whitespace collapsed.
fn signature(lang: &LanguageSpec, node: &Node, src: &[u8]) -> String {
    let end = node.child_by_field_name(lang.body_field).map(|b| b.start_byte()).unwrap_or(node.end_byte());
    let raw = String::from_utf8_lossy(&src[node.start_byte()..end]);
    let first_lines: String = raw.lines().take(6).collect::<Vec<_>>().join(" ");
    let collapsed = first_lines.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = collapsed.trim_end_matches([':', '{', ' ']).to_string();
    if trimmed.chars().count() > 200 {
        trimmed.chars().take(200).collect::<String>() + "…"
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{language_by_name, parse};

    fn symbols(lang: &str, src: &str) -> Vec<(String, SymbolKind, Option<String>)> {
        let l = language_by_name(lang).unwrap();
        let tree = parse(l, src).unwrap();
        let syms = extract_symbols(l, &tree, src.as_bytes());
        syms.iter().map(|s| (s.name.clone(), s.kind, s.parent.map(|p| syms[p].name.clone()))).collect()
    }

    #[test]
    fn rust_symbols_nest() {
        let src = "/// A point.\nstruct P { x: i32 }\nimpl P {\n    fn new() -> Self { P { x: 0 } }\n}\ntrait T { fn t(&self); }\nmod m { pub fn f() { fn inner() {} } }\nconst C: i32 = 1;\n";
        let got = symbols("rust", src);
        assert_eq!(
            got,
            vec![
                ("P".into(), SymbolKind::Struct, None),
                ("impl P".into(), SymbolKind::Impl, None),
                ("new".into(), SymbolKind::Method, Some("impl P".into())),
                ("T".into(), SymbolKind::Trait, None),
                ("t".into(), SymbolKind::Method, Some("T".into())),
                ("m".into(), SymbolKind::Module, None),
                ("f".into(), SymbolKind::Function, Some("m".into())),
                ("inner".into(), SymbolKind::Function, Some("f".into())),
                ("C".into(), SymbolKind::Constant, None),
            ]
        );
        let l = language_by_name("rust").unwrap();
        let tree = parse(l, src).unwrap();
        let s = extract_symbols(l, &tree, src.as_bytes());
        assert_eq!(s[0].doc.as_deref(), Some("A point."));
        assert_eq!(s[2].signature, "fn new() -> Self");
    }

    #[test]
    fn python_symbols_nest() {
        let src = "MAX = 3\nx = 1\nclass A:\n    \"\"\"An A.\"\"\"\n    def m(self):\n        def helper():\n            pass\n\n@dec\ndef f(a, b):\n    return a - b\n";
        let got = symbols("python", src);
        assert_eq!(
            got,
            vec![
                ("MAX".into(), SymbolKind::Constant, None),
                ("A".into(), SymbolKind::Class, None),
                ("m".into(), SymbolKind::Method, Some("A".into())),
                ("helper".into(), SymbolKind::Function, Some("m".into())),
                ("f".into(), SymbolKind::Function, None),
            ]
        );
        let l = language_by_name("python").unwrap();
        let tree = parse(l, src).unwrap();
        let s = extract_symbols(l, &tree, src.as_bytes());
        assert_eq!(s[1].doc.as_deref(), Some("An A."));
        assert_eq!(s[4].signature, "def f(a, b)");
    }
}
