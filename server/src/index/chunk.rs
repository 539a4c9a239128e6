//! Chunks: the units the index stores and search returns. One per symbol
//! (a large body is split at its inner symbols), or line windows for files
//! no grammar parses. Also the per-file analysis the repo map needs.

use crate::config::IndexConfig;
use crate::syntax::{extract_references, extract_symbols, language_for_path, Reference, Symbol, SyntaxParser};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One indexed piece of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Symbol name (`""` for a line window).
    pub symbol: String,
    /// Symbol kind, or `"window"`.
    pub kind: String,
    pub signature: String,
    pub doc: String,
    /// Names of the enclosing symbols, outermost first (`Class.method`).
    pub container: String,
    pub body: String,
    /// 1-based inclusive line range.
    pub start_line: usize,
    pub end_line: usize,
}

/// A symbol as the file table keeps it (for the repo map and outlines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolEntry {
    pub name: String,
    /// [`SymbolKind::as_str`] of the symbol.
    pub kind: String,
    /// 1-based inclusive line range.
    pub start_line: usize,
    pub end_line: usize,
    pub signature: String,
    /// Index of the enclosing symbol in the file's list.
    pub parent: Option<usize>,
}

/// Everything the indexer derives from one file's text.
#[derive(Debug, Clone)]
pub struct FileAnalysis {
    /// Language name, or `"text"`.
    pub language: String,
    pub lines: usize,
    pub symbols: Vec<SymbolEntry>,
    pub references: Vec<Reference>,
    pub chunks: Vec<Chunk>,
}

/// Analyses `text` of the file at `rel` (language chosen by extension).
pub fn analyse(rel: &str, text: &str, cfg: &IndexConfig) -> FileAnalysis {
    let lines = line_starts(text);
    let n_lines = lines.len();
    if let Some(lang) = language_for_path(Path::new(rel)) {
        let mut parser = SyntaxParser::new(lang);
        if let Some(tree) = parser.parse(text.as_bytes(), None) {
            let symbols = extract_symbols(lang, &tree, text.as_bytes());
            let references = extract_references(lang, &tree, text.as_bytes());
            let mut chunks = symbol_chunks(text, &lines, &symbols, cfg);
            chunks.extend(gap_chunks(text, &lines, &symbols, cfg));
            let entries = symbols
                .iter()
                .map(|s| SymbolEntry {
                    name: s.name.clone(),
                    kind: s.kind.as_str().to_string(),
                    start_line: s.start.row + 1,
                    end_line: s.end.row + 1,
                    signature: s.signature.clone(),
                    parent: s.parent,
                })
                .collect();
            return FileAnalysis {
                language: lang.name.to_string(),
                lines: n_lines,
                symbols: entries,
                references,
                chunks,
            };
        }
    }
    let chunks = windows(text, &lines, 0, n_lines, cfg);
    FileAnalysis { language: "text".into(), lines: n_lines, symbols: Vec::new(), references: Vec::new(), chunks }
}

/// Byte offset of the start of each line.
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(text.match_indices('\n').map(|(i, _)| i + 1).filter(|&i| i < text.len()));
    v
}

/// Text of 0-based lines `[from, to)`.
fn line_text<'a>(text: &'a str, lines: &[usize], from: usize, to: usize) -> &'a str {
    let start = lines.get(from).copied().unwrap_or(text.len());
    let end = lines.get(to).copied().unwrap_or(text.len());
    &text[start..end.max(start)]
}

fn container(symbols: &[Symbol], mut parent: Option<usize>) -> String {
    let mut names = Vec::new();
    while let Some(p) = parent {
        names.push(symbols[p].name.as_str());
        parent = symbols[p].parent;
    }
    names.reverse();
    names.join(".")
}

fn symbol_chunks(text: &str, lines: &[usize], symbols: &[Symbol], cfg: &IndexConfig) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        let (first, last) = (s.start.row, s.end.row);
        let len = last - first + 1;
        let base = Chunk {
            symbol: s.name.clone(),
            kind: s.kind.as_str().to_string(),
            signature: s.signature.clone(),
            doc: s.doc.clone().unwrap_or_default(),
            container: container(symbols, s.parent),
            body: String::new(),
            start_line: first + 1,
            end_line: last + 1,
        };
        if len <= cfg.max_chunk_lines {
            // Nested symbols inside a small parent are still their own chunks, so the
            // parent's chunk keeps its whole text: a search for the method finds both.
            out.push(Chunk { body: line_text(text, lines, first, last + 1).to_string(), ..base });
            continue;
        }
        // A large body: the parent's own lines outside its direct children, in windows.
        let children: Vec<(usize, usize)> =
            symbols.iter().filter(|c| c.parent == Some(i)).map(|c| (c.start.row, c.end.row)).collect();
        let mut pieces = Vec::new();
        let mut cur = first;
        for (cs, ce) in children.iter().copied().chain(std::iter::once((last + 1, last))) {
            if cs > cur {
                pieces.push((cur, cs));
            }
            cur = cur.max(ce + 1);
        }
        for (from, to) in pieces {
            for w in windows(text, lines, from, to.min(last + 1), cfg) {
                out.push(Chunk { body: w.body, start_line: w.start_line, end_line: w.end_line, ..base.clone() });
            }
        }
    }
    out
}

/// Top-level text outside every symbol (imports, scripts), in windows.
fn gap_chunks(text: &str, lines: &[usize], symbols: &[Symbol], cfg: &IndexConfig) -> Vec<Chunk> {
    let mut covered = vec![false; lines.len()];
    for s in symbols.iter().filter(|s| s.parent.is_none()) {
        for c in covered.iter_mut().take(s.end.row + 1).skip(s.start.row) {
            *c = true;
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < covered.len() {
        if covered[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < covered.len() && !covered[i] {
            i += 1;
        }
        let body = line_text(text, lines, start, i);
        if !body.trim().is_empty() {
            out.extend(windows(text, lines, start, i, cfg));
        }
    }
    out
}

/// Windows of `window_lines` with `window_overlap_lines` overlap over 0-based lines `[from, to)`.
fn windows(text: &str, lines: &[usize], from: usize, to: usize, cfg: &IndexConfig) -> Vec<Chunk> {
    let mut out = Vec::new();
    let step = cfg.window_lines.saturating_sub(cfg.window_overlap_lines).max(1);
    let mut start = from;
    while start < to {
        let end = (start + cfg.window_lines).min(to);
        let body = line_text(text, lines, start, end);
        if body.trim().is_empty() {
            start += step;
            continue;
        }
        out.push(Chunk {
            symbol: String::new(),
            kind: "window".into(),
            signature: String::new(),
            doc: String::new(),
            container: String::new(),
            body: body.to_string(),
            start_line: start + 1,
            end_line: end,
        });
        if end == to {
            break;
        }
        start += step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> IndexConfig {
        let mut c = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config.index;
        c.max_chunk_lines = 10;
        c.window_lines = 20;
        c.window_overlap_lines = 5;
        c
    }

    #[test]
    fn unparsed_files_become_overlapping_windows() {
        let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let a = analyse("notes.txt", &text, &cfg());
        let ranges: Vec<(usize, usize)> = a.chunks.iter().map(|c| (c.start_line, c.end_line)).collect();
        assert_eq!(ranges, vec![(1, 20), (16, 35), (31, 50)]);
        assert!(a.chunks[0].body.starts_with("line 1\n") && a.chunks[0].body.ends_with("line 20\n"));
    }

    #[test]
    fn large_symbols_split_at_inner_symbols() {
        let mut src = String::from("import os\n\nclass Big:\n    \"\"\"Doc.\"\"\"\n");
        for m in 0..3 {
            src.push_str(&format!("    def m{m}(self):\n        a = 1\n        return a\n\n"));
        }
        src.push_str("    X = 1\n");
        let a = analyse("big.py", &src, &cfg());
        let kinds: Vec<(String, String, usize, usize)> =
            a.chunks.iter().map(|c| (c.symbol.clone(), c.container.clone(), c.start_line, c.end_line)).collect();
        // The class (17 lines > 10) is split: its own lines around the methods, not the methods again.
        assert!(kinds.contains(&("Big".into(), "".into(), 3, 4)), "{kinds:?}");
        assert!(kinds.contains(&("m0".into(), "Big".into(), 5, 7)), "{kinds:?}");
        assert!(kinds.contains(&("".into(), "".into(), 1, 2)), "{kinds:?}");
        assert!(a.chunks.iter().all(|c| c.end_line >= c.start_line));
        assert_eq!(a.chunks.iter().find(|c| c.symbol == "Big").unwrap().doc, "Doc.");
    }
}
