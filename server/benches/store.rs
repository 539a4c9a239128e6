//! Store benchmarks (`cargo bench --bench store`): event append latency and
//! throughput through the bus vs a plain INSERT, replay of a 10,000-event
//! task vs reading its rows, and memory search at 10,000 items vs a bare FTS5
//! query. Each baseline runs in the same process on the same kind of file.

use serde_json::json;
use std::time::{Duration, Instant};
use tinycoder::contracts::{EventType, MemoryKind, MemorySource};
use tinycoder::memory::{MemoryFilter, MemoryRetriever, MemoryStore, NewMemory};
use tinycoder::store::{EventBus, NewEvent, NewTask, Store, StoreSettings};

fn pct(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn report(name: &str, samples: &mut [Duration]) -> (Duration, Duration) {
    let total: Duration = samples.iter().sum();
    let (p50, p99) = (pct(samples, 0.50), pct(samples, 0.99));
    let per_sec = samples.len() as f64 / total.as_secs_f64();
    println!("{name:<44} n={:<6} p50={:>9.1?} p99={:>9.1?} throughput={per_sec:>10.0}/s", samples.len(), p50, p99);
    (p50, p99)
}

fn ratio(label: &str, ours: (Duration, Duration), base: (Duration, Duration)) {
    println!(
        "{label:<44} p50 x{:.2}  p99 x{:.2} (vs baseline)\n",
        ours.0.as_secs_f64() / base.0.as_secs_f64().max(1e-12),
        ours.1.as_secs_f64() / base.1.as_secs_f64().max(1e-12)
    );
}

/// A plain INSERT per transaction on a raw connection with the store's pragmas.
fn baseline_insert(path: &std::path::Path, n: usize) -> Vec<Duration> {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE TABLE events (task_id TEXT, sequence INTEGER, type TEXT, payload TEXT, UNIQUE(task_id, sequence));",
    )
    .expect("schema");
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        conn.execute(
            "INSERT INTO events VALUES ('t', ?1, 'llm_called', ?2)",
            rusqlite::params![i as i64, json!({"i": i}).to_string()],
        )
        .expect("insert");
        out.push(t.elapsed());
    }
    out
}

const WORDS: &[&str] = &[
    "TypeError",
    "ValueError",
    "KeyError",
    "IndexError",
    "import",
    "module",
    "list",
    "dict",
    "append",
    "str",
    "int",
    "float",
    "None",
    "attribute",
    "parser",
    "config",
    "test",
    "pytest",
    "cargo",
    "borrow",
    "lifetime",
    "trait",
    "async",
    "await",
    "timeout",
    "socket",
    "file",
    "path",
    "permission",
    "denied",
    "unicode",
    "decode",
    "encode",
    "json",
    "schema",
    "migration",
    "database",
    "query",
    "index",
    "range",
    "overflow",
    "division",
    "zero",
    "recursion",
    "depth",
    "thread",
    "panic",
    "unwrap",
    "option",
    "result",
    "vector",
    "slice",
    "string",
    "format",
    "total",
    "sum",
];

fn sentence(seed: &mut u64, len: usize) -> String {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            WORDS[(*seed % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    // `cargo test --all-targets` runs bench targets without `--bench`: stay quick there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("store bench: skipped (run `cargo bench --bench store`)");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 5_000;

    println!("== event append ({n} events, one transaction each, WAL, synchronous=NORMAL)");
    let base = report("baseline: plain INSERT, same thread", &mut baseline_insert(&dir.path().join("base.sqlite3"), n));
    let store = Store::open(&dir.path().join("bus.sqlite3"), StoreSettings::default()).expect("open");
    let bus = EventBus::new(store.clone());
    let ours = rt.block_on(async {
        bus.create_task(NewTask { task_id: Some("t".into()), input: "bench".into(), ..Default::default() })
            .await
            .expect("task");
        let _sub = bus.subscribe();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            bus.append("t", EventType::LlmCalled, json!({"i": i}), None).await.expect("append");
            out.push(t.elapsed());
        }
        out
    });
    let ours = report("EventBus::append (thread + sequence + publish)", &mut ours.clone());
    ratio("append", ours, base);

    println!("== replay of a 10,000-event task");
    let (replays, reads, folds) = rt.block_on(async {
        bus.create_task(NewTask { task_id: Some("big".into()), input: "bench".into(), ..Default::default() })
            .await
            .expect("task");
        for chunk in 0..100 {
            let batch = (0..100)
                .map(|i| {
                    let step = format!("step-{}", (chunk * 100 + i) / 10);
                    let ty = [EventType::StepStarted, EventType::ToolCalled, EventType::ToolCompleted][i % 3];
                    NewEvent::new(ty, json!({"step_id": step, "output": "ok"}))
                })
                .collect();
            bus.append_all("big", batch).await.expect("batch");
        }
        let (mut replays, mut reads, mut folds) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..15 {
            let t = Instant::now();
            let events = bus.catch_up("big", 0).await.expect("read");
            reads.push(t.elapsed());
            assert!(events.len() > 10_000);
            let t = Instant::now();
            let steps = tinycoder::store::replay(&store, "big").await.expect("replay");
            replays.push(t.elapsed());
            assert_eq!(steps.len(), events.len());
            let t = Instant::now();
            let state = tinycoder::store::replay_state(&store, "big").await.expect("replay_state");
            folds.push(t.elapsed());
            assert_eq!(Some(&state), steps.last().map(|s| &s.1));
        }
        (replays, reads, folds)
    });
    let base = report("baseline: read the 10,001 events", &mut reads.clone());
    let ours = report("replay(): read + reduce, state per step", &mut replays.clone());
    ratio("replay", ours, base);
    let ours = report("replay_state(): read + fold to the final state", &mut folds.clone());
    ratio("replay_state", ours, base);

    println!("== memory search at 10,000 items");
    let memory = MemoryStore::new(store.clone());
    let mut seed = 0x1234_5678_u64;
    rt.block_on(async {
        for i in 0..10_000 {
            let text = format!("{}\nFix: {}", sentence(&mut seed, 8), sentence(&mut seed, 10));
            let kind = MemoryKind::ALL[i % MemoryKind::ALL.len()];
            let new = NewMemory {
                text,
                kind,
                source: MemorySource::Tool,
                weight: (i % 10) as f32 / 10.0,
                task_id: None,
                session_id: None,
                metadata: json!({}),
            };
            memory.insert(new).await.expect("insert");
        }
    });
    let queries: Vec<String> = (0..300).map(|_| sentence(&mut seed, 6)).collect();
    let config = tinycoder::config::LoadedConfig::load(&Default::default()).expect("config").config.memory;
    let retriever = MemoryRetriever::new(memory, config.clone(), None);
    let (ours, base) = rt.block_on(async {
        let (mut ours, mut base) = (Vec::new(), Vec::new());
        for q in &queries {
            let fts = q.split(' ').map(|w| format!("\"{}\"", w.to_lowercase())).collect::<Vec<_>>().join(" OR ");
            let t = Instant::now();
            store
                .call(move |c| {
                    let mut stmt = c.prepare_cached(
                        "SELECT item_id FROM memory_fts WHERE memory_fts MATCH ?1 ORDER BY bm25(memory_fts) LIMIT 10",
                    )?;
                    let ids: Vec<String> = stmt.query_map([fts], |r| r.get(0))?.collect::<Result<_, _>>()?;
                    Ok(ids)
                })
                .await
                .expect("fts");
            base.push(t.elapsed());
            let t = Instant::now();
            let found = retriever.search(q, MemoryFilter::default(), 10).await.expect("search");
            ours.push(t.elapsed());
            assert!(!found.is_empty());
        }
        (ours, base)
    });
    let base = report("baseline: bare FTS5 MATCH top 10", &mut base.clone());
    let ours = report(&format!("MemoryRetriever::search ({} candidates)", config.candidates), &mut ours.clone());
    ratio("memory search", ours, base);
}
