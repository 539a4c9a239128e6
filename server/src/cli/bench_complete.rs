//! `tinycoder bench complete DIR…`: inline completion quality and latency on
//! real code. Cursor positions are sampled in the code files under DIR…: the
//! rest of a line is cut away, the model completes at the cut, and the answer
//! is compared with the line's real rest. tinycoder's path (`complete::suggest`:
//! the `complete_fim` prompt, stop rules, suffix trimming) runs beside
//! llama-server's own `/infill` on the same prefix and suffix, greedy, with
//! `cache_prompt` on both. `--typing N` then types the first N characters of
//! each expected rest, one request per keystroke, as a user who keeps typing:
//! each path answers typed-through text from its own cache of recent
//! suggestions (as tinycoder's server and llama.vim do) and asks its model
//! otherwise, so the keystroke figures show the cache and the KV-cache reuse.

use super::CliContext;
use crate::complete::{suggest, FimWindow, SuggestionCache};
use crate::config::{BackendKind, ModelRole};
use crate::llm::client_from_config;
use ropey::Rope;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder bench complete`.
#[derive(Debug, clap::Args)]
pub struct CompleteBenchArgs {
    /// Folders (or files) whose code files are sampled.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Cursor positions to sample.
    #[arg(long, default_value_t = 40)]
    pub samples: usize,
    /// Seed of the sampling (the same seed picks the same positions).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The completing role's model for this run (default: the configured one).
    #[arg(long)]
    pub model: Option<String>,
    /// llama-server to compare with through `/infill` (default: backend.url when backend.kind is "openai").
    #[arg(long)]
    pub infill_url: Option<String>,
    /// Characters of each expected rest typed after the first suggestion, one request per keystroke.
    #[arg(long, default_value_t = 0)]
    pub typing: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One sampled cursor: the document with the rest of a line cut away, and that rest.
struct Sample {
    file: String,
    rope: Rope,
    cursor: usize,
    expected: String,
}

impl Sample {
    /// The document and cursor after the user typed the first `k` chars of the expected rest.
    fn typed(&self, k: usize) -> (Rope, usize) {
        let typed: String = self.expected.chars().take(k).collect();
        let mut rope = self.rope.clone();
        rope.insert(self.cursor, &typed);
        (rope, self.cursor + typed.chars().count())
    }
}

/// One path's figures.
#[derive(Debug, Serialize)]
struct PathResult {
    path: String,
    samples: usize,
    exact_line_match: f64,
    edit_similarity: f64,
    empty_rate: f64,
    latency_p50_ms: f64,
    latency_p95_ms: f64,
    errors: usize,
    /// Requests made while typing (`--typing`), and how they were answered.
    keystrokes: usize,
    keystroke_p50_ms: f64,
    keystroke_p95_ms: f64,
    keystroke_p99_ms: f64,
    keystroke_cache_rate: f64,
}

/// What one path saw while the user typed: each request's latency and whether its cache answered.
#[derive(Default)]
struct Keystrokes {
    took: Vec<Duration>,
    cached: usize,
}

impl Keystrokes {
    fn add_to(&self, r: &mut PathResult) {
        let mut ms: Vec<f64> = self.took.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(|a, b| a.total_cmp(b));
        r.keystrokes = ms.len();
        r.keystroke_p50_ms = percentile(&ms, 0.5);
        r.keystroke_p95_ms = percentile(&ms, 0.95);
        r.keystroke_p99_ms = percentile(&ms, 0.99);
        r.keystroke_cache_rate = self.cached as f64 / ms.len().max(1) as f64;
    }
}

/// A small deterministic generator (xorshift64*), so a seed names a sample set.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as usize % n.max(1)
    }
}

/// Code files under `dirs` (by extension a syntax the index knows), sorted.
fn code_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| ignore::WalkBuilder::new(d).build().flatten())
        .map(|e| e.into_path())
        .filter(|p| p.is_file() && crate::syntax::language_for_path(p).is_some())
        .collect();
    out.sort();
    out
}

/// `n` cursors: a line with text, cut after a random char past its indentation.
fn sample(files: &[PathBuf], n: usize, seed: u64) -> Vec<Sample> {
    let texts: Vec<(String, String)> =
        files.iter().filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(p).ok()?))).collect();
    let mut lines: Vec<(usize, usize)> = Vec::new();
    for (f, (_, text)) in texts.iter().enumerate() {
        for (l, line) in text.lines().enumerate() {
            // Something typed and something left: at least two chars after the indentation.
            if line.trim().chars().count() >= 2 {
                lines.push((f, l));
            }
        }
    }
    let mut rng = Rng(seed.max(1));
    let mut out = Vec::new();
    for _ in 0..n.min(lines.len()) {
        let (f, l) = lines.swap_remove(rng.below(lines.len()));
        let (file, text) = &texts[f];
        let rope = Rope::from_str(text);
        let line: Vec<char> = text.lines().nth(l).unwrap_or_default().chars().collect();
        let indent = line.iter().take_while(|c| c.is_whitespace()).count();
        let body = line.len() - indent;
        let col = indent + 1 + rng.below(body - 1);
        let expected: String = line[col..].iter().collect();
        let start = rope.line_to_char(l) + col;
        let mut rope = rope;
        rope.remove(start..start + line.len() - col);
        out.push(Sample { file: file.clone(), rope, cursor: start, expected: expected.trim_end().to_string() });
    }
    out
}

/// The value at share `p` (0..=1) of `sorted`, nearest rank; 0 when empty.
pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Figures of one path from (answer, latency) per sample; `None` answers are errors.
fn score(path: &str, samples: &[Sample], answers: &[(Option<String>, Duration)]) -> PathResult {
    let (mut exact, mut sim, mut empty, mut errors) = (0usize, 0f64, 0usize, 0usize);
    let mut ms: Vec<f64> = Vec::new();
    for (s, (answer, took)) in samples.iter().zip(answers) {
        ms.push(took.as_secs_f64() * 1000.0);
        let Some(answer) = answer else {
            errors += 1;
            continue;
        };
        let got = answer.lines().next().unwrap_or_default().trim_end();
        empty += got.trim().is_empty() as usize;
        exact += (got == s.expected) as usize;
        sim += similar::TextDiff::from_chars(got, s.expected.as_str()).ratio() as f64;
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let n = samples.len().max(1) as f64;
    PathResult {
        path: path.into(),
        samples: samples.len(),
        exact_line_match: exact as f64 / n,
        edit_similarity: sim / n,
        empty_rate: empty as f64 / n,
        latency_p50_ms: percentile(&ms, 0.5),
        latency_p95_ms: percentile(&ms, 0.95),
        errors,
        keystrokes: 0,
        keystroke_p50_ms: 0.0,
        keystroke_p95_ms: 0.0,
        keystroke_p99_ms: 0.0,
        keystroke_cache_rate: 0.0,
    }
}

/// llama-server's own fill-in-the-middle: `/infill` on the same window, one line.
async fn infill(
    http: &reqwest::Client,
    url: &str,
    model: &str,
    w: &FimWindow,
    max_tokens: u32,
) -> anyhow::Result<String> {
    let body = serde_json::json!({
        "model": model,
        "input_prefix": w.prefix,
        "input_suffix": w.suffix,
        "prompt": "",
        "n_predict": max_tokens,
        "temperature": 0.0,
        "stop": ["\n"],
        "cache_prompt": true,
    });
    let v: serde_json::Value = http
        .post(format!("{}/infill", url.trim_end_matches('/')))
        .json(&body)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    v.get("content")
        .and_then(|c| c.as_str())
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("/infill reply without content: {v}"))
}

pub async fn run(args: CompleteBenchArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let mut config = ctx.loaded.config.clone();
    let role = config.completion.role;
    if let Some(m) = &args.model {
        let models = &mut config.models;
        let slot = match role {
            ModelRole::Planner => &mut models.planner,
            ModelRole::Coder => &mut models.coder,
            ModelRole::Critic => &mut models.critic,
            ModelRole::Summarizer => &mut models.summarizer,
        };
        slot.name = m.clone();
    }
    let model_name = config.models.get(role).name.clone();
    let client = client_from_config(&config)?;
    let prompts = ctx.prompts()?;
    let cc = config.completion.clone();
    let infill_url = args
        .infill_url
        .clone()
        .or_else(|| (config.backend.kind == BackendKind::Openai).then(|| config.backend.url.clone()));
    let files = code_files(&args.dirs);
    let samples = sample(&files, args.samples, args.seed);
    anyhow::ensure!(!samples.is_empty(), "no code lines to sample under {:?}", args.dirs);
    let window = |rope: &Rope, cursor: usize| {
        FimWindow::around(rope, cursor, cc.max_prefix_chars as usize, cc.max_suffix_chars as usize)
    };
    let http = reqwest::Client::builder().timeout(Duration::from_millis(cc.timeout_ms)).build()?;
    // Warm-up (the model load), not counted.
    let first = window(&samples[0].rope, samples[0].cursor);
    let _ = suggest(client.as_ref(), &prompts, &cc, &first, CancellationToken::new()).await;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut our_keys, mut their_keys) = (Keystrokes::default(), Keystrokes::default());
    let (mut our_cache, mut their_cache) =
        (SuggestionCache::new(cc.cache_entries as usize), SuggestionCache::new(cc.cache_entries as usize));
    for (i, s) in samples.iter().enumerate() {
        for k in 0..=args.typing.min(s.expected.chars().count()) {
            let (rope, cursor) = s.typed(k);
            let w = window(&rope, cursor);
            let t0 = Instant::now();
            let hit = our_cache.get(&s.file, cursor, &w);
            let got = match hit.clone() {
                Some(rest) => Ok(Some(rest)),
                None => suggest(client.as_ref(), &prompts, &cc, &w, CancellationToken::new()).await,
            };
            let took = t0.elapsed();
            match &got {
                Ok(Some(text)) => our_cache.put(&s.file, cursor, &w, text),
                Ok(None) => {}
                Err(e) => tracing::warn!(file = %s.file, "tinycoder: {e}"),
            }
            if k == 0 {
                ours.push((got.ok().map(Option::unwrap_or_default), took));
            } else {
                our_keys.took.push(took);
                our_keys.cached += hit.is_some() as usize;
            }
            let Some(url) = &infill_url else { continue };
            let t0 = Instant::now();
            let hit = their_cache.get(&s.file, cursor, &w);
            let got = match hit.clone() {
                Some(rest) => Ok(rest),
                None => infill(&http, url, &model_name, &w, cc.max_tokens).await,
            };
            let took = t0.elapsed();
            match &got {
                Ok(text) if !text.is_empty() => their_cache.put(&s.file, cursor, &w, text),
                Ok(_) => {}
                Err(e) => tracing::warn!(file = %s.file, "/infill: {e}"),
            }
            if k == 0 {
                theirs.push((got.ok(), took));
            } else {
                their_keys.took.push(took);
                their_keys.cached += hit.is_some() as usize;
            }
        }
        eprintln!("{}/{} {}", i + 1, samples.len(), s.file);
    }
    let mut results = vec![score("tinycoder", &samples, &ours)];
    our_keys.add_to(&mut results[0]);
    if !theirs.is_empty() {
        let mut r = score("llama-server /infill", &samples, &theirs);
        their_keys.add_to(&mut r);
        results.push(r);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("model `{model_name}`, {} samples from {} files, seed {}", samples.len(), files.len(), args.seed);
    println!("| path | exact line | edit similarity | empty | p50 ms | p95 ms | errors |");
    println!("|---|---|---|---|---|---|---|");
    for r in &results {
        println!(
            "| {} | {:.0}% | {:.2} | {:.0}% | {:.0} | {:.0} | {} |",
            r.path,
            r.exact_line_match * 100.0,
            r.edit_similarity,
            r.empty_rate * 100.0,
            r.latency_p50_ms,
            r.latency_p95_ms,
            r.errors
        );
    }
    if args.typing > 0 {
        println!();
        println!("while typing (up to {} keystrokes a sample, one request each):", args.typing);
        println!("| path | keystrokes | from its cache | p50 ms | p95 ms | p99 ms |");
        println!("|---|---|---|---|---|---|");
        for r in &results {
            println!(
                "| {} | {} | {:.0}% | {:.0} | {:.0} | {:.0} |",
                r.path,
                r.keystrokes,
                r.keystroke_cache_rate * 100.0,
                r.keystroke_p50_ms,
                r.keystroke_p95_ms,
                r.keystroke_p99_ms
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_cuts_the_rest_of_a_line_and_expects_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, "def f(x):\n    return x + 1\n").unwrap();
        for seed in 1..20 {
            for s in sample(std::slice::from_ref(&path), 2, seed) {
                let text = s.rope.to_string();
                let (before, after) = (s.rope.slice(..s.cursor).to_string(), s.rope.slice(s.cursor..).to_string());
                assert!(after.starts_with('\n'), "the rest of the line is cut: {text:?}");
                assert!(!s.expected.is_empty(), "something is left to complete");
                let line = before.rsplit('\n').next().unwrap();
                assert!(!line.trim().is_empty(), "something is typed: {line:?}");
                assert!(["def f(x):", "    return x + 1"].contains(&format!("{line}{}", s.expected).as_str()));
            }
        }
    }

    #[test]
    fn typing_inserts_the_first_chars_of_the_expected_rest_at_the_cursor() {
        let s = Sample { file: "f".into(), rope: Rope::from_str("x = \ny\n"), cursor: 4, expected: "max(a, b)".into() };
        let (rope, cursor) = s.typed(4);
        assert_eq!((rope.to_string().as_str(), cursor), ("x = max(\ny\n", 8));
        assert_eq!(s.typed(0).0.to_string(), "x = \ny\n");
    }

    #[test]
    fn scores_count_exact_lines_similarity_empties_and_errors() {
        let s = |e: &str| Sample { file: "f".into(), rope: Rope::new(), cursor: 0, expected: e.into() };
        let samples = [s("x + 1"), s("y)"), s("z"), s("w")];
        let ms = Duration::from_millis;
        let answers =
            [(Some("x + 1".into()), ms(10)), (Some("y".into()), ms(20)), (Some("".into()), ms(30)), (None, ms(40))];
        let r = score("p", &samples, &answers);
        assert_eq!((r.exact_line_match, r.empty_rate, r.errors), (0.25, 0.25, 1));
        assert!(r.edit_similarity > 0.25 && r.edit_similarity < 0.5, "{}", r.edit_similarity);
        assert_eq!((r.latency_p50_ms, r.latency_p95_ms), (30.0, 40.0));
    }
}
