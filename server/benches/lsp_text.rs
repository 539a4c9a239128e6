//! Keystroke-path benchmarks of the language server's text layer:
//! didChange apply (rope edit + incremental reparse) on 20,000-line Rust and
//! Python files against replacing the whole text (+ full parse) as baseline;
//! code action listing; idle RSS of the server process.
//!
//! Run: `cargo bench --bench lsp_text` (prints p50/p99 and ratios).

use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};
use tinycoder::lsp::code_actions::list_actions;
use tinycoder::syntax::{language_by_name, IncrementalTree};
use tinycoder::text::{Document, PositionEncoding, TextChange, TextPosition, TextRange};
use tower_lsp_server::ls_types::{Diagnostic, Position, Range, Uri};

const LINES: usize = 20_000;

fn rust_file() -> String {
    numbered_blocks("/// A thing ünïcödé.\npub struct S{i} {\n    x: i32,\n}\n\nimpl S{i} {\n    pub fn get(&self) -> i32 {\n        self.x + {i} // 😀\n    }\n}\n\n")
}

fn python_file() -> String {
    numbered_blocks("class C{i}:\n    \"\"\"A thing ünïcödé.\"\"\"\n\n    def get(self, x):\n        # 😀 comment\n        return x + {i}\n\n\n")
}

/// `block` repeated with `{i}` numbered until the text has at least [`LINES`] lines.
fn numbered_blocks(block: &str) -> String {
    let per_block = block.lines().count().max(1);
    (0..LINES.div_ceil(per_block)).map(|i| block.replace("{i}", &i.to_string())).collect()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn report(name: &str, samples: &mut [Duration]) -> (Duration, Duration) {
    let (p50, p99) = (percentile(samples, 0.50), percentile(samples, 0.99));
    println!("{name:<58} n={:<5} p50={:>10.1?} p99={:>10.1?}", samples.len(), p50, p99);
    (p50, p99)
}

/// Simple xorshift so runs are repeatable.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Where typing happens: (lines per block, line in block, column) — inside an identifier
/// in a function body (`self.x` / `return x`), so the text stays valid as in real typing.
fn typing_spot(lang: &str) -> (usize, usize, u32) {
    if lang == "rust" {
        (11, 7, 14)
    } else {
        (8, 5, 16)
    }
}

fn bench_did_change(lang: &str, text: &str) {
    let spec = language_by_name(lang).unwrap();
    let enc = PositionEncoding::Utf16;
    let mut doc = Document::new(text, 0, lang);
    let mut tree = IncrementalTree::new(spec);
    tree.tree(doc.rope()).expect("parse");
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let mut incremental = Vec::new();
    // What the didChange handler itself does (the reparse is deferred to the next reader).
    let mut handler = Vec::new();
    let mut spot = 0u32;
    for v in 1..=500 {
        // A keystroke: type one char in a random function body, then delete it again.
        let (block_lines, in_block, col) = typing_spot(lang);
        if v % 2 == 1 {
            spot = (rng.below(LINES / block_lines - 1) * block_lines + in_block) as u32;
        }
        let pos = TextPosition::new(spot, col);
        let change = if v % 2 == 1 {
            TextChange { range: Some(TextRange::new(pos, pos)), text: "x".into() }
        } else {
            TextChange { range: Some(TextRange::new(pos, TextPosition::new(spot, col + 1))), text: String::new() }
        };
        let t = Instant::now();
        let edits = doc.apply_changes(&[change], enc, v);
        tree.edit(&edits);
        handler.push(t.elapsed());
        std::hint::black_box(tree.tree(doc.rope()).map(|t| t.root_node().child_count()));
        incremental.push(t.elapsed());
    }
    let mut full = Vec::new();
    for v in 0..30 {
        let new_text = doc.text();
        let t = Instant::now();
        let mut d = Document::new(&new_text, v, lang);
        let mut fresh = IncrementalTree::new(spec);
        std::hint::black_box(fresh.tree(d.rope()).map(|t| t.root_node().child_count()));
        full.push(t.elapsed());
        d.apply_changes(&[], enc, v + 1);
    }
    report(&format!("didChange {lang}: handler only (rope edit + tree.edit)"), &mut handler);
    let (i50, i99) =
        report(&format!("didChange {lang} {LINES} lines: rope edit + incremental reparse"), &mut incremental);
    let (f50, f99) = report(&format!("baseline {lang}: replace full text + full parse"), &mut full);
    println!(
        "{:<58} p50 {:.0}x faster, p99 {:.0}x faster",
        format!("ratio {lang} (baseline / incremental)"),
        f50.as_secs_f64() / i50.as_secs_f64(),
        f99.as_secs_f64() / i99.as_secs_f64()
    );
}

fn bench_code_actions() {
    let uri = Uri::from_str("file:///tmp/bench.py").unwrap();
    let range = Range::new(Position::new(10, 0), Position::new(12, 8));
    let diags: Vec<Diagnostic> = (0..3)
        .map(|i| Diagnostic {
            range,
            message: format!("error number {i}: something is undefined here"),
            ..Default::default()
        })
        .collect();
    let mut samples = Vec::new();
    for _ in 0..5_000 {
        let t = Instant::now();
        let actions = list_actions(&uri, Some(7), range, &diags, None);
        std::hint::black_box(serde_json::to_vec(&actions).unwrap());
        samples.push(t.elapsed());
    }
    report("codeAction listing (3 diagnostics, serialized)", &mut samples);
}

fn send(stdin: &mut impl Write, msg: serde_json::Value) {
    let body = serde_json::to_vec(&msg).unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    stdin.write_all(&body).unwrap();
    stdin.flush().unwrap();
}

fn read_one(r: &mut impl BufRead) -> serde_json::Value {
    let mut len = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut buf = vec![0; len];
    r.read_exact(&mut buf).unwrap();
    serde_json::from_slice(&buf).unwrap()
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn bench_idle_rss(rust: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .arg("lsp")
        .env("TINYCODER_CACHE_DIR", dir.path().join("c"))
        .env("TINYCODER_DATA_DIR", dir.path().join("d"))
        .env("TINYCODER_CONFIG", dir.path().join("none.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
    read_one(&mut stdout);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    std::thread::sleep(Duration::from_millis(500));
    let idle = vm_rss_kib(child.id());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
        {"uri": "file:///tmp/big.rs", "languageId": "rust", "version": 1, "text": rust}}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": "file:///tmp/big.rs"}}}),
    );
    read_one(&mut stdout);
    std::thread::sleep(Duration::from_millis(300));
    let with_file = vm_rss_kib(child.id());
    println!("server idle RSS after initialize: {:.1} MiB", idle as f64 / 1024.0);
    println!("server RSS with the {LINES}-line Rust file open and parsed: {:.1} MiB", with_file as f64 / 1024.0);
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    read_one(&mut stdout);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
}

fn main() {
    let rust = rust_file();
    let python = python_file();
    bench_did_change("rust", &rust);
    bench_did_change("python", &python);
    bench_code_actions();
    bench_idle_rss(&rust);
}
