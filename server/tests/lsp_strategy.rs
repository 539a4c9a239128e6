//! After the attempts fail, the user picks what to try next, in the editor: a
//! REAL coder model (Qwen2.5-Coder 0.5B on the test bed's llama-server) on a
//! failing test that no edit of the code can turn green, a real LSP client over
//! stdio answering `window/showMessageRequest` ("Give a hint") and
//! `tinycoder/inputText` (the hint).

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A hang guard for two model attempts on a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(900);

#[tokio::test(flavor = "multi_thread")]
async fn a_hint_chosen_in_the_editor_buys_one_more_attempt() {
    let url = common::openai_url();
    common::require_server(&url, "/health").await;
    tokio::task::block_in_place(|| run(&url));
}

fn run(url: &str) {
    let mut client = LspClient::spawn();
    let root = client.root().to_path_buf();
    common::copy_fixture("agent-python", &root);
    // Red for a reason no edit of shop/prices.py can change.
    let tests = std::fs::read_to_string(root.join("tests/test_prices.py")).unwrap().replace(
        "assert total_price([(2, 3), (5, 1)]) == 11",
        "assert total_price([(2, 3), (5, 1)]) == 11 and __import__('os').environ.get('TINYCODER_NEVER_SET') == '1'",
    );
    std::fs::write(root.join("tests/test_prices.py"), tests).unwrap();
    let hint = "the test also needs TINYCODER_NEVER_SET, which nothing sets";
    client.reply_queue.insert("window/showMessageRequest".into(), VecDeque::from([json!({"title": "Give a hint"})]));
    client.reply_queue.insert("tinycoder/inputText".into(), VecDeque::from([json!(hint)]));
    let mut options = common::agent_init_options(url);
    options["runtime"] = json!({"max_retries": 0, "critic": false, "strategy_rounds": 1});
    client.initialize(&["utf-16"], options);

    client.start_test_quick_fix("tests/test_prices.py");

    let deadline = Instant::now() + DEADLINE;
    let (mut question, mut asked_text, mut end): (Option<Value>, Option<Value>, Option<Value>) = (None, None, None);
    while end.is_none() {
        let m = client.next_before(deadline, "the end of the fix");
        match m["method"].as_str() {
            Some("window/showMessageRequest") if question.is_none() => question = Some(m["params"].clone()),
            Some("tinycoder/inputText") => asked_text = Some(m["params"].clone()),
            Some("workspace/applyEdit") => panic!("a failing patch was offered: {m:#}"),
            Some("window/showMessage" | "window/showMessageRequest")
                if m["params"]["message"].as_str().is_some_and(|t| t.contains("could not do it")) =>
            {
                end = Some(m["params"].clone())
            }
            _ => {}
        }
    }
    let question = question.expect("the strategy question");
    assert!(question["message"].as_str().unwrap().contains("1 attempt(s) at shop/prices.py failed"), "{question:#}");
    let titles: Vec<&str> =
        question["actions"].as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
    assert_eq!(
        titles,
        ["Retry with more context", "Give a hint", "Try another approach", "Stop and show the best attempt"],
        "the client announced tinycoder/inputText, so a hint is offered"
    );
    assert!(asked_text.expect("the hint was asked for")["prompt"].as_str().unwrap().contains("shop/prices.py"));
    let end = end.unwrap();
    let message = end["message"].as_str().unwrap();
    assert!(message.contains("in 2 tries"), "the hint bought a second attempt: {message}");
    assert!(common::snapshot(&root).iter().any(|(p, _)| p == "shop/prices.py"));
    assert_eq!(
        std::fs::read_to_string(root.join("shop/prices.py")).unwrap(),
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/agent-python/shop/prices.py")
        )
        .unwrap(),
        "nothing written"
    );
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
