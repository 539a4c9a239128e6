//! Index benchmarks, each against a baseline measured in the same run:
//! cold index of the Python stdlib vs tree-sitter parse-only; warm start vs
//! a bare walk; one-file reindex vs analysing that file; query latency vs a
//! single-term query (the queries: every question of tests/retrieval/python.toml);
//! context build vs the repo map alone; RSS after indexing
//! vs before. Run: cargo bench --bench index   (TC_BENCH_ROOT=DIR to use another tree)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tinycoder::config::{ConfigInputs, LoadedConfig, ModelRole, PromptLibrary};
use tinycoder::context::{ContextBuilder, ContextRequest, NoMemory, RequestKind, TokenCounter};
use tinycoder::index::walk::walk_workspace;
use tinycoder::index::{analyse, RepoMap, RepoMapFocus, RepoMapSettings, WorkspaceIndex};
use tinycoder::syntax::{language_for_path, SyntaxParser};
use tokio_util::sync::CancellationToken;

fn stdlib_workspace() -> (tempfile::TempDir, PathBuf) {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3");
    let lib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
    let ws = tempfile::tempdir().expect("tempdir");
    // Everything but third-party packages and bytecode caches.
    for e in std::fs::read_dir(&lib).expect("stdlib").flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n == "site-packages" || n == "__pycache__" || n.starts_with("config-") {
            continue;
        }
        let _ = std::os::unix::fs::symlink(e.path(), ws.path().join(&name));
    }
    let root = ws.path().to_path_buf();
    (ws, root)
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| l.to_string()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let (_guard, root) = match std::env::var_os("TC_BENCH_ROOT") {
        Some(r) => (tempfile::tempdir().expect("tempdir"), PathBuf::from(r)),
        None => stdlib_workspace(),
    };
    // Only TINYCODER_*__* variables apply (e.g. TINYCODER_INDEX__WRITER_MEMORY_MB); no user file.
    let env = std::env::vars().filter(|(k, _)| k.starts_with("TINYCODER_") && k.contains("__")).collect();
    let loaded = LoadedConfig::load(&ConfigInputs { env, ..ConfigInputs::default() }).expect("config");
    let mut config = loaded.config.clone();
    config.index.watch = false;
    let cache = tempfile::tempdir().expect("tempdir");
    let files = walk_workspace(&root, &config.index);
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let mb = bytes as f64 / 1e6;
    println!("corpus: {} ({} files, {:.1} MB)", root.display(), files.len(), mb);

    // 1. Cold index vs tree-sitter parse-only.
    let t = Instant::now();
    let mut parsed = 0;
    let mut parsed_bytes = 0usize;
    for f in &files {
        if let (Some(lang), Ok(text)) = (language_for_path(&f.abs), std::fs::read(&f.abs)) {
            let mut p = SyntaxParser::new(lang);
            if p.parse(&text, None).is_some() {
                parsed += 1;
                parsed_bytes += text.len();
            }
        }
    }
    let parse_s = t.elapsed().as_secs_f64();
    let rss_before = rss_kb();
    let t = Instant::now();
    let idx = WorkspaceIndex::open(&root, cache.path(), &config.index).expect("open");
    // When the last file was analysed and handed to the writer: the rest is the final commit.
    let last_file = std::sync::Mutex::new(t);
    let s =
        idx.index_all(|_| *last_file.lock().expect("lock") = Instant::now(), &CancellationToken::new()).expect("index");
    let cold_s = t.elapsed().as_secs_f64();
    let files_s = last_file.into_inner().expect("lock").duration_since(t).as_secs_f64();
    let rss_after = rss_kb();
    println!(
        "cold index: {:.2}s ({:.2}s analysing and adding files, {:.2}s final commit), {:.0} indexed files/s, {:.2} MB/s of indexed text ({} of {} walked files indexed, {:.1} MB, {} symbols, {} chunks) | tree-sitter parse-only baseline (read + parse every .py/.rs): {:.2}s, {:.0} files/s, {:.2} MB/s ({parsed} files) | ratio {:.1}x",
        cold_s, files_s, cold_s - files_s, s.indexed as f64 / cold_s, s.bytes as f64 / 1e6 / cold_s, s.indexed, s.files, s.bytes as f64 / 1e6, s.symbols, s.chunks,
        parse_s, parsed as f64 / parse_s, parsed_bytes as f64 / 1e6 / parse_s, cold_s / parse_s
    );
    println!(
        "RSS: {} MB after indexing | baseline before indexing {} MB | +{} MB",
        rss_after / 1024,
        rss_before / 1024,
        (rss_after.saturating_sub(rss_before)) / 1024
    );

    // 2. Warm start with nothing changed vs a bare walk.
    drop(idx);
    let t = Instant::now();
    let _ = walk_workspace(&root, &config.index);
    let walk_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let idx = WorkspaceIndex::open(&root, cache.path(), &config.index).expect("open");
    let w = idx.index_all(|_| {}, &CancellationToken::new()).expect("warm");
    let warm_s = t.elapsed().as_secs_f64();
    println!(
        "warm start: {:.3}s ({} reindexed) | walk-only baseline {:.3}s | ratio {:.1}x",
        warm_s,
        w.indexed,
        walk_s,
        warm_s / walk_s
    );

    // 3. One-file reindex (buffer update + flush) vs analysing the file alone.
    let target = files.iter().find(|f| f.rel.ends_with("json/decoder.py")).unwrap_or(&files[0]);
    let text = std::fs::read_to_string(&target.abs).unwrap_or_default();
    let (mut re, mut base) = (Vec::new(), Vec::new());
    for i in 0..20 {
        let t = Instant::now();
        let _ = analyse(&target.rel, &text, &config.index);
        base.push(t.elapsed());
        let t = Instant::now();
        idx.update_buffer(Path::new(&target.rel), format!("{text}\n# edit {i}\n"));
        idx.flush().expect("flush");
        re.push(t.elapsed());
    }
    println!(
        "one-file reindex ({}): p50 {:.1} ms p99 {:.1} ms | analyse-only baseline p50 {:.1} ms | ratio {:.1}x",
        target.rel,
        ms(pct(&mut re, 0.5)),
        ms(pct(&mut re, 0.99)),
        ms(pct(&mut base, 0.5)),
        ms(pct(&mut re, 0.5)) / ms(pct(&mut base, 0.5))
    );

    // 4. Query latency vs a one-term query: every question of the Python retrieval
    // evaluation (identifiers, descriptions, pasted tracebacks), 10 rounds.
    #[derive(serde::Deserialize)]
    struct Questions {
        query: Vec<Question>,
    }
    #[derive(serde::Deserialize)]
    struct Question {
        text: String,
    }
    let qfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/retrieval/python.toml");
    let questions: Questions = toml::from_str(&std::fs::read_to_string(qfile).expect("questions")).expect("toml");
    let (mut q, mut one) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for question in &questions.query {
            let t = Instant::now();
            let _ = idx.search(&question.text, 10);
            q.push(t.elapsed());
            let t = Instant::now();
            let _ = idx.search("dedent", 10);
            one.push(t.elapsed());
        }
    }
    println!(
        "query ({} questions x 10): p50 {:.2} ms p99 {:.2} ms max {:.2} ms | one-term baseline p50 {:.2} ms p99 {:.2} ms | ratio p50 {:.1}x",
        questions.query.len(),
        ms(pct(&mut q, 0.5)),
        ms(pct(&mut q, 0.99)),
        ms(pct(&mut q, 1.0)),
        ms(pct(&mut one, 0.5)),
        ms(pct(&mut one, 0.99)),
        ms(pct(&mut q, 0.5)) / ms(pct(&mut one, 0.5))
    );

    // 5. Context build vs the repo map alone.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let prompts = PromptLibrary::load(None).expect("prompts");
    let counter = TokenCounter::estimating(&config.budget);
    let builder =
        ContextBuilder { index: &idx, prompts: &prompts, config: &config, memory: &NoMemory, counter: &counter };
    let map_settings = RepoMapSettings::from_config(&config.index);
    let (mut c, mut rm) = (Vec::new(), Vec::new());
    for (i, f) in files.iter().filter(|f| f.rel.ends_with(".py")).step_by(37).take(30).enumerate() {
        let req = ContextRequest {
            kind: RequestKind::Diagnostic {
                path: f.rel.clone(),
                line: 1 + i * 7,
                message: "AttributeError: object has no attribute 'close'".into(),
            },
            role: ModelRole::Coder,
        };
        let t = Instant::now();
        let _ = rt.block_on(builder.build(&req));
        c.push(t.elapsed());
        let t = Instant::now();
        let _ = idx.with_files(|tb| {
            RepoMap::build(tb, &RepoMapFocus { files: vec![f.rel.clone()], identifiers: vec![] }, &map_settings)
        });
        rm.push(t.elapsed());
    }
    println!(
        "context build: p50 {:.1} ms p99 {:.1} ms | uncached repo-map build baseline p50 {:.1} ms p99 {:.1} ms | ratio p99 {:.1}x",
        ms(pct(&mut c, 0.5)), ms(pct(&mut c, 0.99)), ms(pct(&mut rm, 0.5)), ms(pct(&mut rm, 0.99)), ms(pct(&mut c, 0.99)) / ms(pct(&mut rm, 0.99))
    );
}
