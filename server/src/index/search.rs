//! [`WorkspaceIndex::search`]: the one search every caller uses (the context
//! builder, the chat, `tinycoder search`). It parses the query, resolves the
//! places an error points at against the file table (a traceback's
//! `/usr/lib/python3.11/json/decoder.py` is the workspace's `json/decoder.py`;
//! a line becomes the innermost definition around it) and runs the ranked
//! query.

use super::files::FileRecord;
use super::query::{parse_query, Location, ParsedQuery};
use super::ranking::Ranking;
use super::store::{Anchor, SearchHit, SearchPlan};
use super::{IndexError, WorkspaceIndex};
use std::collections::BTreeMap;
use std::path::Path;

impl WorkspaceIndex {
    /// The best chunks for `query` (free text: identifiers, a question, a diagnostic,
    /// pasted error output), one per definition, best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError> {
        self.search_with(query, limit, self.ranking())
    }

    /// [`search`](Self::search) with another ranking (for tuning and comparisons).
    pub fn search_with(&self, query: &str, limit: usize, ranking: &Ranking) -> Result<Vec<SearchHit>, IndexError> {
        let plan = self.plan(&parse_query(query), ranking);
        self.store().search_plan(&plan, ranking, limit)
    }

    /// The query plan of a parsed query: its weighted words, and the definitions
    /// and files it points at that the workspace has.
    pub fn plan(&self, q: &ParsedQuery, ranking: &Ranking) -> SearchPlan {
        let mut plan =
            SearchPlan { words: ranking.query_words(q), about_tests: ranking.about_tests(q), ..Default::default() };
        let root = self.root().to_path_buf();
        self.with_files(|table| {
            for loc in &q.locations {
                let Some(rel) = resolve_path(&table.files, &root, &loc.path) else { continue };
                let score = ranking.location_weight * ranking.location_decay.powi(loc.depth as i32);
                match definition_at(&table.files[&rel], loc) {
                    Some((name, lines)) => push_anchor(&mut plan.anchors, Anchor { path: rel, name, lines, score }),
                    None => push_file(&mut plan.files, rel, ranking.module_weight),
                }
            }
            for module in &q.modules {
                let base = module.replace('.', "/");
                for candidate in [format!("{base}.py"), format!("{base}/__init__.py")] {
                    if let Some(rel) = resolve_path(&table.files, &root, &candidate) {
                        push_file(&mut plan.files, rel, ranking.module_weight);
                        break;
                    }
                }
            }
        });
        plan
    }
}

fn push_anchor(anchors: &mut Vec<Anchor>, a: Anchor) {
    match anchors.iter_mut().find(|x| x.path == a.path && x.name == a.name && x.lines == a.lines) {
        Some(x) => x.score = x.score.max(a.score),
        None => anchors.push(a),
    }
}

fn push_file(files: &mut Vec<(String, f32)>, rel: String, score: f32) {
    if !files.iter().any(|(p, _)| *p == rel) {
        files.push((rel, score));
    }
}

/// The definition a location names: its function when the file has one by that
/// name (the one around the line when there are several), else the innermost
/// definition around the line. The line range is given only when the name is not unique.
fn definition_at(file: &FileRecord, loc: &Location) -> Option<(String, Option<(usize, usize)>)> {
    let around = |s: &super::SymbolEntry| loc.line.is_some_and(|l| s.start_line <= l && l <= s.end_line);
    if let Some(f) = &loc.function {
        let named: Vec<_> = file.symbols.iter().filter(|s| &s.name == f).collect();
        match named.as_slice() {
            [] => {}
            [one] => return Some((one.name.clone(), None)),
            many => {
                let s = many.iter().find(|s| around(s)).unwrap_or(&many[0]);
                return Some((s.name.clone(), Some((s.start_line, s.end_line))));
            }
        }
    }
    let s = file.symbols.iter().filter(|s| around(s)).min_by_key(|s| s.end_line - s.start_line)?;
    let unique = file.symbols.iter().filter(|x| x.name == s.name).count() == 1;
    Some((s.name.clone(), (!unique).then_some((s.start_line, s.end_line))))
}

/// The workspace file a path in error output means: itself (relative, or absolute
/// inside the workspace), a `<frozen module>` of Python, or the indexed file
/// sharing the longest tail of folders with it (an installed copy elsewhere:
/// `/usr/lib/python3.11/json/decoder.py`, a crate in cargo's registry). An
/// absolute path must share at least a folder and the file name.
pub fn resolve_path(files: &BTreeMap<String, FileRecord>, root: &Path, written: &str) -> Option<String> {
    let written = written.trim().replace('\\', "/");
    if let Some(module) = written.strip_prefix("<frozen ").and_then(|m| m.strip_suffix('>')) {
        let base = module.replace('.', "/");
        return [format!("{base}.py"), format!("{base}/__init__.py")].iter().find_map(|c| longest_tail(files, c, 1));
    }
    let p = written.trim_start_matches("./");
    if files.contains_key(p) {
        return Some(p.to_string());
    }
    if let Ok(inside) = Path::new(p).strip_prefix(root) {
        let rel = inside.to_string_lossy().replace('\\', "/");
        if files.contains_key(&rel) {
            return Some(rel);
        }
    }
    longest_tail(files, p, if p.starts_with('/') { 2 } else { 1 })
}

/// The file sharing the most trailing path components with `path` (at least `min`).
fn longest_tail(files: &BTreeMap<String, FileRecord>, path: &str, min: usize) -> Option<String> {
    let want: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let name = *want.last()?;
    let mut best: Option<(usize, &String)> = None;
    for rel in files.keys().filter(|k| k.rsplit('/').next() == Some(name)) {
        let have: Vec<&str> = rel.split('/').collect();
        let shared = want.iter().rev().zip(have.iter().rev()).take_while(|(a, b)| a == b).count();
        if shared >= min && best.is_none_or(|(n, _)| shared > n) {
            best = Some((shared, rel));
        }
    }
    best.map(|(_, rel)| rel.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(paths: &[&str]) -> BTreeMap<String, FileRecord> {
        let rec = FileRecord {
            hash: 0,
            mtime_ns: 0,
            size: 0,
            language: "python".into(),
            lines: 0,
            symbols: Vec::new(),
            references: Vec::new(),
            chunks: 0,
        };
        paths.iter().map(|p| (p.to_string(), rec.clone())).collect()
    }

    #[test]
    fn paths_in_error_output_resolve_to_workspace_files() {
        let t = table(&["json/decoder.py", "json/__init__.py", "importlib/_bootstrap.py", "src/de.rs", "app.py"]);
        let root = Path::new("/work/ws");
        let r = |p: &str| resolve_path(&t, root, p);
        assert_eq!(r("/usr/lib/python3.11/json/decoder.py").as_deref(), Some("json/decoder.py"));
        assert_eq!(r("<frozen importlib._bootstrap>").as_deref(), Some("importlib/_bootstrap.py"));
        assert_eq!(r("/root/.cargo/registry/src/x/serde_json-1.0.154/src/de.rs").as_deref(), Some("src/de.rs"));
        assert_eq!(r("./src/de.rs").as_deref(), Some("src/de.rs"));
        assert_eq!(r("/work/ws/app.py").as_deref(), Some("app.py"));
        // Someone else's app.py, or a file the workspace lacks.
        assert_eq!(r("/home/dev/project/app.py"), None);
        assert_eq!(r("src/main.rs"), None);
    }
}
