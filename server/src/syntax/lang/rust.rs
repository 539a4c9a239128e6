//! Rust.

use super::{node_text, LanguageSpec};
use crate::syntax::SymbolKind;
use tree_sitter::Node;

/// The Rust language.
pub static RUST: LanguageSpec = LanguageSpec {
    name: "rust",
    extensions: &["rs"],
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    tags_query: tree_sitter_rust::TAGS_QUERY,
    symbol_kind,
    symbol_name,
    doc,
    body_field: "body",
    references_query: RUST_REFERENCES,
    line_comment: "//",
    docstring_in_body: false,
};

const RUST_REFERENCES: &str = r#"
(scoped_identifier name: (identifier) @name) @reference.call
(scoped_identifier path: (identifier) @name) @reference.type
(scoped_type_identifier name: (type_identifier) @name) @reference.type
(type_identifier) @name @reference.type
(use_declaration argument: (_) @name) @reference.import
"#;

fn symbol_kind(node: &Node, in_impl_or_trait: bool) -> Option<SymbolKind> {
    Some(match node.kind() {
        "function_item" | "function_signature_item" if in_impl_or_trait => SymbolKind::Method,
        "function_item" | "function_signature_item" => SymbolKind::Function,
        "struct_item" | "union_item" => SymbolKind::Struct,
        "enum_item" => SymbolKind::Enum,
        "trait_item" => SymbolKind::Trait,
        "impl_item" => SymbolKind::Impl,
        "mod_item" => SymbolKind::Module,
        "const_item" | "static_item" => SymbolKind::Constant,
        "type_item" => SymbolKind::TypeAlias,
        "macro_definition" => SymbolKind::Macro,
        _ => return None,
    })
}

fn symbol_name(node: &Node, src: &[u8]) -> Option<String> {
    if node.kind() == "impl_item" {
        let ty = node.child_by_field_name("type").map(|n| node_text(&n, src))?;
        return Some(match node.child_by_field_name("trait") {
            Some(t) => format!("impl {} for {ty}", node_text(&t, src)),
            None => format!("impl {ty}"),
        });
    }
    node.child_by_field_name("name").map(|n| node_text(&n, src))
}

/// `///` and `//!`-free outer doc comments directly above the item (attributes skipped).
fn doc(node: &Node, src: &[u8]) -> Option<String> {
    let mut lines = Vec::new();
    let mut cur = node.prev_sibling();
    while let Some(n) = cur {
        match n.kind() {
            "line_comment" => {
                let t = node_text(&n, src);
                match t.strip_prefix("///") {
                    Some(rest) => lines.push(rest.trim().to_string()),
                    None => break,
                }
            }
            "attribute_item" => {}
            _ => break,
        }
        cur = n.prev_sibling();
    }
    lines.reverse();
    (!lines.is_empty()).then(|| lines.join("\n"))
}
