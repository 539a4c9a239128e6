//! The OpenAI-compatible client against the REAL llama-server of the test bed
//! (`scripts/testbed.sh up`; URL from TINYCODER_TEST_OPENAI_URL). llama-server
//! runs in router mode (`--models-dir`, `--models-max 1`, `--no-cache-prompt`).

mod common;

use common::{openai_url, require_server, serial, suite, test_config};
use tinycoder::config::{BackendKind, ModelRole};
use tinycoder::llm::{client_from_config, diagnose, ChatMessage, ChatRequest};
use tokio_util::sync::CancellationToken;

async fn ready() -> (tokio::sync::MutexGuard<'static, ()>, tinycoder::config::Config) {
    let guard = serial().await;
    require_server(&openai_url(), "/health").await;
    (guard, test_config(BackendKind::Openai, &openai_url()))
}

#[tokio::test]
async fn streamed_chat_yields_tokens_in_order() {
    let (_g, config) = ready().await;
    suite::streamed_chat_yields_tokens_in_order(&config).await;
}

#[tokio::test]
async fn json_schema_reply_parses_into_a_typed_value() {
    let (_g, config) = ready().await;
    suite::json_schema_reply_parses(&config).await;
}

/// llama-server's `grammar` field, sent with `cache_prompt`, holds the reply to the code block.
#[tokio::test]
async fn a_reply_held_to_the_code_block_grammar_is_one_fenced_block() {
    let (_g, config) = ready().await;
    suite::a_reply_held_to_the_code_block_grammar_is_one_fenced_block(&config).await;
}

#[tokio::test]
async fn cancel_mid_stream_ends_within_200ms() {
    let (_g, config) = ready().await;
    suite::cancel_mid_stream_ends_fast(&config).await;
}

#[tokio::test]
async fn dropping_a_stream_frees_the_client() {
    let (_g, config) = ready().await;
    suite::dropping_a_stream_frees_the_client(&config).await;
}

#[tokio::test]
async fn switching_from_coder_to_critic_leaves_one_model_loaded() {
    let (_g, config) = ready().await;
    suite::switching_roles_leaves_one_model_loaded(&config).await;
}

#[tokio::test]
async fn server_down_is_reported_with_the_fix() {
    suite::server_down_is_reported(BackendKind::Openai).await;
}

#[tokio::test]
async fn unknown_model_points_at_the_model_list() {
    let (_g, config) = ready().await;
    suite::unknown_model_is_reported(config, "/v1/models").await;
}

#[tokio::test]
async fn over_budget_prompt_is_refused_before_sending() {
    suite::over_budget_is_refused_before_sending(BackendKind::Openai).await;
}

#[tokio::test]
async fn tokens_are_counted_exactly_by_the_server() {
    let (_g, config) = ready().await;
    let client = client_from_config(&config).expect("client");
    assert_eq!(client.count_tokens(ModelRole::Coder, "hello world").await.expect("tokenize"), Some(2));
}

/// The byte estimate over-counts on purpose; when it says "too big", the
/// server's tokenizer decides, so a prompt that really fits is still sent.
#[tokio::test]
async fn a_prompt_the_estimate_refuses_but_that_fits_is_sent() {
    let (_g, config) = ready().await;
    let client = client_from_config(&config).expect("client");
    let text = "hello ".repeat(1000); // estimate ~2,160 > 2048 - 32; exact ~1,000 tokens
    let estimate = tinycoder::llm::estimate_tokens(&[ChatMessage::user(text.clone())], &config.budget);
    assert!(estimate + 32 > 2048, "the estimate alone must refuse ({estimate})");
    let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user(text)]);
    req.max_tokens = Some(32);
    client.chat(req, CancellationToken::new()).await.expect("exact count fits: the call is sent");
}

#[tokio::test]
async fn diagnose_reports_models() {
    let (_g, config) = ready().await;
    let checks = diagnose(&config).await;
    assert_eq!(checks.len(), 5, "{checks:?}");
    assert!(checks.iter().all(|c| c.ok), "{checks:#?}");
}

#[tokio::test]
async fn a_repeated_prompt_prefix_is_reused_from_the_servers_cache() {
    let (_g, config) = ready().await;
    assert!(config.backend.prompt_cache, "on by default");
    let client = client_from_config(&config).expect("client");
    let system = ChatMessage::system("You review Python code. ".repeat(30));
    let mut usage = Vec::new();
    for question in ["What does `x = 1` do?", "What does `y = 2` do?"] {
        let sink = tinycoder::llm::PromptUsageSink::default();
        let mut req = ChatRequest::new(ModelRole::Coder, vec![system.clone(), ChatMessage::user(question)]);
        req.max_tokens = Some(4);
        req.usage = Some(sink.clone());
        let mut stream = client.chat_stream(req, CancellationToken::new()).await.expect("stream");
        while let Some(d) = futures::StreamExt::next(&mut stream).await {
            d.expect("delta");
        }
        usage.push(sink.lock().unwrap().expect("llama-server reports its timings"));
    }
    let (first, second) = (usage[0], usage[1]);
    let reused = second.cached.expect("cache_n");
    assert!(reused > 100, "the shared system prompt comes from the cache the second time: {usage:?}");
    assert!(second.evaluated < first.evaluated, "only the new question is evaluated: {usage:?}");
}
