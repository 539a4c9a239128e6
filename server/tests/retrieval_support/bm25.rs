//! The plain baseline the ranking is compared with: symbol-level BM25 (k1 =
//! 1.2, b = 0.75), one document per function, method, class or other
//! definition (its whole text, Rust doc comments and attributes above it
//! included), identifiers split at `_` and camelCase, lower-cased; no field
//! weights, stemming, stop words or query parsing.

use std::collections::HashMap;
use tinycoder::index::tokenizer::split_identifier;
use tinycoder::index::WorkspaceIndex;

/// One baseline document: a definition.
pub struct Doc {
    pub path: String,
    pub container: String,
    pub symbol: String,
}

/// A file's definitions: (name, enclosing names joined by `.`, first line, last line).
type Definitions = Vec<(String, String, usize, usize)>;

/// An in-memory inverted index over the definitions of a workspace.
pub struct Bm25 {
    docs: Vec<Doc>,
    lens: Vec<f32>,
    avg_len: f32,
    postings: HashMap<String, Vec<(u32, u32)>>,
}

/// Lower-cased identifier parts of `text`.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()) {
        for (s, e) in split_identifier(word) {
            out.push(word[s..e].to_lowercase());
        }
    }
    out
}

impl Bm25 {
    /// Builds the baseline from the symbols the index's file table holds (same files, same symbol ranges).
    pub fn build(index: &WorkspaceIndex) -> Self {
        let files: Vec<(String, Definitions)> = index.with_files(|t| {
            t.files
                .iter()
                .map(|(rel, r)| {
                    let syms = r
                        .symbols
                        .iter()
                        .filter(|s| !matches!(s.kind.as_str(), "constant" | "module"))
                        .map(|s| {
                            let mut chain = Vec::new();
                            let mut p = s.parent;
                            while let Some(i) = p {
                                chain.push(r.symbols[i].name.clone());
                                p = r.symbols[i].parent;
                            }
                            chain.reverse();
                            (s.name.clone(), chain.join("."), s.start_line, s.end_line)
                        })
                        .collect();
                    (rel.clone(), syms)
                })
                .collect()
        });
        let mut bm = Bm25 { docs: Vec::new(), lens: Vec::new(), avg_len: 0.0, postings: HashMap::new() };
        for (rel, syms) in files {
            if syms.is_empty() {
                continue;
            }
            let Some(text) = index.file_text(&rel) else { continue };
            let lines: Vec<&str> = text.lines().collect();
            for (symbol, container, start, end) in syms {
                let mut first = start.saturating_sub(1);
                while first > 0 && rel.ends_with(".rs") && {
                    let l = lines[first - 1].trim_start();
                    l.starts_with("///") || l.starts_with("#[")
                } {
                    first -= 1;
                }
                let body = lines.get(first..end.min(lines.len())).unwrap_or_default().join("\n");
                let id = bm.docs.len() as u32;
                let mut tf: HashMap<String, u32> = HashMap::new();
                let toks = tokens(&body);
                for t in &toks {
                    *tf.entry(t.clone()).or_default() += 1;
                }
                for (t, n) in tf {
                    bm.postings.entry(t).or_default().push((id, n));
                }
                bm.lens.push(toks.len() as f32);
                bm.docs.push(Doc { path: rel.clone(), container, symbol });
            }
        }
        bm.avg_len = bm.lens.iter().sum::<f32>() / bm.lens.len().max(1) as f32;
        bm
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// The best `limit` documents for `query`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&Doc> {
        let (k1, b) = (1.2f32, 0.75f32);
        let n = self.docs.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        let mut q = tokens(query);
        q.sort();
        q.dedup();
        for t in q {
            let Some(list) = self.postings.get(&t) else { continue };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(d, tf) in list {
                let tf = tf as f32;
                let norm = tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * self.lens[d as usize] / self.avg_len));
                *scores.entry(d).or_default() += idf * norm;
            }
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(limit).map(|(d, _)| &self.docs[d as usize]).collect()
    }
}
