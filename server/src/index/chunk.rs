//! Chunks: the units the index stores and search returns. One per symbol
//! (a large body is split at its inner symbols), or line windows for files
//! no grammar parses. Also the per-file analysis the repo map needs.

use super::chunk_text::{
    docstring_lines, is_test_definition, is_test_path, module_docstring_lines, split_text, Syntax,
};
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
    /// What the index matches as code: the chunk's own lines (an inner definition
    /// by its first line only), without comments and docstring.
    pub code: String,
    /// Docstring and comments, matched as English.
    pub prose: String,
    /// Whether this is test code (by its path, name or attributes; see `index.test_*`).
    pub is_test: bool,
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
    let file_is_test = is_test_path(rel, cfg);
    if let Some(lang) = language_for_path(Path::new(rel)) {
        let mut parser = SyntaxParser::new(lang);
        if let Some(tree) = parser.parse(text.as_bytes(), None) {
            let symbols = extract_symbols(lang, &tree, text.as_bytes());
            let references = extract_references(lang, &tree, text.as_bytes());
            let src = Source {
                text,
                starts: &lines,
                lines: text.lines().collect(),
                syntax: Syntax { line_comment: Some(lang.line_comment), docstring_in_body: lang.docstring_in_body },
                file_is_test,
            };
            let mut chunks = symbol_chunks(&src, &symbols, cfg);
            chunks.extend(gap_chunks(&src, &symbols, cfg));
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
    let src = Source {
        text,
        starts: &lines,
        lines: text.lines().collect(),
        syntax: Syntax { line_comment: None, docstring_in_body: false },
        file_is_test,
    };
    let chunks = windows(&src, 0, n_lines, None, cfg);
    FileAnalysis { language: "text".into(), lines: n_lines, symbols: Vec::new(), references: Vec::new(), chunks }
}

/// One file's text as the chunker reads it.
struct Source<'a> {
    text: &'a str,
    /// Byte offset of each line start.
    starts: &'a [usize],
    lines: Vec<&'a str>,
    syntax: Syntax,
    file_is_test: bool,
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

/// Whether each symbol is test code: its file, itself, or an enclosing symbol is.
fn test_flags(src: &Source, symbols: &[Symbol], cfg: &IndexConfig) -> Vec<bool> {
    let mut flags: Vec<bool> = Vec::with_capacity(symbols.len());
    for s in symbols {
        let inherited = src.file_is_test || s.parent.is_some_and(|p| flags[p]);
        let function = matches!(s.kind.as_str(), "function" | "method");
        flags.push(inherited || is_test_definition(&src.lines, s.start.row, &s.name, function, cfg));
    }
    flags
}

fn symbol_chunks(src: &Source, symbols: &[Symbol], cfg: &IndexConfig) -> Vec<Chunk> {
    let tests = test_flags(src, symbols, cfg);
    let mut children_of: Vec<Vec<(usize, usize)>> = vec![Vec::new(); symbols.len()];
    for c in symbols {
        if let Some(p) = c.parent {
            children_of[p].push((c.start.row, c.end.row));
        }
    }
    let mut out = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        let (first, last) = (s.start.row, s.end.row);
        let len = last - first + 1;
        let children = &children_of[i];
        let doc_lines = (src.syntax.docstring_in_body && s.doc.is_some())
            .then(|| docstring_lines(&src.lines, first, last))
            .flatten();
        let base = Chunk {
            symbol: s.name.clone(),
            kind: s.kind.as_str().to_string(),
            signature: s.signature.clone(),
            doc: s.doc.clone().unwrap_or_default(),
            container: container(symbols, s.parent),
            body: String::new(),
            start_line: first + 1,
            end_line: last + 1,
            code: String::new(),
            prose: String::new(),
            is_test: tests[i],
        };
        if len <= cfg.max_chunk_lines {
            // The body keeps the whole text (inner symbols included) for whoever reads
            // the hit; the index matches inner symbols by their first line only.
            let t = split_text(&src.lines, first, last + 1, children, doc_lines, src.syntax);
            let body = line_text(src.text, src.starts, first, last + 1).to_string();
            out.push(Chunk { body, code: t.code, prose: t.prose, ..base });
            continue;
        }
        // A large body: the parent's own lines outside its direct children, in windows.
        let mut pieces = Vec::new();
        let mut cur = first;
        for (cs, ce) in children.iter().copied().chain(std::iter::once((last + 1, last))) {
            if cs > cur {
                pieces.push((cur, cs));
            }
            cur = cur.max(ce + 1);
        }
        for (from, to) in pieces {
            for w in windows(src, from, to.min(last + 1), doc_lines, cfg) {
                out.push(Chunk {
                    body: w.body,
                    start_line: w.start_line,
                    end_line: w.end_line,
                    code: w.code,
                    prose: w.prose,
                    ..base.clone()
                });
            }
        }
    }
    out
}

/// Top-level text outside every symbol (imports, scripts), in windows.
fn gap_chunks(src: &Source, symbols: &[Symbol], cfg: &IndexConfig) -> Vec<Chunk> {
    let mut covered = vec![false; src.starts.len()];
    for s in symbols.iter().filter(|s| s.parent.is_none()) {
        for c in covered.iter_mut().take(s.end.row + 1).skip(s.start.row) {
            *c = true;
        }
    }
    let module_doc = match src.syntax.line_comment {
        Some(comment) if src.syntax.docstring_in_body => module_docstring_lines(&src.lines, comment),
        _ => None,
    };
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
        let body = line_text(src.text, src.starts, start, i);
        if !body.trim().is_empty() {
            out.extend(windows(src, start, i, None, cfg));
        }
    }
    // The module docstring is prose, wherever its window starts.
    if let Some((ds, de)) = module_doc {
        for c in out.iter_mut().filter(|c| c.start_line <= ds + 1 && c.end_line > ds) {
            let t = split_text(&src.lines, c.start_line - 1, c.end_line, &[], Some((ds, de)), src.syntax);
            let doc: Vec<&str> = src.lines[ds..=de.min(src.lines.len() - 1)].to_vec();
            c.code = t.code;
            c.prose = format!("{}\n{}", doc.join("\n"), t.prose);
        }
    }
    out
}

/// Windows of `window_lines` with `window_overlap_lines` overlap over 0-based lines `[from, to)`.
fn windows(src: &Source, from: usize, to: usize, skip: Option<(usize, usize)>, cfg: &IndexConfig) -> Vec<Chunk> {
    let mut out = Vec::new();
    let step = cfg.window_lines.saturating_sub(cfg.window_overlap_lines).max(1);
    let mut start = from;
    while start < to {
        let end = (start + cfg.window_lines).min(to);
        let body = line_text(src.text, src.starts, start, end);
        if body.trim().is_empty() {
            start += step;
            continue;
        }
        let t = split_text(&src.lines, start, end, &[], skip, src.syntax);
        out.push(Chunk {
            symbol: String::new(),
            kind: "window".into(),
            signature: String::new(),
            doc: String::new(),
            container: String::new(),
            body: body.to_string(),
            start_line: start + 1,
            end_line: end,
            code: t.code,
            prose: t.prose,
            is_test: src.file_is_test,
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
