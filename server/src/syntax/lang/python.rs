//! Python.

use super::{node_text, LanguageSpec};
use crate::syntax::SymbolKind;
use tree_sitter::Node;

/// The Python language.
pub static PYTHON: LanguageSpec = LanguageSpec {
    name: "python",
    extensions: &["py", "pyi"],
    grammar: || tree_sitter_python::LANGUAGE.into(),
    tags_query: tree_sitter_python::TAGS_QUERY,
    symbol_kind,
    symbol_name,
    doc,
    body_field: "body",
    references_query: PYTHON_REFERENCES,
    line_comment: "#",
    docstring_in_body: true,
};

const PYTHON_REFERENCES: &str = r#"
(import_statement name: (dotted_name) @name) @reference.import
(import_statement name: (aliased_import name: (dotted_name) @name)) @reference.import
(import_from_statement module_name: (dotted_name) @name) @reference.import
(import_from_statement module_name: (relative_import) @name) @reference.import
(import_from_statement name: (dotted_name) @name) @reference.import
(class_definition superclasses: (argument_list (identifier) @name)) @reference.type
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @name))) @reference.type
(type (identifier) @name) @reference.type
(attribute object: (identifier) @name) @reference.use
"#;

fn symbol_kind(node: &Node, in_class: bool) -> Option<SymbolKind> {
    Some(match node.kind() {
        "function_definition" if in_class => SymbolKind::Method,
        "function_definition" => SymbolKind::Function,
        "class_definition" => SymbolKind::Class,
        // Module-level `NAME = ...` with an upper-case name is a constant by convention.
        "expression_statement" if is_module_level(node) => {
            let assign = node.named_child(0).filter(|c| c.kind() == "assignment")?;
            let left = assign.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
            let name_len = left.byte_range().len();
            (name_len > 1).then_some(SymbolKind::Constant)?
        }
        _ => return None,
    })
}

fn is_module_level(node: &Node) -> bool {
    node.parent().is_some_and(|p| p.kind() == "module")
}

fn symbol_name(node: &Node, src: &[u8]) -> Option<String> {
    if node.kind() == "expression_statement" {
        let assign = node.named_child(0)?;
        let name = node_text(&assign.child_by_field_name("left")?, src);
        return name.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()).then_some(name);
    }
    node.child_by_field_name("name").map(|n| node_text(&n, src))
}

/// The docstring: a string literal as the first statement of the body.
fn doc(node: &Node, src: &[u8]) -> Option<String> {
    let body = node.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0).filter(|n| n.kind() == "string")?;
    let text = node_text(&s, src);
    let trimmed = text.trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B']);
    let q = if trimmed.starts_with("\"\"\"") || trimmed.starts_with("'''") { 3 } else { 1 };
    let inner = trimmed.get(q..trimmed.len().saturating_sub(q)).unwrap_or("");
    Some(inner.trim().to_string())
}
