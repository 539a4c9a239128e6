//! `tinycoder index`, `tinycoder search`, `tinycoder context`: the workspace
//! index and the context builder from a terminal.

use super::CliContext;
use crate::config::ModelRole;
use crate::context::{ContextBuilder, ContextRequest, NoMemory, RequestKind, TokenCounter};
use crate::index::WorkspaceIndex;
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder index`.
#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// Folder to index (default: the workspace).
    pub path: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tinycoder search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// What to look for: identifiers, a diagnostic message, a question.
    pub query: String,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
    /// Most results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
}

/// Arguments of `tinycoder context`.
#[derive(Debug, clap::Args)]
pub struct ContextArgs {
    /// Location as FILE:LINE (FILE relative to the workspace).
    #[arg(long)]
    pub at: String,
    /// The diagnostic message or instruction.
    #[arg(long)]
    pub message: Option<String>,
    /// Role whose model's budget applies.
    #[arg(long, default_value = "coder")]
    pub role: String,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

fn open(workspace: Option<PathBuf>, path: Option<PathBuf>) -> anyhow::Result<(CliContext, WorkspaceIndex)> {
    let ctx = CliContext::load(path.or(workspace))?;
    let mut cfg = ctx.loaded.config.clone();
    cfg.index.watch = false; // one-shot commands need no watcher
    let index = WorkspaceIndex::open_for_workspace(&ctx.workspace, &cfg)
        .with_context(|| format!("cannot open the index of {}", ctx.workspace.display()))?;
    Ok((ctx, index))
}

async fn sync(index: Arc<WorkspaceIndex>, bar: bool) -> anyhow::Result<crate::index::IndexSummary> {
    let summary = tokio::task::spawn_blocking(move || {
        let pb = indicatif::ProgressBar::with_draw_target(Some(0), indicatif::ProgressDrawTarget::stderr());
        if bar {
            pb.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {wide_msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
        } else {
            pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let cancel = CancellationToken::new();
        let r = index.index_all(
            |p| {
                pb.set_length(p.total as u64);
                pb.set_position(p.done as u64);
                pb.set_message(p.path);
            },
            &cancel,
        );
        pb.finish_and_clear();
        r
    })
    .await??;
    Ok(summary)
}

/// `tinycoder index [PATH]`.
pub async fn run_index(args: IndexArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let (_ctx, index) = open(workspace, args.path)?;
    let s = sync(Arc::new(index), true).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "{} files ({} indexed, {} unchanged, {} skipped, {} removed), {} symbols, {} chunks in {:.2}s",
            s.total_files, s.indexed, s.unchanged, s.skipped, s.removed, s.symbols, s.chunks, s.seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `tinycoder search QUERY`.
pub async fn run_search(args: SearchArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let (_ctx, index) = open(workspace, None)?;
    let index = Arc::new(index);
    sync(index.clone(), false).await?;
    let hits = index.search(&args.query, args.limit)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&hits)?);
    } else {
        for h in &hits {
            let name = match h.symbol.as_str() {
                "" => String::new(),
                s if s.starts_with(&h.kind) => format!(" {s}"),
                s => format!(" {} {s}", h.kind),
            };
            println!("{:7.2}  {}:{}-{}{}", h.score, h.path, h.start_line, h.end_line, name);
        }
    }
    Ok(if hits.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `tinycoder context --at FILE:LINE [--message TEXT]`.
pub async fn run_context(args: ContextArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let (file, line) = args
        .at
        .rsplit_once(':')
        .and_then(|(f, l)| l.parse::<usize>().ok().map(|l| (f.to_string(), l)))
        .with_context(|| format!("--at `{}` is not FILE:LINE (e.g. src/main.rs:12)", args.at))?;
    let role: ModelRole = serde_json::from_value(serde_json::Value::String(args.role.clone()))
        .with_context(|| format!("--role `{}` is not one of planner, coder, critic, summarizer", args.role))?;
    let (ctx, index) = open(workspace, None)?;
    let index = Arc::new(index);
    sync(index.clone(), false).await?;
    let cfg = &ctx.loaded.config;
    let prompts = ctx.prompts()?;
    let counter = TokenCounter::estimating(&cfg.budget);
    let builder =
        ContextBuilder { index: &index, prompts: &prompts, config: cfg, memory: &NoMemory, counter: &counter };
    let kind = match args.message {
        Some(m) => RequestKind::Diagnostic { path: file, line, message: m },
        None => RequestKind::Selection {
            path: file,
            start_line: line,
            end_line: line,
            instruction: "Explain this code.".into(),
        },
    };
    let built = builder.build(&ContextRequest { kind, role }).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&built)?);
    } else {
        for s in &built.sections {
            println!("===== {:?} {} ({} tokens)", s.kind, s.title, s.tokens);
            println!("{}\n", s.text);
        }
        let b = &built.budget;
        println!(
            "budget: num_ctx {} = reserved output {} + margin {} + prompt {} (system {}, request {}, code {}, memory {}, repo map {}) + free {}; {}",
            b.num_ctx,
            b.reserved_output,
            b.safety_margin,
            b.total,
            b.system,
            b.request,
            b.code,
            b.memory,
            b.repo_map,
            b.num_ctx.saturating_sub(b.reserved_output + b.safety_margin + b.total),
            if b.exact { "exact counts" } else { "estimated counts (over-count)" }
        );
        if !b.dropped.is_empty() {
            println!("dropped to fit: {}", b.dropped.join("; "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
