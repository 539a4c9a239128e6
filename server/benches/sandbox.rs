//! Sandbox benchmarks (harness = false): shadow creation for a generated
//! 10,000-file tree against a plain recursive copy, and the overhead of a
//! sandboxed run of a short command against the same command run plainly.
//!
//! Run: `cargo bench --bench sandbox` (add `--profile dev` to reuse the dev build).

use std::path::Path;
use std::time::{Duration, Instant};
use tinycoder::config::{ConfigInputs, LoadedConfig};
use tinycoder::sandbox::{probe_mechanisms, run_sandboxed, RunSpec, ShadowWorkspace};
use tokio_util::sync::CancellationToken;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx.min(samples.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn generate_tree(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("f{i:05}.rs")),
            format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n").repeat(8),
        )
        .expect("write");
    }
}

fn plain_copy(src: &Path, dst: &Path) {
    for entry in std::fs::read_dir(src).expect("read_dir").flatten() {
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
            plain_copy(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).expect("copy");
        }
    }
}

fn report(name: &str, base_name: &str, mut subject: Vec<Duration>, mut baseline: Vec<Duration>) {
    let (s50, s99) = (percentile(&mut subject, 0.5), percentile(&mut subject, 0.99));
    let (b50, b99) = (percentile(&mut baseline, 0.5), percentile(&mut baseline, 0.99));
    println!(
        "{name}: p50 {:.2} ms, p99 {:.2} ms | {base_name}: p50 {:.2} ms, p99 {:.2} ms | ratio p50 {:.2}x, p99 {:.2}x (n={})",
        ms(s50),
        ms(s99),
        ms(b50),
        ms(b99),
        s50.as_secs_f64() / b50.as_secs_f64(),
        s99.as_secs_f64() / b99.as_secs_f64(),
        subject.len()
    );
}

fn bench_shadow() {
    let src = tempfile::tempdir().expect("tempdir");
    generate_tree(src.path(), 10_000);
    let cache = tempfile::tempdir().expect("tempdir");
    let (mut shadow_t, mut copy_t) = (Vec::new(), Vec::new());
    for run in 0..5 {
        let t = Instant::now();
        let shadow = ShadowWorkspace::create(src.path(), cache.path(), &format!("bench-{run}")).expect("shadow");
        shadow_t.push(t.elapsed());
        drop(shadow);
        let dst = tempfile::tempdir().expect("tempdir");
        let t = Instant::now();
        plain_copy(src.path(), dst.path());
        copy_t.push(t.elapsed());
    }
    report("shadow creation, 10,000 files", "plain recursive copy", shadow_t, copy_t);
    // A reused shadow: refresh compares size, mtime and mode and copies nothing.
    let mut shadow = ShadowWorkspace::create(src.path(), cache.path(), "bench-reuse").expect("shadow");
    let (mut refresh_t, mut walk_t) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        shadow.refresh().expect("refresh");
        refresh_t.push(t.elapsed());
        let t = Instant::now();
        let n = tinycoder::sandbox::list_workspace_files(src.path()).expect("walk").len();
        walk_t.push(t.elapsed());
        assert_eq!(n, 10_000);
    }
    report("shadow refresh, 10,000 unchanged files", "workspace walk alone", refresh_t, walk_t);
}

/// A layered shadow against copies, each measured up to a sandboxed `find` that lists the tree's
/// 10,000 files (so the overlay's mount is counted and its contents are checked).
fn bench_layered_shadow(rt: &tokio::runtime::Runtime) {
    let config = LoadedConfig::load(&ConfigInputs::default()).expect("config").config.sandbox;
    let src = tempfile::tempdir().expect("tempdir");
    generate_tree(src.path(), 10_000);
    let cache = tempfile::tempdir().expect("tempdir");
    if let Some(why) = tinycoder::sandbox::layer_unavailable(src.path(), cache.path()) {
        println!("layered shadow not measured: {why}");
        return;
    }
    let cancel = CancellationToken::new();
    let args: Vec<String> = ["-c", "find . -type f | wc -l"].iter().map(|s| s.to_string()).collect();
    let listed = |shadow: &ShadowWorkspace| {
        let spec = RunSpec::in_shadow(&config, "sh", &args, shadow, Duration::from_secs(60)).expect("spec");
        let out = rt.block_on(run_sandboxed(&spec, &cancel)).expect("run");
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout.text.trim(), "10000", "the run sees every file: {out:?}");
    };
    let (mut layered_t, mut copies_t) = (Vec::new(), Vec::new());
    for run in 0..5 {
        let t = Instant::now();
        let shadow =
            ShadowWorkspace::create_for_run(src.path(), cache.path(), &format!("layer-{run}")).expect("shadow");
        assert!(shadow.layer().is_some());
        listed(&shadow);
        layered_t.push(t.elapsed());
        drop(shadow);
        let t = Instant::now();
        let shadow = ShadowWorkspace::create(src.path(), cache.path(), &format!("copies-{run}")).expect("shadow");
        listed(&shadow);
        copies_t.push(t.elapsed());
    }
    report("layered shadow + sandboxed find, 10,000 files", "copied shadow + the same find", layered_t, copies_t);
}

fn bench_run_overhead(rt: &tokio::runtime::Runtime, program: &str, args: &[&str], n: usize) {
    let inputs = ConfigInputs::default();
    let config = LoadedConfig::load(&inputs).expect("config").config.sandbox;
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("a.txt"), "a").expect("write");
    let cache = tempfile::tempdir().expect("tempdir");
    let shadow = ShadowWorkspace::create(ws.path(), cache.path(), "bench-run").expect("shadow");
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let spec = RunSpec::in_shadow(&config, program, &args, &shadow, Duration::from_secs(30)).expect("spec");
    let cancel = CancellationToken::new();
    let (mut sandboxed, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        let out = rt.block_on(run_sandboxed(&spec, &cancel)).expect("run");
        sandboxed.push(t.elapsed());
        assert!(out.success(), "{out:?}");
        let t = Instant::now();
        let status = rt
            .block_on(async {
                tokio::process::Command::new(program).args(&args).current_dir(shadow.path()).output().await
            })
            .expect("plain");
        plain.push(t.elapsed());
        assert!(status.status.success());
    }
    report(&format!("sandboxed `{program} {}`", args.join(" ")), "plain", sandboxed, plain);
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    for m in probe_mechanisms() {
        println!("mechanism {:<18} enforced={}", m.name, m.enforced);
    }
    bench_layered_shadow(&rt);
    // `cargo bench --bench sandbox -- layered`: the layered shadow only.
    if std::env::args().any(|a| a == "layered") {
        return;
    }
    bench_shadow();
    bench_run_overhead(&rt, "true", &[], 100);
    bench_run_overhead(&rt, "python3", &["-c", "pass"], 30);
}
