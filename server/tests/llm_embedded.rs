//! The embedded backend (llama.cpp in tinycoder's process) against the REAL
//! GGUF files of the test bed: Qwen2.5-Coder 0.5B Instruct as the coder,
//! SmolLM2-135M as the critic (`scripts/testbed.sh models`; folder from
//! TINYCODER_TEST_MODELS_DIR). The same checks as the server adapters
//! (`common/suite.rs`), plus what only this backend promises: exact token
//! counts equal to llama-server's tokenizer, models loaded straight from
//! Ollama's store, the prompt prefix reused between calls, and raw
//! fill-in-the-middle completion (inline completion) that reuses it too and
//! gives the model up to any chat call, and prompt-lookup drafts that leave a
//! reply as it was.
#![cfg(feature = "embedded")]

mod common;

use common::{closed_port_url, openai_url, serial, suite, test_config};
use futures::StreamExt;
use std::path::PathBuf;
use tinycoder::config::{BackendKind, Config, ModelRole};
use tinycoder::llm::{
    client_from_config, resolve_backend, ChatMessage, ChatRequest, CompletionRequest, LlmError, PromptUsage,
};
use tokio_util::sync::CancellationToken;

const QWEN: &str = "qwen2.5-coder:0.5b";

fn testbed_dir(var: &str, default_leaf: &str) -> PathBuf {
    std::env::var(var).map(PathBuf::from).unwrap_or_else(|_| {
        let home = std::env::var("HOME").expect("HOME");
        PathBuf::from(home).join(".cache/tinycoder/testbed").join(default_leaf)
    })
}

fn models_dir() -> PathBuf {
    let dir = testbed_dir("TINYCODER_TEST_MODELS_DIR", "models");
    assert!(
        dir.join(format!("{QWEN}.gguf")).is_file(),
        "no {QWEN}.gguf in {}: run `scripts/testbed.sh models` (repo root) and retry",
        dir.display()
    );
    dir
}

/// Embedded, models from the test bed's folder, no server anywhere (the URL is a closed port).
fn embedded_config() -> Config {
    let mut c = test_config(BackendKind::Embedded, &closed_port_url());
    c.backend.models_dir = models_dir().display().to_string();
    c.backend.ollama_models = "/nonexistent".into();
    c.models.coder.name = QWEN.into();
    c.models.planner.name = QWEN.into();
    c
}

#[tokio::test]
async fn streamed_chat_yields_tokens_in_order() {
    let _g = serial().await;
    suite::streamed_chat_yields_tokens_in_order(&embedded_config()).await;
}

#[tokio::test]
async fn json_schema_reply_parses_into_a_typed_value() {
    let _g = serial().await;
    suite::json_schema_reply_parses(&embedded_config()).await;
}

#[tokio::test]
async fn cancel_mid_stream_ends_within_200ms() {
    let _g = serial().await;
    suite::cancel_mid_stream_ends_fast(&embedded_config()).await;
}

#[tokio::test]
async fn dropping_a_stream_frees_the_client() {
    let _g = serial().await;
    suite::dropping_a_stream_frees_the_client(&embedded_config()).await;
}

#[tokio::test]
async fn switching_from_coder_to_critic_leaves_one_model_loaded() {
    let _g = serial().await;
    suite::switching_roles_leaves_one_model_loaded(&embedded_config()).await;
}

#[tokio::test]
async fn a_model_not_on_disk_says_how_to_get_it() {
    let _g = serial().await;
    suite::unknown_model_is_reported(embedded_config(), "ollama pull no-such-model-tinycoder").await;
}

/// Over the window by the model's own tokenizer: refused before any decoding, with exact figures.
#[tokio::test]
async fn an_over_budget_prompt_is_refused_with_its_exact_size() {
    let _g = serial().await;
    let config = embedded_config();
    let client = client_from_config(&config).expect("client");
    let huge = "fn main() { println!(\"hello\"); }\n".repeat(400);
    let exact = client.count_tokens(ModelRole::Coder, &huge).await.expect("count").expect("exact");
    let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user(huge)]);
    req.max_tokens = Some(32);
    match client.chat_stream(req, CancellationToken::new()).await {
        Err(LlmError::OverBudget { needed, num_ctx, reserved, .. }) => {
            assert_eq!((num_ctx, reserved), (2048, 32));
            // The chat template adds a few tokens of role markers around the text.
            assert!(needed > exact && needed < exact + 40, "needed {needed}, the text alone {exact}");
        }
        Err(other) => panic!("expected OverBudget, got {other:?}"),
        Ok(_) => panic!("expected OverBudget, got a stream"),
    }
    // The byte estimate would refuse this one; the exact count lets it through.
    let text = "hello ".repeat(1000);
    let estimate = tinycoder::llm::estimate_tokens(&[ChatMessage::user(text.clone())], &config.budget);
    assert!(estimate + 32 > 2048, "the estimate alone must refuse ({estimate})");
    let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user(text)]);
    req.max_tokens = Some(4);
    let reply = client.chat(req, CancellationToken::new()).await.expect("a prompt that fits is sent");
    assert!(!reply.text.is_empty());
}

/// The embedded tokenizer counts exactly what llama-server's `/tokenize` counts, same GGUF.
#[tokio::test]
async fn token_counts_equal_llama_servers_tokenizer() {
    let _g = serial().await;
    common::require_server(&openai_url(), "/health").await;
    let client = client_from_config(&embedded_config()).expect("client");
    let http = reqwest::Client::new();
    let texts = [
        "hello world",
        "def total(items):\n    return sum(i.price * i.qty for i in items)\n",
        "    indented\ttabs\r\nand CRLF",
        "naïve café → 日本語 🦀",
        "<|im_start|>user\nspecial tokens<|im_end|>",
        "",
    ];
    for text in texts {
        let ours = client.count_tokens(ModelRole::Coder, text).await.expect("count").expect("exact");
        let v: serde_json::Value = http
            .post(format!("{}/tokenize", openai_url()))
            .json(&serde_json::json!({"model": QWEN, "content": text}))
            .send()
            .await
            .expect("llama-server /tokenize")
            .json()
            .await
            .expect("json");
        let theirs = v["tokens"].as_array().expect("tokens").len();
        assert_eq!(ours, theirs, "token count of {text:?}");
    }
}

/// Pauses a process (SIGSTOP) for the guard's life; SIGCONT on drop, even when the test fails.
struct Paused(i32);

impl Paused {
    fn new(pid: i32) -> Self {
        // SAFETY: plain kill(2) on a pid the test bed recorded.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0, "cannot stop pid {pid}");
        Self(pid)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// A model pulled into Ollama's store loads from its blob while the Ollama server
/// is stopped (SIGSTOP: it answers nothing), and `auto` picks the embedded backend
/// when no server answers and the models are on disk.
#[tokio::test]
async fn a_model_in_ollamas_store_loads_with_the_ollama_server_stopped() {
    let _g = serial().await;
    let store = testbed_dir("TINYCODER_TEST_OLLAMA_MODELS", "ollama-models");
    let manifest = store.join("manifests/registry.ollama.ai/library/qwen2.5-coder/0.5b");
    assert!(manifest.is_file(), "no Ollama manifest at {}: run `scripts/testbed.sh up`", manifest.display());
    let ollama_url = common::ollama_url();
    let mut config = test_config(BackendKind::Embedded, &ollama_url);
    config.backend.models_dir = String::new();
    config.backend.ollama_models = store.display().to_string();
    config.models.planner.name = QWEN.into();
    config.models.coder.name = QWEN.into();
    config.models.critic.name = "smollm2".into();
    config.models.summarizer.name = "smollm2".into();
    let found = tinycoder::llm::local_models::ModelLocator::new(&config.backend).find(QWEN).expect("found");
    assert!(found.path.starts_with(store.join("blobs")), "{}", found.path.display());

    let pid_file = store.parent().expect("test bed home").join("run/ollama.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|e| panic!("{}: {e}; start the test bed with `scripts/testbed.sh up`", pid_file.display()))
        .trim()
        .parse()
        .expect("a pid");
    let paused = Paused::new(pid);
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(1)).build().expect("http");
    assert!(http.get(format!("{ollama_url}/api/version")).send().await.is_err(), "the Ollama server must not answer");
    let client = client_from_config(&config).expect("client");
    let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user("Write a Python function add(a, b).")]);
    req.max_tokens = Some(24);
    let reply = client.chat(req, CancellationToken::new()).await.expect("a reply from the blob");
    drop(paused);
    assert!(reply.text.contains("def") || reply.text.contains("add"), "{}", reply.text);

    // `auto`: nothing at the URL and every role's model on disk means embedded; a URL that answers means that server.
    config.backend.kind = BackendKind::Auto;
    config.backend.url = closed_port_url();
    assert_eq!(resolve_backend(&config), BackendKind::Embedded);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    config.backend.url = format!("http://{}", listener.local_addr().expect("addr"));
    assert_eq!(resolve_backend(&config), BackendKind::Ollama);
}

/// A second call that starts with the first call's prompt evaluates only what is new.
#[tokio::test]
async fn a_repeated_prompt_prefix_is_not_evaluated_again() {
    let _g = serial().await;
    let client = client_from_config(&embedded_config()).expect("client");
    let system = ChatMessage::system("You are a careful Python reviewer. ".repeat(20));
    let call = |question: &str| {
        let mut req = ChatRequest::new(ModelRole::Coder, vec![system.clone(), ChatMessage::user(question)]);
        req.max_tokens = Some(4);
        req.usage = Some(Default::default());
        req
    };
    let usage = |req: &ChatRequest| -> PromptUsage { req.usage.as_ref().unwrap().lock().unwrap().expect("usage") };
    let first = call("Is `x = 1` valid Python?");
    client.chat(first.clone(), CancellationToken::new()).await.expect("first");
    let second = call("Is `y = 2` valid Python?");
    client.chat(second.clone(), CancellationToken::new()).await.expect("second");
    let (a, b) = (usage(&first), usage(&second));
    assert_eq!(a.cached, Some(0), "{a:?}");
    assert!(b.cached.unwrap_or(0) > 100, "the shared system prompt is reused: {b:?}");
    assert!(b.evaluated < 30, "only the new question is evaluated: {b:?}");
}

/// Prompt-lookup drafts change how a reply is decoded, not what it says: at temperature 0 an
/// edit that copies most of its prompt is the same reply with drafts and without, and most of
/// its tokens came from drafts the model kept.
#[tokio::test]
async fn a_reply_from_prompt_lookup_drafts_is_the_reply_without_them() {
    let _g = serial().await;
    let module = r#"def mean(values):
    """The arithmetic mean of values."""
    total = 0
    for v in values:
        total += v
    return total / len(values)


def spread(values):
    """Largest minus smallest value."""
    return max(values) - min(values)


def clamp(value, low, high):
    """value, kept between low and high."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def normalise(values):
    """values scaled to 0..1."""
    low, high = min(values), max(values)
    return [(v - low) / (high - low) for v in values]
"#;
    let prompt = format!(
        "Rename the function `spread` to `value_range` in this module. Reply with the whole module in one python code block.\n\n```python\n{module}```"
    );
    let reply = |draft_tokens: u32| {
        let prompt = prompt.clone();
        async move {
            let mut config = embedded_config();
            config.backend.lookup_draft_tokens = draft_tokens;
            let client = client_from_config(&config).expect("client");
            let system = ChatMessage::system("You are a helpful assistant.");
            let mut req = ChatRequest::new(ModelRole::Coder, vec![system, ChatMessage::user(prompt)]);
            req.temperature = Some(0.0);
            req.max_tokens = Some(400);
            let usage: tinycoder::llm::PromptUsageSink = Default::default();
            req.usage = Some(usage.clone());
            let mut stream = client.chat_stream(req, CancellationToken::new()).await.expect("starts");
            let (mut text, mut deltas) = (String::new(), 0);
            while let Some(d) = stream.next().await {
                text.push_str(&d.expect("delta"));
                deltas += 1;
            }
            let drafted = usage.lock().unwrap().expect("usage").drafted;
            (text, deltas, drafted)
        }
    };
    let (plain, _, none) = reply(0).await;
    let (drafted, deltas, kept) = reply(8).await;
    assert!(plain.contains("total += v") && plain.contains("def clamp"), "the reply copies the module: {plain}");
    assert_eq!(drafted, plain, "drafts must not change the reply");
    assert_eq!(none, None, "no drafts when they are off");
    let kept = kept.expect("the drafted reply counts its kept draft tokens");
    assert!(kept * 2 > deltas, "most of a copied module comes from drafts: {kept} of {deltas} tokens");
}

/// A reply held to the code-block grammar of `prompts/` is one fenced block and nothing else.
#[tokio::test]
async fn a_reply_held_to_the_code_block_grammar_is_one_fenced_block() {
    let _g = serial().await;
    suite::a_reply_held_to_the_code_block_grammar_is_one_fenced_block(&embedded_config()).await;
}

/// Cancelling before the first token (during the prompt) also ends the call at once.
#[tokio::test]
async fn cancel_during_a_long_prompt_ends_fast() {
    let _g = serial().await;
    let client = client_from_config(&embedded_config()).expect("client");
    client.count_tokens(ModelRole::Coder, "load the model first").await.expect("loads");
    let cancel = CancellationToken::new();
    let text = "def f(x):\n    return x + 1\n".repeat(120);
    let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user(text)]);
    req.max_tokens = Some(64);
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        c.cancel();
    });
    let t0 = std::time::Instant::now();
    let result = match client.chat_stream(req, cancel).await {
        Ok(mut s) => {
            let mut last = None;
            while let Some(item) = s.next().await {
                last = Some(item);
            }
            last.map(|r| r.map(|_| ()))
        }
        Err(e) => Some(Err(e)),
    };
    assert!(matches!(result, Some(Err(LlmError::Cancelled))), "{result:?}");
    assert!(t0.elapsed().as_secs_f64() < 5.0, "took {:?}", t0.elapsed());
}

/// A model idle past its role's `keep_alive` is unloaded (its memory freed), and the next call loads it again.
#[tokio::test]
async fn an_idle_model_is_unloaded_after_its_keep_alive() {
    let _g = serial().await;
    let mut config = embedded_config();
    config.models.coder.keep_alive = "1s".into();
    let client = client_from_config(&config).expect("client");
    let ask = || {
        let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user("Say hi.")]);
        req.max_tokens = Some(4);
        req
    };
    client.chat(ask(), CancellationToken::new()).await.expect("first call");
    assert_eq!(client.loaded_models().await.expect("loaded"), Some(vec![QWEN.to_string()]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while client.loaded_models().await.expect("loaded") != Some(vec![]) {
        assert!(std::time::Instant::now() < deadline, "still loaded 30 s after a keep_alive of 1 s");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    client.chat(ask(), CancellationToken::new()).await.expect("the next call loads it again");
}

/// A fill-in-the-middle prompt in Qwen2.5-Coder's tokens around `prefix` and `suffix`.
fn fim(prefix: &str, suffix: &str, stop: &[&str], max_tokens: u32) -> CompletionRequest {
    CompletionRequest {
        role: ModelRole::Coder,
        prompt: format!("<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"),
        max_tokens,
        stop: stop.iter().map(|s| s.to_string()).collect(),
        timeout: std::time::Duration::from_secs(120),
        usage: Some(Default::default()),
    }
}

/// The FIM tokens are read as tokens (not text), and the reply is cut before the stop string.
#[tokio::test]
async fn a_fim_prompt_fills_the_middle_and_stops_at_the_end_of_the_line() {
    let _g = serial().await;
    let client = client_from_config(&embedded_config()).expect("client");
    let prefix = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return ";
    let got = client.complete(fim(prefix, "\n\nprint(add(1, 2))\n", &["\n"], 32), CancellationToken::new()).await;
    let got = got.expect("a completion");
    assert!(!got.contains('\n'), "cut at the stop string: {got:?}");
    assert!(!got.contains("<|"), "no special token leaks as text: {got:?}");
    assert_eq!(got.trim().replace(' ', ""), "a+b", "{got:?}");
}

/// A keystroke later, only the tokens after the change are evaluated.
#[tokio::test]
async fn a_completion_a_keystroke_later_evaluates_only_what_changed() {
    let _g = serial().await;
    let client = client_from_config(&embedded_config()).expect("client");
    let body = "def mean(values):\n    \"\"\"The arithmetic mean of a non-empty list.\"\"\"\n    total = 0\n    for v in values:\n        total += v\n".repeat(8);
    let suffix = "\n\nprint(mean([1, 2, 3]))\n";
    let usage =
        |req: &CompletionRequest| -> PromptUsage { req.usage.as_ref().unwrap().lock().unwrap().expect("usage") };
    let first = fim(&format!("{body}    return t"), suffix, &["\n"], 16);
    client.complete(first.clone(), CancellationToken::new()).await.expect("first");
    let second = fim(&format!("{body}    return to"), suffix, &["\n"], 16);
    client.complete(second.clone(), CancellationToken::new()).await.expect("second");
    let (a, b) = (usage(&first), usage(&second));
    assert!(a.evaluated > 200, "the first prompt is evaluated whole: {a:?}");
    assert!(b.cached.unwrap_or(0) > 200, "the text before the cursor is reused: {b:?}");
    assert!(b.evaluated < 40, "only the typed character, the suffix and the FIM tokens: {b:?}");
}

/// A chat call that wants the model cancels a completion under way and runs at once.
#[tokio::test]
async fn a_chat_call_takes_the_model_from_a_completion_under_way() {
    let _g = serial().await;
    let client = std::sync::Arc::new(client_from_config(&embedded_config()).expect("client"));
    client.count_tokens(ModelRole::Coder, "load the model first").await.expect("loads");
    // Raw text without FIM tokens: counting goes on until the cap.
    let mut long = fim("", "", &[], 2000);
    long.prompt = "Counting: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,".into();
    let c = client.clone();
    let completion = tokio::spawn(async move { c.complete(long, CancellationToken::new()).await });
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert!(!completion.is_finished(), "still generating when the chat arrives");
    let mut chat = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user("Say hi.")]);
    chat.max_tokens = Some(4);
    let t0 = std::time::Instant::now();
    client.chat(chat, CancellationToken::new()).await.expect("the chat runs");
    let done = completion.await.expect("join");
    assert!(matches!(done, Err(LlmError::Cancelled)), "the completion gave the model up: {done:?}");
    assert!(t0.elapsed().as_secs_f64() < 30.0, "the chat did not wait for 2000 tokens: {:?}", t0.elapsed());
}
