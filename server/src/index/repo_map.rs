//! The repo map: files and their top symbols, ranked by a PageRank over the
//! file→file reference graph (file A references a name file B defines),
//! personalized by the files and identifiers of the request, rendered to fit
//! a token budget; plus short folder summaries.

use super::files::FileTable;
use super::tokenizer::split_identifier;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What the request is about: it pulls the ranking towards these.
#[derive(Debug, Clone, Default)]
pub struct RepoMapFocus {
    /// Relative paths of files in play (the current file, mentioned files).
    pub files: Vec<String>,
    /// Identifiers from the request (symbols at the cursor, words of the message).
    pub identifiers: Vec<String>,
}

/// One ranked file with the lines it shows.
#[derive(Debug, Clone)]
pub struct RankedFile {
    pub path: String,
    pub rank: f64,
    /// Signatures of its top symbols, best first.
    pub symbols: Vec<String>,
}

/// The ranked files of a workspace.
#[derive(Debug, Clone)]
pub struct RepoMap {
    pub files: Vec<RankedFile>,
}

/// How the repo map ranks and shows files (`[index]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepoMapSettings {
    /// PageRank damping and iterations.
    pub damping: f64,
    pub iterations: usize,
    /// Symbols shown per file.
    pub symbols_per_file: usize,
    /// Names defined in more files than this carry no signal (`new`, `__init__`).
    pub max_definers: usize,
}

impl RepoMapSettings {
    /// The settings as configured.
    pub fn from_config(cfg: &crate::config::IndexConfig) -> Self {
        Self {
            damping: cfg.pagerank_damping,
            iterations: cfg.pagerank_iterations,
            symbols_per_file: cfg.repo_map_symbols_per_file,
            max_definers: cfg.max_definers,
        }
    }
}

fn module_name(path: &str) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    Some(stem.replace('/', "."))
}

/// A symbol as the repo map shows it.
#[derive(Debug, Clone)]
struct MapSymbol {
    name: String,
    line: String,
    top_level: bool,
}

/// The reference graph of a workspace: independent of the request, so it is
/// built once per index change and reused (see `WorkspaceIndex::repo_map`).
#[derive(Debug, Clone, Default)]
pub struct RepoGraph {
    paths: Vec<String>,
    definers: HashMap<String, Vec<usize>>,
    out_edges: Vec<HashMap<usize, f64>>,
    referenced_by: HashMap<String, usize>,
    symbols: Vec<Vec<MapSymbol>>,
    max_definers: usize,
}

/// Files ranked beyond this many get no symbol lines (they never fit a map's budget).
const MAX_RENDERED_FILES: usize = 200;

impl RepoGraph {
    /// The graph of `table`: file A → file B when A references a name B defines (or imports B's module).
    pub fn build(table: &FileTable, max_definers: usize) -> Self {
        let paths: Vec<String> = table.files.keys().cloned().collect();
        let n = paths.len();
        let mut definers: HashMap<String, Vec<usize>> = HashMap::new();
        let mut modules: HashMap<String, usize> = HashMap::new();
        for (i, (path, rec)) in table.files.iter().enumerate() {
            for s in rec.symbols.iter().filter(|s| s.kind != "impl") {
                let v = definers.entry(s.name.clone()).or_default();
                if v.last() != Some(&i) {
                    v.push(i);
                }
            }
            if let Some(m) = module_name(path) {
                // Register every dotted suffix so `email.utils` finds `Lib/email/utils.py`.
                let parts: Vec<&str> = m.split('.').collect();
                for k in 0..parts.len() {
                    modules.entry(parts[k..].join(".")).or_insert(i);
                }
            }
        }
        let mut out_edges: Vec<HashMap<usize, f64>> = vec![HashMap::new(); n];
        let mut referenced_by: HashMap<String, usize> = HashMap::new();
        for (i, rec) in table.files.values().enumerate() {
            for name in &rec.references {
                if let Some(&m) = modules.get(name.as_str()) {
                    if m != i {
                        *out_edges[i].entry(m).or_default() += 1.0;
                    }
                }
                let Some(defs) = definers.get(name.as_str()) else { continue };
                *referenced_by.entry(name.clone()).or_default() += 1;
                if defs.len() > max_definers {
                    continue;
                }
                for &d in defs.iter().filter(|&&d| d != i) {
                    *out_edges[i].entry(d).or_default() += 1.0 / defs.len() as f64;
                }
            }
        }
        let symbols = table
            .files
            .values()
            .map(|rec| {
                rec.symbols
                    .iter()
                    .filter(|s| s.kind != "impl" && s.kind != "constant")
                    .map(|s| MapSymbol {
                        name: s.name.clone(),
                        line: short(&s.signature, &s.name),
                        top_level: s.parent.is_none(),
                    })
                    .collect()
            })
            .collect();
        Self { paths, definers, out_edges, referenced_by, symbols, max_definers }
    }
}

impl RepoMap {
    /// Ranks the files of `table` for `focus`.
    pub fn build(table: &FileTable, focus: &RepoMapFocus, settings: &RepoMapSettings) -> Self {
        Self::rank(&RepoGraph::build(table, settings.max_definers), focus, settings)
    }

    /// Ranks the files of a prebuilt graph for `focus`.
    pub fn rank(g: &RepoGraph, focus: &RepoMapFocus, settings: &RepoMapSettings) -> Self {
        let RepoMapSettings { damping, iterations, symbols_per_file, .. } = *settings;
        let n = g.paths.len();
        if n == 0 {
            return Self { files: Vec::new() };
        }
        // Personalization: focus files, and files defining focus identifiers.
        let mut personal = vec![0.0; n];
        for f in &focus.files {
            if let Ok(i) = g.paths.binary_search(f) {
                personal[i] += 2.0;
            }
        }
        let focus_idents: HashSet<&str> = focus.identifiers.iter().map(String::as_str).collect();
        for id in &focus_idents {
            if let Some(defs) = g.definers.get(*id) {
                for &d in defs.iter().take(g.max_definers) {
                    personal[d] += 1.0 / defs.len() as f64;
                }
            }
        }
        let total: f64 = personal.iter().sum();
        if total == 0.0 {
            personal.iter_mut().for_each(|p| *p = 1.0 / n as f64);
        } else {
            personal.iter_mut().for_each(|p| *p /= total);
        }
        let rank = pagerank(&g.out_edges, &personal, damping, iterations);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| rank[b].total_cmp(&rank[a]).then(g.paths[a].cmp(&g.paths[b])));
        let files = order
            .into_iter()
            .enumerate()
            .map(|(pos, i)| {
                let symbols = if pos < MAX_RENDERED_FILES {
                    let mut syms: Vec<(f64, usize)> = g.symbols[i]
                        .iter()
                        .enumerate()
                        .map(|(k, s)| {
                            let refs = g.referenced_by.get(&s.name).copied().unwrap_or(0) as f64;
                            let top = if s.top_level { 1.0 } else { 0.0 };
                            let hit = if focus_idents.contains(s.name.as_str()) { 100.0 } else { 0.0 };
                            (hit + refs + top, k)
                        })
                        .collect();
                    syms.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    syms.iter().take(symbols_per_file).map(|&(_, k)| g.symbols[i][k].line.clone()).collect()
                } else {
                    Vec::new()
                };
                RankedFile { path: g.paths[i].clone(), rank: rank[i], symbols }
            })
            .collect();
        Self { files }
    }

    /// The files and their top symbols, best first, as many as fit in `budget` tokens of `count`.
    pub fn render_files(&self, budget: usize, count: &dyn Fn(&str) -> usize) -> String {
        let mut out = String::new();
        let mut used = 0;
        for f in &self.files {
            let mut block = format!("{}:\n", f.path);
            for s in &f.symbols {
                block.push_str(&format!("  {s}\n"));
            }
            let c = count(&block);
            if used + c > budget {
                continue; // a smaller block further down may still fit
            }
            used += c;
            out.push_str(&block);
        }
        out
    }

    /// One line per folder (files, top symbols), best folders first, within `budget` tokens.
    pub fn render_folders(&self, budget: usize, count: &dyn Fn(&str) -> usize) -> String {
        let mut folders: BTreeMap<String, FolderStats> = BTreeMap::new();
        for f in &self.files {
            let dir = f.path.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_else(|| ".".into());
            let e = folders.entry(dir).or_default();
            e.0 += f.rank;
            e.1 += 1;
            if e.2.len() < 4 {
                if let Some(s) = f.symbols.first() {
                    e.2.push(name_of(s));
                }
            }
        }
        let mut list: Vec<(String, FolderStats)> = folders.into_iter().collect();
        list.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.0.cmp(&b.0)));
        let mut out = String::new();
        let mut used = 0;
        for (dir, (_, files, syms)) in list {
            let line = if syms.is_empty() {
                format!("{dir}/ ({files} files)\n")
            } else {
                format!("{dir}/ ({files} files): {}\n", syms.join(", "))
            };
            let c = count(&line);
            if used + c > budget {
                break;
            }
            used += c;
            out.push_str(&line);
        }
        out
    }
}

/// Summed rank, file count and a few top symbol names of a folder.
type FolderStats = (f64, usize, Vec<String>);

/// A signature cut to a readable length.
fn short(signature: &str, name: &str) -> String {
    let s = if signature.is_empty() { name } else { signature };
    if s.chars().count() > 100 {
        s.chars().take(100).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

/// The identifier a signature line defines (last identifier before `(`), for folder lines.
fn name_of(sig: &str) -> String {
    let head = sig.split('(').next().unwrap_or(sig);
    head.split(|c: char| !(c.is_alphanumeric() || c == '_')).rfind(|w| !w.is_empty()).unwrap_or(head).to_string()
}

/// Personalized PageRank; dangling files give their rank back to the personalization vector.
fn pagerank(out: &[HashMap<usize, f64>], personal: &[f64], damping: f64, iterations: usize) -> Vec<f64> {
    let n = out.len();
    let mut rank = personal.to_vec();
    let totals: Vec<f64> = out.iter().map(|e| e.values().sum()).collect();
    for _ in 0..iterations {
        let mut next: Vec<f64> = personal.iter().map(|p| (1.0 - damping) * p).collect();
        let mut dangling = 0.0;
        for i in 0..n {
            if totals[i] == 0.0 {
                dangling += rank[i];
                continue;
            }
            for (&j, &w) in &out[i] {
                next[j] += damping * rank[i] * w / totals[i];
            }
        }
        for (x, p) in next.iter_mut().zip(personal) {
            *x += damping * dangling * p;
        }
        rank = next;
    }
    rank
}

/// Identifiers worth focusing on in free text (the words that look like code names).
pub fn identifiers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| w.len() > 2) {
        let code_like =
            w.contains('_') || split_identifier(w).len() > 1 || w.chars().next().is_some_and(char::is_uppercase);
        if code_like && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{analyse, FileRecord};

    fn settings() -> RepoMapSettings {
        RepoMapSettings { damping: 0.85, iterations: 30, symbols_per_file: 3, max_definers: 12 }
    }

    fn table(files: &[(&str, &str)]) -> FileTable {
        let cfg = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config.index;
        let mut t = FileTable::default();
        for (p, src) in files {
            let a = analyse(p, src, &cfg);
            t.files.insert(p.to_string(), FileRecord::new(&a, 0, 0, 0));
        }
        t
    }

    #[test]
    fn referenced_files_rank_higher_and_focus_pulls() {
        let t = table(&[
            ("core.py", "class Engine:\n    def run(self):\n        pass\n"),
            ("a.py", "from core import Engine\ndef a():\n    Engine().run()\n"),
            ("b.py", "from core import Engine\ndef b():\n    Engine()\n"),
            ("lonely.py", "def lonely():\n    pass\n"),
        ]);
        let m = RepoMap::build(&t, &RepoMapFocus::default(), &settings());
        assert_eq!(m.files[0].path, "core.py", "{:?}", m.files);
        assert_eq!(m.files[0].symbols[0], "class Engine");
        let focus = RepoMapFocus { files: vec![], identifiers: vec!["lonely".into()] };
        let m = RepoMap::build(&t, &focus, &settings());
        assert_eq!(m.files[0].path, "lonely.py");
        let count = |s: &str| s.len() / 4 + 1;
        let small = m.render_files(8, &count);
        assert!(count(&small) <= 9 && !small.is_empty(), "{small}");
        assert!(m.render_folders(100, &count).starts_with("./ (4 files)"));
    }
}
