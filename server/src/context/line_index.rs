//! The per-file line index: an outline of symbols with line ranges, so code
//! can be trimmed to the symbol that matters.

use crate::index::SymbolEntry;

/// One symbol of the outline.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineEntry {
    pub name: String,
    pub kind: String,
    pub signature: String,
    /// 1-based inclusive lines.
    pub start_line: usize,
    pub end_line: usize,
    pub depth: usize,
}

/// The outline of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOutline {
    pub entries: Vec<OutlineEntry>,
}

impl FileOutline {
    /// The outline from a file's symbols (in document order, parents first).
    pub fn from_symbols(symbols: &[SymbolEntry]) -> Self {
        let mut depth = vec![0usize; symbols.len()];
        let entries = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| {
                depth[i] = s.parent.map(|p| depth.get(p).copied().unwrap_or(0) + 1).unwrap_or(0);
                OutlineEntry {
                    name: s.name.clone(),
                    kind: s.kind.clone(),
                    signature: s.signature.clone(),
                    start_line: s.start_line,
                    end_line: s.end_line,
                    depth: depth[i],
                }
            })
            .collect();
        Self { entries }
    }

    /// Innermost-first symbols containing 1-based `line`.
    pub fn enclosing(&self, line: usize) -> Vec<&OutlineEntry> {
        let mut v: Vec<&OutlineEntry> =
            self.entries.iter().filter(|e| e.start_line <= line && line <= e.end_line).collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.depth));
        v
    }

    /// One line per symbol: `  12-40 fn name(args)` indented by depth.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            let sig = if e.signature.is_empty() { &e.name } else { &e.signature };
            out.push_str(&format!("{}{}-{} {}\n", "  ".repeat(e.depth), e.start_line, e.end_line, sig));
        }
        out
    }
}
