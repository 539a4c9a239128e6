//! Questions a planned request puts to the user in the editor, through a real
//! LSP client over stdio: a step the planner marks `requires_confirmation`
//! arrives as `window/showMessageRequest` before it runs, and skipping it ends
//! the request with that reason and no edit. The planner is a scripted model
//! server (a double: this tests control flow, not a model).

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::json;
use std::time::{Duration, Instant};

fn planner(body: &str) -> String {
    if body.contains("STEPTAX") || body.contains("STEPCART") {
        return "```python\ndef with_tax(amount, rate=0.2):\n    return round(amount * (1 + rate), 2)\n```".into();
    }
    json!({"steps": [
        {"id": "1", "kind": "coder", "action_type": "edit", "file": "shop/tax.py", "description": "STEPTAX add rate",
         "depends_on": [], "requires_confirmation": true},
        {"id": "2", "kind": "coder", "action_type": "edit", "file": "shop/cart.py", "description": "STEPCART pass rate",
         "depends_on": ["1"]}
    ]})
    .to_string()
}

#[test]
fn a_step_marked_for_confirmation_is_asked_in_the_editor_and_skipping_it_proposes_nothing() {
    let dirs = tempfile::tempdir().expect("dirs");
    common::copy_fixture("plan-python", dirs.path());
    let env = [
        ("TINYCODER_BACKEND__KIND".to_string(), "openai".to_string()),
        ("TINYCODER_BACKEND__URL".to_string(), common::scripted_model_server(planner)),
        ("TINYCODER_RUNTIME__CRITIC".to_string(), "false".to_string()),
    ];
    let mut client = LspClient::spawn_with_env(dirs, &env);
    client
        .reply_queue
        .insert("window/showMessageRequest".into(), [json!({"title": "Skip it (the request stops)"})].into());
    client.initialize(&["utf-16"], json!({}));
    let answer = client
        .request(
            "workspace/executeCommand",
            json!({"command": "tinycoder.run", "arguments": ["add a rate parameter to with_tax in shop/tax.py and pass it from shop/cart.py"]}),
        )
        .expect("tinycoder.run answers at once");
    assert!(answer["taskId"].is_string(), "{answer}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut asked = None;
    let mut told = None;
    while told.is_none() {
        let m = client.next_before(deadline, "the request's end");
        let text = m["params"]["message"].as_str().unwrap_or_default().to_string();
        match m["method"].as_str() {
            Some("window/showMessageRequest") => asked = Some(text),
            Some("window/showMessage") if text.contains("did not confirm") => told = Some(text),
            Some("workspace/applyEdit") => panic!("an edit was proposed for a step that never ran: {m}"),
            _ => {}
        }
    }
    let asked = asked.expect("the step was put to the user before it ran");
    assert!(asked.starts_with("Run step 1 of the plan (shop/tax.py): STEPTAX add rate?"), "{asked}");
    assert!(client.shutdown_and_exit().success());
}
