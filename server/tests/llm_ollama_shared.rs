//! Sharing the test bed's REAL Ollama with another application: a model that
//! application loaded stays loaded across a tinycoder role switch, and
//! tinycoder never asks Ollama to unload it. The other application's model is
//! registered for this test under its own name, and tinycoder talks to Ollama
//! through a recording pass-through, so other users of the server cannot make
//! the test pass or fail by chance.

mod common;

use common::{ollama_url, require_server, serial, test_config, CODER_MODEL};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tinycoder::config::{BackendKind, ModelRole};
use tinycoder::llm::{client_from_config, ChatMessage, ChatRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Forwards connections to `upstream` and records every byte the client sent.
async fn recording_proxy(upstream: String) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let record = sent.clone();
    let target = upstream.trim_start_matches("http://").to_string();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let target = target.clone();
            let record = record.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else { return };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let up = async {
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        record.lock().unwrap().extend_from_slice(&buf[..n]);
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (url, sent)
}

async fn post(url: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
    let resp = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .timeout(Duration::from_secs(300))
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(resp.status().is_success(), "{path}: {}", resp.status());
    let text = resp.text().await.unwrap();
    serde_json::from_str(text.lines().last().unwrap_or("{}")).unwrap_or_default()
}

async fn loaded(url: &str) -> Vec<String> {
    let v: serde_json::Value = reqwest::get(format!("{url}/api/ps")).await.unwrap().json().await.unwrap();
    v["models"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_model_another_application_loaded_survives_a_role_switch() {
    let _g = serial().await;
    let ollama = ollama_url();
    require_server(&ollama, "/api/version").await;
    // Start from nothing loaded: a model an earlier test left loaded would take a slot.
    common::unload_all_ollama_models(&ollama).await;
    // "Another application": its own model (a copy of the test bed's Qwen 0.5B under a unique name), loaded for 10 minutes.
    let other = format!("tinycoder-other-app-{}:latest", std::process::id());
    // A copy of a model tinycoder's roles do not use: a copy of smollm2 would share its
    // weights, and Ollama runs one runner per weights file, so unloading smollm2 unloads both.
    post(&ollama, "/api/create", serde_json::json!({"model": other, "from": common::AGENT_MODEL, "stream": false}))
        .await;
    post(&ollama, "/api/generate", serde_json::json!({"model": other, "keep_alive": "10m"})).await;
    assert!(loaded(&ollama).await.contains(&other), "the other application's model is loaded");

    // tinycoder, one model at a time, switches roles: coder (smollm2), then critic (gemma3).
    let (proxy, sent) = recording_proxy(ollama.clone()).await;
    let config = test_config(BackendKind::Ollama, &proxy);
    let client = client_from_config(&config).unwrap();
    for role in [ModelRole::Coder, ModelRole::Critic] {
        let mut req = ChatRequest::new(role, vec![ChatMessage::user("Say hi.")]);
        req.max_tokens = Some(4);
        client.chat(req, CancellationToken::new()).await.unwrap_or_else(|e| panic!("{role}: {e}"));
    }

    let traffic = String::from_utf8_lossy(&sent.lock().unwrap()).to_string();
    let unloads: Vec<&str> = traffic
        .split("POST /api/generate")
        .skip(1)
        .filter(|r| r.contains("\"keep_alive\":0"))
        .map(|r| r.split("\"model\":\"").nth(1).and_then(|m| m.split('"').next()).unwrap_or("?"))
        .collect();
    assert!(!unloads.contains(&other.as_str()), "tinycoder asked Ollama to unload {other}: {unloads:?}");
    // What it does unload is only what it loaded itself (smollm2, unless another user had it loaded first).
    assert!(unloads.iter().all(|m| *m == format!("{CODER_MODEL}:latest")), "{unloads:?}");
    let now = loaded(&ollama).await;
    // Unload, then delete: a deleted model stays loaded until it expires and would take a slot.
    post(&ollama, "/api/generate", serde_json::json!({"model": other, "keep_alive": 0})).await;
    let _ = reqwest::Client::new()
        .delete(format!("{ollama}/api/delete"))
        .json(&serde_json::json!({"model": other}))
        .send()
        .await;
    // Ollama evicts on its own when it runs out of slots (the test bed allows 2): a third party's
    // model loaded meanwhile can push ours out without tinycoder's doing. Only then is the check skipped.
    let third_party: Vec<&String> =
        now.iter().filter(|m| **m != other && !m.starts_with("gemma3") && !m.starts_with(CODER_MODEL)).collect();
    if third_party.is_empty() {
        assert!(now.contains(&other), "the other application's model was unloaded; loaded now: {now:?}");
    } else {
        eprintln!("note: {third_party:?} (another user of the server) took a slot; only the requests were checked");
    }
}
