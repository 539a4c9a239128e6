//! Retrieval quality on real code: 144 questions (tests/retrieval/python.toml,
//! tests/retrieval/rust.toml) over the machine's Python standard library and the
//! serde_json crate, in three kinds (identifiers, plain-language descriptions,
//! real error output), each split into a tuning and a held-out part. Reports
//! recall@1, recall@5 and MRR of the index search next to a plain symbol-level
//! BM25 computed in the same run (see retrieval_support/bm25.rs).
//!
//! Run: cargo test --release --test retrieval_eval -- --nocapture
//! `TC_EVAL_CACHE=DIR` keeps the corpora and indexes between runs (delete it after
//! changing how files are indexed); `TC_EVAL_SHOW=tune|heldout|all` lists each
//! question's rank and top results for that split.

mod retrieval_support;

use retrieval_support::bm25::Bm25;
use retrieval_support::{
    check_targets_exist, index_config, is_target, open_index, python_workspace, questions, rust_workspace, scratch,
    Question, Report, DEPTH,
};
use tinycoder::index::WorkspaceIndex;

struct Corpus {
    language: &'static str,
    index: WorkspaceIndex,
    baseline: Bm25,
    questions: Vec<Question>,
    _keep: Vec<retrieval_support::Scratch>,
}

fn corpus(language: &'static str) -> Corpus {
    let ws = if language == "python" { python_workspace() } else { rust_workspace() };
    let cache = scratch(&format!("{language}-index"));
    let index = open_index(&ws.path, &cache.path, &index_config());
    let baseline = Bm25::build(&index);
    eprintln!("{language}: baseline over {} definitions", baseline.len());
    let questions = questions(language);
    check_targets_exist(&index, &questions);
    Corpus { language, index, baseline, questions, _keep: vec![ws, cache] }
}

fn show(split: &str) -> bool {
    std::env::var("TC_EVAL_SHOW").is_ok_and(|s| s == split || s == "all")
}

/// Evaluates both systems on every question of `c` into `report`.
fn evaluate(c: &Corpus, report: &mut Report) {
    for q in &c.questions {
        let hits = c.index.search(&q.text, DEPTH).expect("search");
        let ours = hits.iter().position(|h| is_target(&q.targets, &h.path, &h.container, &h.symbol));
        let base_hits = c.baseline.search(&q.text, DEPTH);
        let base = base_hits.iter().position(|d| is_target(&q.targets, &d.path, &d.container, &d.symbol));
        report.add(c.language, q, "tinycoder", ours);
        report.add(c.language, q, "bm25", base);
        if show(&q.split) {
            let rank = |r: Option<usize>| r.map(|r| format!("@{}", r + 1)).unwrap_or_else(|| "miss".into());
            let top: Vec<String> = hits.iter().take(3).map(|h| format!("{}::{}", h.path, h.symbol)).collect();
            let first = q.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            eprintln!("{:<12} ours {:>4} bm25 {:>4}  {:<60.60} -> {top:?}", q.id, rank(ours), rank(base), first);
        }
    }
}

#[test]
fn retrieval_quality_against_plain_bm25() {
    let mut report = Report::default();
    for language in ["python", "rust"] {
        let c = corpus(language);
        let per_kind = |kind: &str| c.questions.iter().filter(|q| q.kind == kind).count();
        assert!(c.questions.len() >= 60, "{language}: {} questions", c.questions.len());
        for kind in ["identifier", "description", "error"] {
            assert!(per_kind(kind) * 4 >= c.questions.len(), "{language}: too few {kind} questions");
        }
        evaluate(&c, &mut report);
    }
    eprintln!("\n{}", report.markdown(&["tinycoder", "bm25"]));
}
