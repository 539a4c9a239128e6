//! `tinycoder bench model`: the speed of the configured backend on one prompt,
//! seen from tinycoder's side of the client (so every backend is measured the
//! same way): time to first token, prompt and generation tokens per second,
//! and the peak memory of tinycoder's own process (where the embedded backend
//! keeps the model).

use super::CliContext;
use crate::config::ModelRole;
use crate::llm::{client_from_config, ChatMessage, ChatRequest};
use futures::StreamExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder bench model`.
#[derive(Debug, clap::Args)]
pub struct ModelBenchArgs {
    /// The coder role's model for this run (default: the configured one).
    #[arg(long)]
    pub model: Option<String>,
    /// A file whose text is the prompt (default: about 600 tokens of Python).
    #[arg(long)]
    pub prompt_file: Option<PathBuf>,
    /// Timed calls after one warm-up call (the model load).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Reply tokens per call.
    #[arg(long, default_value_t = 128)]
    pub max_tokens: u32,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One timed call.
#[derive(Debug, serde::Serialize)]
struct Run {
    ttft_s: f64,
    prompt_tokens: usize,
    prompt_tps: f64,
    gen_tokens: usize,
    gen_tps: f64,
}

fn default_prompt() -> String {
    let code: String = (0..24)
        .map(|i| format!("def f{i}(values):\n    total = 0\n    for v in values:\n        total += v * {i}\n    return total\n\n"))
        .collect();
    format!("Explain what these functions have in common, then write one function that replaces them all.\n\n{code}")
}

pub async fn run(args: ModelBenchArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let mut config = ctx.loaded.config.clone();
    if let Some(m) = &args.model {
        config.models.coder.name = m.clone();
    }
    config.models.coder.temperature = 0.0;
    let client = client_from_config(&config)?;
    let prompt = match &args.prompt_file {
        Some(p) => std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?,
        None => default_prompt(),
    };
    let mut runs = Vec::new();
    for i in 0..=args.runs {
        // A distinct first line defeats every backend's prompt cache, so each run evaluates the whole prompt.
        let text = format!("Run {i} of {}.\n{prompt}", args.runs);
        let mut req = ChatRequest::new(ModelRole::Coder, vec![ChatMessage::user(text.clone())]);
        req.max_tokens = Some(args.max_tokens);
        let usage: crate::llm::PromptUsageSink = Default::default();
        req.usage = Some(usage.clone());
        let t0 = Instant::now();
        let mut stream = client.chat_stream(req, CancellationToken::new()).await?;
        let mut first = None;
        // Every backend streams one delta per generated token (the embedded one joins the
        // rare token that splits a character), so deltas count tokens the same way for all.
        let mut gen_tokens = 0;
        while let Some(delta) = stream.next().await {
            let delta = delta?;
            if delta.is_empty() {
                continue;
            }
            if first.is_none() {
                first = Some(t0.elapsed().as_secs_f64());
            }
            gen_tokens += 1;
        }
        let total = t0.elapsed().as_secs_f64();
        if i == 0 {
            continue; // the warm-up: model load
        }
        let reported = usage.lock().ok().and_then(|u| *u).map(|u| u.evaluated + u.cached.unwrap_or(0));
        let prompt_tokens = match reported {
            Some(n) => n,
            None => client.count_tokens(ModelRole::Coder, &text).await.ok().flatten().unwrap_or(0),
        };
        let ttft = first.unwrap_or(total);
        runs.push(Run {
            ttft_s: ttft,
            prompt_tokens,
            prompt_tps: prompt_tokens as f64 / ttft,
            gen_tokens,
            gen_tps: (gen_tokens as f64 - 1.0).max(0.0) / (total - ttft).max(1e-6),
        });
    }
    let median = |f: &dyn Fn(&Run) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let summary = serde_json::json!({
        "backend": format!("{:?}", client.backend()).to_lowercase(),
        "model": config.models.coder.name,
        "runs": runs,
        "median_ttft_s": median(&|r| r.ttft_s),
        "median_prompt_tps": median(&|r| r.prompt_tps),
        "median_gen_tps": median(&|r| r.gen_tps),
        "peak_rss_mb": peak_rss_mb(),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{} {}: time to first token {:.2} s, prompt {:.0} tokens/s, generation {:.1} tokens/s (medians of {}), tinycoder's peak RSS {} MB",
            summary["backend"].as_str().unwrap_or(""),
            config.models.coder.name,
            summary["median_ttft_s"].as_f64().unwrap_or(0.0),
            summary["median_prompt_tps"].as_f64().unwrap_or(0.0),
            summary["median_gen_tps"].as_f64().unwrap_or(0.0),
            runs.len(),
            summary["peak_rss_mb"].as_u64().map(|m| m.to_string()).unwrap_or_else(|| "?".into()),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `VmHWM` of this process, in MB (Linux).
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
