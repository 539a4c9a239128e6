//! Permission gate benchmark (harness = false): the verdict for every line of the
//! corpus (tests/permissions/*.txt) against a workspace holding the corpus files,
//! with the figures docs/benchmarks.md reports: dangerous lines allowed, everyday
//! lines gated, and the time of one check (p50 / p99 / max over all lines and rounds).
//!
//! Run: `cargo bench --no-default-features --bench permissions` (add `--profile dev`
//! to reuse the dev build; the figures then are debug-build times).

use std::path::Path;
use std::time::{Duration, Instant};
use tinycoder::config::{ConfigInputs, LoadedConfig};
use tinycoder::sandbox::PermissionPolicy;

const ROUNDS: usize = 50;

fn corpus(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/permissions").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split("  ## ").next().unwrap_or(l).to_string())
        .collect()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx.min(samples.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let ws = tempfile::tempdir().expect("tempdir");
    for f in corpus("workspace_files.txt") {
        let p = ws.path().join(f);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, "data\n").expect("write");
    }
    std::fs::create_dir_all(ws.path().join(".git/hooks")).expect("mkdir");
    let config = LoadedConfig::load(&ConfigInputs::default()).expect("default config").config;
    let policy = PermissionPolicy::new(&config.permissions, ws.path()).expect("policy");

    let dangerous: Vec<String> = corpus("dangerous.txt").into_iter().chain(corpus("bypasses.txt")).collect();
    let everyday = corpus("everyday.txt");
    let gated_everyday: Vec<String> =
        corpus("gated_everyday.txt").into_iter().map(|l| l.split("  # ").next().unwrap_or(&l).to_string()).collect();
    let allowed = dangerous.iter().filter(|l| !policy.check(l).dangerous).count();
    let everyday_all: Vec<&String> = everyday.iter().chain(gated_everyday.iter()).collect();
    let gated = everyday_all.iter().filter(|l| policy.check(l).dangerous).count();
    println!("dangerous allowed: {allowed} of {} (dangerous.txt + bypasses.txt)", dangerous.len());
    println!(
        "everyday gated: {gated} of {} (everyday.txt + gated_everyday.txt; 1 in {:.1})",
        everyday_all.len(),
        everyday_all.len() as f64 / gated.max(1) as f64
    );

    let lines: Vec<&String> = dangerous.iter().chain(everyday_all.iter().copied()).collect();
    let mut samples = Vec::with_capacity(lines.len() * ROUNDS);
    for _ in 0..ROUNDS {
        for line in &lines {
            let t = Instant::now();
            std::hint::black_box(policy.check(line));
            samples.push(t.elapsed());
        }
    }
    let n = samples.len();
    let p50 = percentile(&mut samples, 0.50);
    let p99 = percentile(&mut samples, 0.99);
    let max = percentile(&mut samples, 1.0);
    println!(
        "gate time per command: p50 {:.1} us, p99 {:.1} us, max {:.1} us ({n} checks: {} lines x {ROUNDS} rounds)",
        us(p50),
        us(p99),
        us(max),
        lines.len()
    );
}
