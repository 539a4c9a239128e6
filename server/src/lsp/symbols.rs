//! `textDocument/documentSymbol`: the flat symbol list of `syntax` as a nested outline.

use crate::syntax::{Symbol, SymbolKind};
use crate::text::{Document, PositionEncoding};
use tower_lsp_server::ls_types::{DocumentSymbol, Range, SymbolKind as LspKind};

fn lsp_kind(kind: SymbolKind) -> LspKind {
    match kind {
        SymbolKind::Module => LspKind::MODULE,
        SymbolKind::Class => LspKind::CLASS,
        SymbolKind::Struct => LspKind::STRUCT,
        SymbolKind::Enum => LspKind::ENUM,
        SymbolKind::Trait => LspKind::INTERFACE,
        SymbolKind::Impl => LspKind::OBJECT,
        SymbolKind::Function | SymbolKind::Macro => LspKind::FUNCTION,
        SymbolKind::Method => LspKind::METHOD,
        SymbolKind::Constant => LspKind::CONSTANT,
        SymbolKind::TypeAlias => LspKind::TYPE_PARAMETER,
    }
}

fn range(doc: &Document, bytes: &std::ops::Range<usize>, enc: PositionEncoding) -> Range {
    Range::new(
        super::convert::to_lsp_position(doc.byte_to_position(bytes.start, enc)),
        super::convert::to_lsp_position(doc.byte_to_position(bytes.end, enc)),
    )
}

/// Nests `symbols` (parents before children) into an outline with ranges in `enc`.
pub fn outline(doc: &Document, symbols: &[Symbol], enc: PositionEncoding) -> Vec<DocumentSymbol> {
    let mut nodes: Vec<Option<DocumentSymbol>> = symbols
        .iter()
        .map(|s| {
            #[allow(deprecated)]
            Some(DocumentSymbol {
                name: s.name.clone(),
                detail: Some(s.signature.clone()),
                kind: lsp_kind(s.kind),
                tags: None,
                deprecated: None,
                range: range(doc, &s.byte_range, enc),
                selection_range: range(doc, &s.name_range, enc),
                children: None,
            })
        })
        .collect();
    let mut roots = Vec::new();
    // Children come after their parents, so walking backwards finishes each child first.
    for i in (0..symbols.len()).rev() {
        let Some(node) = nodes[i].take() else {
            continue;
        };
        match symbols[i].parent.filter(|p| *p < i) {
            Some(p) => {
                if let Some(parent) = nodes[p].as_mut() {
                    parent.children.get_or_insert_with(Vec::new).insert(0, node);
                }
            }
            None => roots.push(node),
        }
    }
    roots.reverse();
    roots
}
