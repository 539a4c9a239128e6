//! The context builder never exceeds the budget; the token estimate never
//! under-counts the real tokenizers of the test models.
//! Run: cargo test --test context_budget

use std::path::Path;
use tinycoder::config::{ConfigInputs, LoadedConfig, ModelRole, PromptLibrary};
use tinycoder::context::{
    ContextBuilder, ContextError, ContextRequest, RequestKind, SectionKind, StaticMemory, TokenBudget, TokenCounter,
    TokenEstimator,
};
use tinycoder::index::WorkspaceIndex;
use tokio_util::sync::CancellationToken;

#[derive(serde::Deserialize)]
struct Sample {
    source: String,
    text: String,
    counts: std::collections::BTreeMap<String, usize>,
}

#[test]
fn estimate_never_under_counts_the_calibration_samples() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/token_calibration/samples.json");
    let samples: Vec<Sample> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(samples.len() >= 40);
    let budget = LoadedConfig::load(&ConfigInputs::default()).unwrap().config.budget;
    let est = TokenEstimator::new(&budget);
    let mut ratio_sum = 0.0;
    for s in &samples {
        let real = *s.counts.values().max().unwrap();
        let e = est.estimate(&s.text);
        assert!(e >= real, "{}: estimate {e} < real {real} ({:?})", s.source, s.counts);
        ratio_sum += e as f64 / real as f64;
    }
    eprintln!("mean over-count {:.2}x over {} samples", ratio_sum / samples.len() as f64, samples.len());
}

/// A tiny deterministic PRNG (xorshift), so the loop is reproducible without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_never_exceeds_num_ctx_across_random_requests() {
    let cache = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let loaded = LoadedConfig::load(&ConfigInputs::default()).unwrap();
    let mut config = loaded.config.clone();
    config.index.watch = false;
    let index = WorkspaceIndex::open(&root, cache.path(), &config.index).unwrap();
    let summary = index.index_all(|_| {}, &CancellationToken::new()).unwrap();
    let files: Vec<String> = index.with_files(|t| t.files.keys().cloned().collect());
    assert!(files.len() > 40);
    let prompts = PromptLibrary::load(None).unwrap();
    let counter = TokenCounter::estimating(&config.budget);
    let words = ["fix", "mismatched", "types", "expected", "usize", "found", "config", "index", "parse", "budget"];
    let mut rng = Rng(0x5eed_1234_abcd);
    let mut dropped_seen = std::collections::BTreeSet::new();
    let mut refused = 0;
    for i in 0..120 {
        let num_ctx = [1024u32, 1536, 2048, 3000, 4096, 8192][rng.below(6)];
        config.models.coder.num_ctx = num_ctx;
        config.budget.reserved_output_tokens = [256u32, 512, 700][rng.below(3)];
        let memory = StaticMemory(
            (0..rng.below(6)).map(|k| format!("memory {k}: {}", words.join(" ").repeat(1 + rng.below(4)))).collect(),
        );
        let path = files[rng.below(files.len())].clone();
        let lines = index.with_files(|t| t.files[&path].lines).max(1);
        let line = 1 + rng.below(lines);
        let msg: Vec<&str> = (0..1 + rng.below(30)).map(|_| words[rng.below(words.len())]).collect();
        let kind = match i % 3 {
            0 => RequestKind::Diagnostic { path, line, message: msg.join(" ") },
            1 => RequestKind::Selection {
                path,
                start_line: line,
                end_line: (line + rng.below(40)).min(lines),
                instruction: msg.join(" "),
            },
            _ => RequestKind::Question { text: msg.join(" "), path: None },
        };
        let builder =
            ContextBuilder { index: &index, prompts: &prompts, config: &config, memory: &memory, counter: &counter };
        let budget = TokenBudget::for_role(&config, ModelRole::Coder);
        let built = match builder.build(&ContextRequest { kind: kind.clone(), role: ModelRole::Coder }).await {
            Ok(b) => b,
            Err(ContextError::DoesNotFit { needed, available, .. }) => {
                // Only when nothing droppable is left: the system prompt and request alone are too big.
                assert!(needed > available && available == budget.available());
                refused += 1;
                continue;
            }
            Err(e) => panic!("request {i}: {e}"),
        };
        // The whole prompt, counted as one text, fits with the reserved output and margin.
        let total = counter.estimator().estimate(&built.prompt());
        assert_eq!(total, built.budget.total);
        assert!(budget.can_fit(total), "request {i} {kind:?}: {total} tokens + reserve > num_ctx {num_ctx}");
        assert!(built.sections.iter().any(|s| s.kind == SectionKind::System));
        dropped_seen.extend(built.budget.dropped.iter().map(|d| d.split(' ').next().unwrap_or("").to_string()));
    }
    // The loop must have exercised the drop order, or it proves nothing.
    for step in ["folder", "memory", "code"] {
        assert!(dropped_seen.contains(step), "never dropped {step}: {dropped_seen:?}");
    }
    assert!(refused < 20, "{refused} of 120 requests refused");
    eprintln!("{} files, {refused} refused, drops seen: {dropped_seen:?}", summary.files);
}
