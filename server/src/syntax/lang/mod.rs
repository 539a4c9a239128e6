//! The language registry. Adding a language = one file here defining a
//! [`LanguageSpec`] and one line in [`LANGUAGES`].

mod python;
mod rust;

use std::path::Path;

/// How tinycoder understands one language.
pub struct LanguageSpec {
    /// Lower-case name, as used in LSP `languageId` and config.
    pub name: &'static str,
    /// File extensions without the dot.
    pub extensions: &'static [&'static str],
    /// The tree-sitter grammar.
    pub grammar: fn() -> tree_sitter::Language,
    /// The grammar's tags query (definitions and references).
    pub tags_query: &'static str,
    /// Maps a syntax node to a symbol kind, if the node defines a symbol.
    pub symbol_kind: fn(&tree_sitter::Node, bool) -> Option<super::SymbolKind>,
    /// The symbol's name node (e.g. the `name` field).
    pub symbol_name: fn(&tree_sitter::Node, &[u8]) -> Option<String>,
    /// The doc comment or docstring of a definition node.
    pub doc: fn(&tree_sitter::Node, &[u8]) -> Option<String>,
    /// The node kind of the body, where the signature ends.
    pub body_field: &'static str,
    /// Extra reference captures (`@name` inside `@reference.KIND`) beyond the tags query:
    /// type uses, imports, scoped calls. Used to rank files in the repo map.
    pub references_query: &'static str,
    /// What starts a line comment (`#`, `//`).
    pub line_comment: &'static str,
    /// Whether a definition's docstring is the first statement of its body (Python) rather than above it.
    pub docstring_in_body: bool,
}

impl std::fmt::Debug for LanguageSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageSpec").field("name", &self.name).finish()
    }
}

/// Every language tinycoder parses.
pub static LANGUAGES: &[&LanguageSpec] = &[&rust::RUST, &python::PYTHON];

/// The language of a file, by extension.
pub fn language_for_path(path: &Path) -> Option<&'static LanguageSpec> {
    let ext = path.extension()?.to_str()?;
    LANGUAGES.iter().copied().find(|l| l.extensions.contains(&ext))
}

/// The language with this name (LSP `languageId`).
pub fn language_by_name(name: &str) -> Option<&'static LanguageSpec> {
    LANGUAGES.iter().copied().find(|l| l.name == name)
}

/// Text of a node, lossily decoded.
pub(crate) fn node_text(node: &tree_sitter::Node, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.byte_range()]).into_owned()
}
