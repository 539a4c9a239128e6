//! `tinycoder bench lookup FILE`: the chat requests an agent run sent (recorded by
//! `tinycoder bench fix --record-calls FILE`) replayed on the embedded backend at
//! temperature 0, each once without prompt-lookup drafts and once with them, one
//! after the other on the same model: reply tokens per second both ways, and
//! whether the replies are the same.

use super::CliContext;
use crate::config::{BackendKind, Config, ModelRole};
use crate::llm::{ChatRequest, ModelClient, RecordedCall};
use futures::StreamExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder bench lookup`.
#[derive(Debug, clap::Args)]
pub struct LookupBenchArgs {
    /// A JSON-lines file of recorded calls (`tinycoder bench fix --record-calls FILE`).
    pub calls: PathBuf,
    /// Use this model for every role (default: the configured models).
    #[arg(long)]
    pub model: Option<String>,
    /// Only calls of this role (planner, coder, critic, summarizer; default coder); `all` for every call.
    #[arg(long, default_value = "coder")]
    pub role: String,
    /// At most this many calls (the first ones).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Draft tokens for the run with drafts (default: backend.lookup_draft_tokens).
    #[arg(long)]
    pub draft: Option<u32>,
    /// Cap every reply at this many tokens (default: each call's own cap), to bound the run's time.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One reply, timed.
#[derive(Debug, Clone, serde::Serialize)]
struct Timed {
    tokens: usize,
    /// Seconds from the first reply token to the last.
    gen_s: f64,
    total_s: f64,
    /// Reply tokens that came from drafts.
    drafted: usize,
    #[serde(skip)]
    text: String,
}

impl Timed {
    fn tps(&self) -> f64 {
        (self.tokens as f64 - 1.0).max(0.0) / self.gen_s.max(1e-6)
    }
}

/// One replayed call, both ways.
#[derive(Debug, serde::Serialize)]
struct Compared {
    index: usize,
    role: ModelRole,
    plain: Timed,
    drafted: Timed,
    same_reply: bool,
}

pub async fn run(args: LookupBenchArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let mut config = ctx.loaded.config.clone();
    config.backend.kind = BackendKind::Embedded;
    if let Some(m) = &args.model {
        let models = &mut config.models;
        for role in [&mut models.planner, &mut models.coder, &mut models.critic, &mut models.summarizer] {
            role.name = m.clone();
        }
    }
    let role = match args.role.as_str() {
        "all" => None,
        r => Some(
            ModelRole::ALL
                .into_iter()
                .find(|x| x.as_str() == r)
                .ok_or_else(|| anyhow::anyhow!("--role {r}: one of planner, coder, critic, summarizer, all"))?,
        ),
    };
    let calls: Vec<RecordedCall> = RecordedCall::read_all(&args.calls)
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .filter(|c| role.is_none_or(|r| c.role == r))
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    if calls.is_empty() {
        anyhow::bail!("{} holds no {} calls to replay", args.calls.display(), args.role);
    }
    let plain = client(&config, 0)?;
    let drafted = client(&config, args.draft.unwrap_or(config.backend.lookup_draft_tokens).max(1))?;
    for c in [&plain, &drafted] {
        c.check_ready(ModelRole::Coder).await?;
        // The model load, outside the timings.
        let mut warm = ChatRequest::new(ModelRole::Coder, vec![crate::llm::ChatMessage::user("Say OK.")]);
        warm.max_tokens = Some(2);
        timed(c.as_ref(), warm).await?;
    }
    let mut results = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let mut req = call.request();
        req.temperature = Some(0.0);
        if let Some(cap) = args.max_tokens {
            req.max_tokens = Some(req.max_tokens.map_or(cap, |m| m.min(cap)));
        }
        // Alternate which way runs first, so neither always meets a warmer machine.
        let (a, b) = if index % 2 == 0 { (&plain, &drafted) } else { (&drafted, &plain) };
        let first = timed(a.as_ref(), req.clone()).await?;
        let second = timed(b.as_ref(), req).await?;
        let (p, d) = if index % 2 == 0 { (first, second) } else { (second, first) };
        let same_reply = p.text == d.text;
        eprintln!(
            "call {index} ({}): {} tokens ({} from drafts), {:.1} -> {:.1} tokens/s ({:.2}x){}",
            call.role,
            p.tokens,
            d.drafted,
            p.tps(),
            d.tps(),
            d.tps() / p.tps().max(1e-6),
            if same_reply { "" } else { ", the replies differ" }
        );
        results.push(Compared { index, role: call.role, plain: p, drafted: d, same_reply });
    }
    report(&args, &config, &results)
}

/// An embedded client whose chat replies draft up to `draft` tokens (0 = none).
fn client(config: &Config, draft: u32) -> anyhow::Result<Arc<dyn ModelClient>> {
    let mut config = config.clone();
    config.backend.lookup_draft_tokens = draft;
    Ok(crate::llm::client_from_config(&config)?)
}

async fn timed(client: &dyn ModelClient, mut req: ChatRequest) -> anyhow::Result<Timed> {
    let usage: crate::llm::PromptUsageSink = Default::default();
    req.usage = Some(usage.clone());
    let t0 = Instant::now();
    let mut stream = client.chat_stream(req, CancellationToken::new()).await?;
    let (mut first, mut tokens, mut text) = (None, 0, String::new());
    // The embedded backend hands out one delta per token (rarely fewer, when a token splits a character).
    while let Some(delta) = stream.next().await {
        let delta = delta?;
        if delta.is_empty() {
            continue;
        }
        first.get_or_insert_with(|| t0.elapsed().as_secs_f64());
        tokens += 1;
        text.push_str(&delta);
    }
    let total_s = t0.elapsed().as_secs_f64();
    let drafted = usage.lock().ok().and_then(|u| *u).and_then(|u| u.drafted).unwrap_or(0);
    Ok(Timed { tokens, gen_s: total_s - first.unwrap_or(total_s), total_s, drafted, text })
}

fn report(args: &LookupBenchArgs, config: &Config, results: &[Compared]) -> anyhow::Result<ExitCode> {
    let sum = |f: &dyn Fn(&Compared) -> f64| results.iter().map(f).sum::<f64>();
    let plain_tps = sum(&|r| r.plain.tokens as f64) / sum(&|r| r.plain.gen_s).max(1e-6);
    let drafted_tps = sum(&|r| r.drafted.tokens as f64) / sum(&|r| r.drafted.gen_s).max(1e-6);
    let mut ratios: Vec<f64> = results.iter().map(|r| r.drafted.tps() / r.plain.tps().max(1e-6)).collect();
    ratios.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| super::bench_complete::percentile(&ratios, p);
    let same = results.iter().filter(|r| r.same_reply).count();
    let from_drafts = sum(&|r| r.drafted.drafted as f64) / sum(&|r| r.drafted.tokens as f64).max(1.0);
    let summary = serde_json::json!({
        "model": config.models.coder.name,
        "calls": results.len(),
        "draft_tokens": args.draft.unwrap_or(config.backend.lookup_draft_tokens),
        "plain_tokens_per_s": plain_tps,
        "drafted_tokens_per_s": drafted_tps,
        "speedup": drafted_tps / plain_tps.max(1e-6),
        "speedup_p10": pct(0.1),
        "speedup_p50": pct(0.5),
        "speedup_p90": pct(0.9),
        "same_replies": same,
        "share_from_drafts": from_drafts,
        "results": results,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{}: {} calls, reply tokens/s {:.1} without drafts, {:.1} with (x{:.2} overall; per call p10 {:.2}, p50 {:.2}, p90 {:.2}); {:.0} % of reply tokens from drafts; same reply {}/{}",
            config.models.coder.name,
            results.len(),
            plain_tps,
            drafted_tps,
            drafted_tps / plain_tps.max(1e-6),
            pct(0.1),
            pct(0.5),
            pct(0.9),
            from_drafts * 100.0,
            same,
            results.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
