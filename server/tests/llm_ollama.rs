//! The Ollama client against the REAL Ollama of the test bed
//! (`scripts/testbed.sh up`; URL from TINYCODER_TEST_OLLAMA_URL).

mod common;

use common::{ollama_url, require_server, serial, suite, test_config};
use tinycoder::config::BackendKind;
use tinycoder::llm::{client_from_config, diagnose};

async fn ready() -> (tokio::sync::MutexGuard<'static, ()>, tinycoder::config::Config) {
    let guard = serial().await;
    require_server(&ollama_url(), "/api/version").await;
    (guard, test_config(BackendKind::Ollama, &ollama_url()))
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
    common::unload_all_ollama_models(&ollama_url()).await;
    suite::switching_roles_leaves_one_model_loaded(&config).await;
}

#[tokio::test]
async fn server_down_is_reported_with_the_fix() {
    suite::server_down_is_reported(BackendKind::Ollama).await;
}

#[tokio::test]
async fn unknown_model_says_to_pull_it() {
    let (_g, config) = ready().await;
    suite::unknown_model_is_reported(config, "ollama pull no-such-model-tinycoder").await;
}

#[tokio::test]
async fn over_budget_prompt_is_refused_before_sending() {
    suite::over_budget_is_refused_before_sending(BackendKind::Ollama).await;
}

#[tokio::test]
async fn embeddings_have_one_vector_per_input() {
    let (_g, config) = ready().await;
    let client = client_from_config(&config).expect("client");
    let v = client.embed("smollm2", &["fn add".to_string(), "def add".to_string()]).await.expect("embeddings");
    assert_eq!(v.len(), 2);
    assert!(!v[0].is_empty() && v[0].len() == v[1].len());
}

#[tokio::test]
async fn diagnose_reports_models_and_context_lengths() {
    let (_g, config) = ready().await;
    let checks = diagnose(&config).await;
    assert_eq!(checks.len(), 5, "{checks:?}");
    assert!(checks.iter().all(|c| c.ok), "{checks:#?}");
    assert!(checks[1].detail.contains("context length"), "{checks:#?}");

    let mut broken = config.clone();
    broken.models.critic.name = "no-such-model-tinycoder".into();
    broken.models.coder.num_ctx = 1_000_000;
    let checks = diagnose(&broken).await;
    let fixes: Vec<&str> = checks.iter().filter_map(|c| c.fix.as_deref()).collect();
    assert!(fixes.iter().any(|f| f.contains("ollama pull no-such-model-tinycoder")), "{fixes:?}");
    assert!(fixes.iter().any(|f| f.contains("models.coder.num_ctx to at most")), "{fixes:?}");

    let down = diagnose(&test_config(BackendKind::Ollama, &common::closed_port_url())).await;
    assert_eq!(down.len(), 1);
    assert!(!down[0].ok && down[0].fix.as_deref().unwrap_or("").contains("ollama serve"), "{down:?}");
}

/// `tinycoder chat` run as a user would: a workspace `.tinycoder.toml` with the
/// test bed's models, no user config, no inherited TINYCODER_* variables.
fn chat_command(workspace: &std::path::Path, args: &[&str]) -> tokio::process::Command {
    let toml = format!(
        "[backend]\nurl = \"{}\"\n[budget]\nreserved_output_tokens = 256\n[models.coder]\nname = \"smollm2\"\nnum_ctx = 2048\ntemperature = 0.0\nmax_output_tokens = 400\n",
        ollama_url()
    );
    std::fs::write(workspace.join(".tinycoder.toml"), toml).expect("write workspace config");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_tinycoder"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("TINYCODER_")) {
        cmd.env_remove(k);
    }
    cmd.env("TINYCODER_CONFIG", workspace.join("no-user-config.toml"))
        .env("TINYCODER_CACHE_DIR", workspace.join("cache"))
        .env("TINYCODER_DATA_DIR", workspace.join("data"))
        .arg("--workspace")
        .arg(workspace)
        .arg("chat")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    cmd
}

#[tokio::test]
async fn chat_cli_streams_a_reply() {
    let (_g, _config) = ready().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = chat_command(dir.path(), &["--max-tokens", "16", "Fix", "this:", "return a-b"])
        .output()
        .await
        .expect("run tinycoder chat");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty(), "empty reply; stderr: {stderr}");
}

#[tokio::test]
async fn chat_cli_ctrl_c_cancels_cleanly() {
    use tokio::io::AsyncReadExt;
    let (_g, _config) = ready().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child =
        chat_command(dir.path(), &["Count from one to two hundred in words, one per line."]).spawn().expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).await.expect("the reply starts streaming");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("send SIGINT");
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("chat exits after Ctrl-C")
        .expect("wait");
    assert_eq!(status.code(), Some(130), "exit status after Ctrl-C");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).await.expect("read stderr");
    assert!(err.contains("cancelled"), "stderr: {err}");
}
