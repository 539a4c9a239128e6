//! Shared parts of the retrieval evaluation: the two corpora (the machine's
//! Python standard library and the serde_json crate from cargo's registry, copied
//! into a temporary folder), the question sets in `tests/retrieval/`, matching a
//! result against a question's targets, and the metrics.
#![allow(dead_code)] // the evaluation and the tuning run use different parts

pub mod bm25;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tinycoder::config::{ConfigInputs, IndexConfig, LoadedConfig};
use tinycoder::index::WorkspaceIndex;
use tokio_util::sync::CancellationToken;

/// Results looked at per question (MRR counts ranks up to here).
pub const DEPTH: usize = 10;

/// One question of `tests/retrieval/*.toml`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Question {
    pub id: String,
    pub kind: String,
    pub split: String,
    pub text: String,
    pub targets: Vec<String>,
}

#[derive(serde::Deserialize)]
struct QuestionFile {
    query: Vec<Question>,
}

/// The questions of one language (`python` or `rust`).
pub fn questions(language: &str) -> Vec<Question> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/retrieval/{language}.toml"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    toml::from_str::<QuestionFile>(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display())).query
}

/// Whether a result (file, enclosing symbols joined by `.`, symbol) is one of the targets.
pub fn is_target(targets: &[String], path: &str, container: &str, symbol: &str) -> bool {
    if symbol.is_empty() {
        return false;
    }
    let qual = if container.is_empty() { symbol.to_string() } else { format!("{container}.{symbol}") };
    targets.iter().any(|t| {
        let (p, name) = t.split_once("::").unwrap_or((t, ""));
        p == path && (qual == name || qual.ends_with(&format!(".{name}")))
    })
}

/// Every target names a symbol the index knows (a question about a missing symbol would measure nothing).
pub fn check_targets_exist(index: &WorkspaceIndex, qs: &[Question]) {
    let known: Vec<(String, String, String)> = index.with_files(|t| {
        let mut v = Vec::new();
        for (rel, r) in &t.files {
            for s in &r.symbols {
                let mut chain = Vec::new();
                let mut p = s.parent;
                while let Some(i) = p {
                    chain.push(r.symbols[i].name.clone());
                    p = r.symbols[i].parent;
                }
                chain.reverse();
                v.push((rel.clone(), chain.join("."), s.name.clone()));
            }
        }
        v
    });
    for q in qs {
        for t in &q.targets {
            let one = std::slice::from_ref(t);
            assert!(
                known.iter().any(|(p, c, s)| is_target(one, p, c, s)),
                "{}: target {t} is not a symbol of the corpus",
                q.id
            );
        }
    }
}

/// recall@1, recall@5 and MRR (to [`DEPTH`]) over some questions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Metrics {
    pub n: usize,
    pub at1: usize,
    pub at5: usize,
    pub rr: f64,
}

impl Metrics {
    /// Adds one question answered at 0-based `rank` (`None`: not in the results).
    pub fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.at1 += usize::from(r == 0);
            self.at5 += usize::from(r < 5);
            self.rr += 1.0 / (r + 1) as f64;
        }
    }
    pub fn r1(&self) -> f64 {
        self.at1 as f64 / self.n.max(1) as f64
    }
    pub fn r5(&self) -> f64 {
        self.at5 as f64 / self.n.max(1) as f64
    }
    pub fn mrr(&self) -> f64 {
        self.rr / self.n.max(1) as f64
    }
}

/// Metrics keyed by (language, split, kind, system); kind `all` sums the kinds.
#[derive(Default)]
pub struct Report {
    pub rows: BTreeMap<(String, String, String, String), Metrics>,
}

impl Report {
    /// Records one question's rank for `system`.
    pub fn add(&mut self, lang: &str, q: &Question, system: &str, rank: Option<usize>) {
        for kind in [q.kind.as_str(), "all"] {
            let key = (lang.to_string(), q.split.clone(), kind.to_string(), system.to_string());
            self.rows.entry(key).or_default().add(rank);
        }
    }

    /// The metrics of one row.
    pub fn get(&self, lang: &str, split: &str, kind: &str, system: &str) -> Metrics {
        self.rows.get(&(lang.into(), split.into(), kind.into(), system.into())).copied().unwrap_or_default()
    }

    /// A markdown table: one line per language, split and kind, both systems side by side.
    pub fn markdown(&self, systems: &[&str]) -> String {
        let mut out = String::from("| language | split | kind | n |");
        for s in systems {
            out.push_str(&format!(" {s} R@1 | {s} R@5 | {s} MRR |"));
        }
        out.push_str("\n|---|---|---|---|");
        out.push_str(&"---|---|---|".repeat(systems.len()));
        out.push('\n');
        let mut keys: Vec<(String, String, String)> =
            self.rows.keys().map(|(l, s, k, _)| (l.clone(), s.clone(), k.clone())).collect();
        keys.dedup();
        for (l, s, k) in keys {
            let n = self.get(&l, &s, &k, systems[0]).n;
            out.push_str(&format!("| {l} | {s} | {k} | {n} |"));
            for sys in systems {
                let m = self.get(&l, &s, &k, sys);
                out.push_str(&format!(" {:.2} | {:.2} | {:.3} |", m.r1(), m.r5(), m.mrr()));
            }
            out.push('\n');
        }
        out
    }
}

/// The index settings of the evaluation: the defaults (with `$TC_EVAL_CONFIG` over
/// them when set, to try settings without a rebuild), without the watcher.
pub fn index_config() -> IndexConfig {
    let inputs =
        ConfigInputs { user_file: std::env::var_os("TC_EVAL_CONFIG").map(PathBuf::from), ..Default::default() };
    let mut c = LoadedConfig::load(&inputs).expect("configuration").config.index;
    c.watch = false;
    c
}

/// A folder that lives for the run, or under `$TC_EVAL_CACHE/<name>` so repeated runs reuse the index.
pub struct Scratch {
    _temp: Option<tempfile::TempDir>,
    pub path: PathBuf,
}

/// A scratch folder named `name` (see [`Scratch`]).
pub fn scratch(name: &str) -> Scratch {
    match std::env::var_os("TC_EVAL_CACHE") {
        Some(base) => {
            let path = PathBuf::from(base).join(name);
            std::fs::create_dir_all(&path).expect("cache dir");
            Scratch { _temp: None, path }
        }
        None => {
            let t = tempfile::tempdir().expect("tempdir");
            let path = t.path().to_path_buf();
            Scratch { _temp: Some(t), path }
        }
    }
}

/// The machine's Python standard library as a workspace of symlinks: every
/// top-level module and package except third-party packages and caches.
pub fn python_workspace() -> Scratch {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3 must be installed");
    let lib = PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim());
    let ws = scratch("python-ws");
    for e in std::fs::read_dir(&lib).expect("stdlib").flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n == "site-packages" || n == "__pycache__" || n.starts_with("config-") {
            continue;
        }
        let link = ws.path.join(&name);
        if !link.exists() {
            std::os::unix::fs::symlink(e.path(), link).expect("symlink");
        }
    }
    ws
}

/// The serde_json crate this project builds with (its version in Cargo.lock), copied from
/// cargo's registry cache (`$CARGO_HOME/registry/src`) into a scratch folder.
pub fn rust_workspace() -> Scratch {
    #[derive(serde::Deserialize)]
    struct Lock {
        package: Vec<Package>,
    }
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
        version: String,
    }
    let lock_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    let lock: Lock = toml::from_str(&std::fs::read_to_string(&lock_file).expect("Cargo.lock")).expect("lock file");
    let version =
        lock.package.iter().find(|p| p.name == "serde_json").expect("serde_json in Cargo.lock").version.clone();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let src = std::fs::read_dir(home.join("registry/src"))
        .expect("cargo registry cache")
        .flatten()
        .map(|e| e.path().join(format!("serde_json-{version}")))
        .find(|p| p.join("Cargo.toml").exists())
        .expect("serde_json sources in the cargo registry cache (build the project once)");
    let ws = scratch("rust-ws");
    copy_tree(&src, &ws.path);
    ws
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read crate dir").flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            copy_tree(&src, &dst);
        } else if !dst.exists() {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Opens and fully indexes `root` with the index kept in `cache` (both scratch folders).
pub fn open_index(root: &Path, cache: &Path, cfg: &IndexConfig) -> WorkspaceIndex {
    let idx = WorkspaceIndex::open(root, cache, cfg).expect("open index");
    let s = idx.index_all(|_| {}, &CancellationToken::new()).expect("index");
    eprintln!(
        "{}: {} files ({} indexed now), {} symbols, {} chunks, {:.1}s",
        root.display(),
        s.total_files,
        s.indexed,
        s.symbols,
        s.chunks,
        s.seconds
    );
    idx
}
