//! Shared helpers of the integration tests that talk to the REAL model
//! servers of the test bed (`scripts/testbed.sh up`). A test whose server is
//! unreachable fails with instructions; none skips silently.
#![allow(dead_code)] // each test binary uses a different part

pub mod nvim;
pub mod suite;

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tinycoder::config::{BackendKind, Config, ConfigInputs, LoadedConfig, ModelConfig};

/// The repository root (the parent of `server/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The value of the first `key\tvalue` line of an editor script's output.
pub fn line<'a>(out: &'a str, key: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(&format!("{key}\t")))
}

/// Waits for `child` (`what`), which writes its `KEY\tvalue` lines to `out`,
/// killing it after `limit` (a hang guard, not a timing assertion); returns what
/// it wrote.
pub fn output_of(mut child: std::process::Child, out: &Path, what: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish; output so far:\n{}", std::fs::read_to_string(out).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(out).unwrap_or_default();
    eprintln!("{text}");
    text
}

/// Ollama's URL in tests: `TINYCODER_TEST_OLLAMA_URL`, default the test bed's.
pub fn ollama_url() -> String {
    std::env::var("TINYCODER_TEST_OLLAMA_URL").unwrap_or_else(|_| "http://127.0.0.1:11434".into())
}

/// llama-server's URL in tests: `TINYCODER_TEST_OPENAI_URL`, default the test bed's.
pub fn openai_url() -> String {
    std::env::var("TINYCODER_TEST_OPENAI_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into())
}

/// Panics with how to start the test bed unless `url` + `probe` answers 200.
pub async fn require_server(url: &str, probe: &str) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().expect("http client");
    let ok = matches!(client.get(format!("{url}{probe}")).send().await, Ok(r) if r.status().is_success());
    assert!(ok, "the model server at {url} is not reachable: run `scripts/testbed.sh up` (repo root) and retry");
}

/// llama-server's URL, from a test without a runtime of its own; panics with how
/// to start the test bed unless it answers.
pub fn require_openai_server() -> String {
    let url = openai_url();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(require_server(&url, "/health"));
    url
}

/// A URL on which nothing listens (a port just bound and released).
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let port = listener.local_addr().expect("local addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// The coder model of the test bed (SmolLM2-135M-Instruct, has a chat template).
pub const CODER_MODEL: &str = "smollm2";
/// The critic model of the test bed (Gemma 3 270M base, plain template).
pub const CRITIC_MODEL: &str = "gemma3";

fn role(name: &str) -> ModelConfig {
    ModelConfig {
        name: name.into(),
        path: String::new(),
        num_ctx: 2048,
        temperature: 0.0,
        seed: 42,
        keep_alive: "5m".into(),
        max_output_tokens: 48,
    }
}

/// Built-in defaults, pointed at `url` speaking `kind`, with the test bed's
/// small models: coder and planner = smollm2, critic and summarizer = gemma3;
/// num_ctx 2048, temperature 0, fixed seed, short replies.
pub fn test_config(kind: BackendKind, url: &str) -> Config {
    let mut c = LoadedConfig::load(&ConfigInputs::default()).expect("built-in defaults load").config;
    c.backend.kind = kind;
    c.backend.url = url.into();
    c.backend.connect_timeout_ms = 2000;
    // The CPU is shared with parallel builds: generous, but bounded.
    c.backend.first_token_timeout_ms = 120_000;
    c.backend.idle_timeout_ms = 60_000;
    c.backend.request_timeout_ms = 300_000;
    c.backend.max_loaded_models = 1;
    c.models.coder = role(CODER_MODEL);
    c.models.planner = role(CODER_MODEL);
    c.models.critic = role(CRITIC_MODEL);
    c.models.summarizer = role(CRITIC_MODEL);
    c.budget.reserved_output_tokens = 256;
    c
}

/// Serialises the server tests of one binary: they share one server and
/// check which models it has loaded.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// Unloads every model the Ollama at `url` holds, so a test that checks what is
/// loaded starts from nothing (earlier tests leave their models loaded for minutes).
pub async fn unload_all_ollama_models(url: &str) {
    let http = reqwest::Client::new();
    let Ok(resp) = http.get(format!("{url}/api/ps")).send().await else { return };
    let v: serde_json::Value = resp.json().await.unwrap_or_default();
    for m in v["models"].as_array().cloned().unwrap_or_default() {
        let name = m["name"].as_str().unwrap_or_default().to_string();
        let body = serde_json::json!({"model": name, "keep_alive": 0});
        let _ = http.post(format!("{url}/api/generate")).json(&body).send().await;
    }
    // The unloads finish in the background: wait until none is left (bounded).
    for _ in 0..50 {
        let left = match http.get(format!("{url}/api/ps")).send().await {
            Ok(r) => r.json::<serde_json::Value>().await.unwrap_or_default()["models"].as_array().map_or(0, Vec::len),
            Err(_) => 0,
        };
        if left == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The coder-class model the agent's end-to-end tests run (Qwen2.5-Coder 0.5B Instruct).
pub const AGENT_MODEL: &str = "qwen2.5-coder:0.5b";

/// Environment that points every role of a `tinycoder` process at the test bed's
/// llama-server (`url`) with the agent model, and keeps its cache, data and
/// user config inside `home`.
pub fn agent_env(url: &str, home: &std::path::Path) -> Vec<(String, String)> {
    let mut env = vec![
        ("TINYCODER_CACHE_DIR".to_string(), home.join("cache").display().to_string()),
        ("TINYCODER_DATA_DIR".to_string(), home.join("data").display().to_string()),
        ("TINYCODER_CONFIG".to_string(), home.join("no-user-config.toml").display().to_string()),
        ("TINYCODER_BACKEND__KIND".to_string(), "openai".to_string()),
        ("TINYCODER_BACKEND__URL".to_string(), url.to_string()),
        ("RUST_LOG".to_string(), "warn".to_string()),
    ];
    for role in ["PLANNER", "CODER", "CRITIC", "SUMMARIZER"] {
        env.push((format!("TINYCODER_MODELS__{role}__NAME"), AGENT_MODEL.to_string()));
    }
    env
}

/// The same settings as `initializationOptions` for the language server.
pub fn agent_init_options(url: &str) -> serde_json::Value {
    let role = serde_json::json!({"name": AGENT_MODEL});
    serde_json::json!({
        "backend": {"kind": "openai", "url": url},
        "models": {"planner": role, "coder": role, "critic": role, "summarizer": role}
    })
}

/// Copies the fixture folder `name` (under the repository's tests/fixtures) to `dest`.
pub fn copy_fixture(name: &str, dest: &std::path::Path) {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name);
    copy_dir(&src, dest);
}

/// Copies the example project `name` (under the repository's examples/) to `dest`.
pub fn copy_example(name: &str, dest: &std::path::Path) {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name);
    copy_dir(&src, dest);
}

fn copy_dir(src: &std::path::Path, dest: &std::path::Path) {
    std::fs::create_dir_all(dest).expect("create the copy");
    for entry in std::fs::read_dir(src).expect("read the fixture").flatten() {
        let to = dest.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_dir(&entry.path(), &to);
            }
        } else {
            std::fs::copy(entry.path(), &to).expect("copy a fixture file");
        }
    }
}

/// Runs pytest in `dir`; true when every test passes.
///
/// The test clients keep tinycoder's `cache/` and `data/` inside the workspace folder; pytest skips
/// them, or it would collect the tests of a shadow that a run of the server has open at that moment.
pub fn pytest_passes(dir: &std::path::Path) -> bool {
    std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=cache", "--ignore=data"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir)
        .output()
        .map(|o| {
            if !o.status.success() {
                // The failing test's report, so a red run says why.
                eprintln!(
                    "pytest in {}:\n{}{}",
                    dir.display(),
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            o.status.success()
        })
        .unwrap_or(false)
}

/// Every file of the project with its text (to prove nothing was written).
pub fn snapshot(root: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in walk(root) {
        let rel = e.strip_prefix(root).unwrap().to_string_lossy().to_string();
        if !rel.contains("__pycache__") && !rel.contains(".pytest_cache") {
            out.push((rel, std::fs::read_to_string(&e).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A temporary home for driving the `tinycoder` binary: a data folder and a
/// workspace folder (created, canonical paths), and no user configuration.
pub struct CliHome {
    _dir: tempfile::TempDir,
    pub data: std::path::PathBuf,
    pub ws: std::path::PathBuf,
}

impl Default for CliHome {
    fn default() -> Self {
        Self::new()
    }
}

impl CliHome {
    /// A fresh home with an empty workspace folder.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical temp dir");
        let (data, ws) = (base.join("data"), base.join("ws"));
        std::fs::create_dir_all(&ws).expect("ws");
        Self { _dir: dir, data, ws }
    }

    /// `tinycoder --workspace WS ARGS` with this home's data, cache and (absent) user config.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tinycoder"));
        cmd.arg("--workspace")
            .arg(&self.ws)
            .args(args)
            .env("TINYCODER_DATA_DIR", &self.data)
            .env("TINYCODER_CACHE_DIR", self.data.join("cache"))
            .env("TINYCODER_CONFIG", self.data.join("no-user-config.toml"));
        cmd
    }
}

/// A scripted model server (a double for unit-style tests of control flow, never an
/// end-to-end model): answers OpenAI chat requests from `reply(body)` (streamed when
/// asked), lists no models, and has no other endpoint (404). Returns its URL.
pub fn scripted_model_server(reply: fn(&str) -> String) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut length = 0;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let body = String::from_utf8_lossy(&body).to_string();
                let (status, kind, text) = if first.contains("/chat/completions") {
                    let content = reply(&body);
                    let streamed = serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|b| b["stream"] == true);
                    if streamed {
                        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]});
                        let end = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
                        ("200 OK", "text/event-stream", format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"))
                    } else {
                        let whole = serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]});
                        ("200 OK", "application/json", whole.to_string())
                    }
                } else if first.contains("/v1/models") {
                    ("200 OK", "application/json", r#"{"object":"list","data":[]}"#.to_string())
                } else {
                    ("404 Not Found", "application/json", r#"{"error":{"message":"not here"}}"#.to_string())
                };
                let mut s = stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    url
}

/// A module of the shop project that its failing test never touches: the editors'
/// end-to-end tests ask the chat about it while it is not open.
const SHOP_SHIPPING: &str = "\
\"\"\"Shipping costs of an order.\"\"\"


def shipping_cost(weight_kg, express=False):
    \"\"\"Cost in cents: 500 base plus 120 per started kilogram; express doubles it.\"\"\"
    kilos = int(weight_kg) + (0 if weight_kg == int(weight_kg) else 1)
    cost = 500 + 120 * kilos
    return cost * 2 if express else cost
";

/// A copy of the small shop project (`agent-python`, one failing test) at `root`
/// with `shop/shipping.py` added; checks it starts red and returns `shop/prices.py`.
pub fn shop_project(root: &std::path::Path) -> String {
    copy_fixture("agent-python", root);
    std::fs::write(root.join("shop/shipping.py"), SHOP_SHIPPING).unwrap();
    assert!(!pytest_passes(root), "the project starts red");
    std::fs::read_to_string(root.join("shop/prices.py")).unwrap()
}

/// An undocumented, untested module for the documentation and test-writing flows.
pub const DISCOUNT: &str = "\
def discounted(price, percent):
    if percent < 0 or percent > 100:
        raise ValueError(\"percent must be between 0 and 100\")
    return price - price * percent / 100
";

/// A test file for [`DISCOUNT`] with one test.
pub const DISCOUNT_TESTS: &str = "\
from shop.discount import discounted


def test_no_discount():
    assert discounted(50, 0) == 50
";

/// True when the first definition of the Python file `file` has a docstring now and is
/// otherwise the code of `before` (the syntax trees without docstrings match).
pub fn docstring_added_and_code_unchanged(file: &Path, before: &str) -> bool {
    let check = format!(
        "import ast,sys\n\
         def strip(t):\n    f = ast.parse(t).body[0]\n    b = f.body[1:] if ast.get_docstring(f) else f.body\n    return ast.dump(ast.Module(body=b, type_ignores=[]))\n\
         new = open(sys.argv[1]).read()\n\
         assert ast.get_docstring(ast.parse(new).body[0]), 'no docstring'\n\
         assert strip(new) == strip({before:?}), 'the code changed'\n"
    );
    std::process::Command::new("python3")
        .args(["-c", &check])
        .arg(file)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A module with two misspelt names far apart (ruff F821 on lines 6 and 71): two fixes.
pub fn misspelt_pricing_module() -> String {
    let mut lines: Vec<String> = ["\"\"\"Prices, taxes and discounts of the shop.\"\"\"", "", ""]
        .iter()
        .chain(&[
            "def net(gross, rate):",
            "    \"\"\"The price without tax.\"\"\"",
            "    return gross / (1 + rat)",
            "",
            "",
        ])
        .map(|l| l.to_string())
        .collect();
    for i in 0..12 {
        lines.push(format!("def fee_{i}(amount):"));
        lines.push(format!("    \"\"\"Fee number {i}.\"\"\""));
        lines.push(format!("    return amount * {} / 100", i + 2));
        lines.extend([String::new(), String::new()]);
    }
    lines.extend(
        ["def tax(price, percent):", "    \"\"\"The tax on a price.\"\"\"", "    return price * percnt / 100", ""]
            .map(String::from),
    );
    lines.join("\n")
}

/// The test bed's ruff (`TINYCODER_TEST_RUFF`); `None` (said on stderr) when it is not
/// set and the test bed is not required.
pub fn test_ruff() -> Option<PathBuf> {
    let Some(ruff) = std::env::var_os("TINYCODER_TEST_RUFF") else {
        assert!(
            std::env::var_os("TINYCODER_REQUIRE_TESTBED").is_none(),
            "TINYCODER_TEST_RUFF is not set: `eval \"$(scripts/testbed.sh up)\"` installs ruff and sets it"
        );
        eprintln!("skipped: TINYCODER_TEST_RUFF is not set (scripts/testbed.sh up installs ruff)");
        return None;
    };
    Some(PathBuf::from(ruff))
}

/// Environment of a tinycoder process whose sandbox runs `ruff`: on PATH, and its
/// virtual environment among the folders the sandbox shows (`$VIRTUAL_ENV`).
pub fn ruff_env(ruff: &Path) -> Vec<(String, String)> {
    let bin = ruff.parent().expect("ruff's folder");
    let venv = bin.parent().unwrap_or(bin).display().to_string();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    vec![("PATH".into(), path), ("VIRTUAL_ENV".into(), venv)]
}
