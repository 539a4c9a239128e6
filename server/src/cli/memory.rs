//! `tinycoder memory search|list|delete`: long-term memory from the command line.

use super::CliContext;
use crate::contracts::{MemoryEntry, MemoryKind, MemorySource};
use crate::memory::{MemoryFilter, MemoryRetriever, MemoryStore};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder memory`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// What to do with memory.
#[derive(Debug, clap::Subcommand)]
pub enum MemoryCommand {
    /// Find the items most relevant to a query (BM25 + weight + recency).
    Search {
        /// Free text, e.g. an error message.
        query: String,
        #[command(flatten)]
        filter: FilterArgs,
        /// Most items to print.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Print JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// List items, newest first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Delete an item by id.
    Delete {
        /// The item id (from `list` or `search`).
        id: String,
    },
}

/// Filters shared by `search` and `list`.
#[derive(Debug, clap::Args)]
pub struct FilterArgs {
    /// error_fix, decision, fact, user_preference or summary.
    #[arg(long)]
    pub kind: Option<String>,
    /// tool, critic, user or system.
    #[arg(long)]
    pub source: Option<String>,
    #[arg(long)]
    pub task: Option<String>,
    #[arg(long)]
    pub session: Option<String>,
}

impl FilterArgs {
    fn to_filter(&self) -> anyhow::Result<MemoryFilter> {
        let kind = match &self.kind {
            Some(k) => Some(MemoryKind::parse(k).ok_or_else(|| {
                anyhow::anyhow!("unknown --kind {k:?}; use error_fix, decision, fact, user_preference or summary")
            })?),
            None => None,
        };
        let source = match &self.source {
            Some(s) => Some(
                MemorySource::parse(s)
                    .ok_or_else(|| anyhow::anyhow!("unknown --source {s:?}; use tool, critic, user or system"))?,
            ),
            None => None,
        };
        Ok(MemoryFilter {
            kind,
            source,
            task_id: self.task.clone(),
            session_id: self.session.clone(),
            min_weight: None,
        })
    }
}

fn line(e: &MemoryEntry, score: Option<f32>) -> String {
    let text: String = e.text.replace('\n', " ").chars().take(100).collect();
    let score = score.map(|s| format!("{s:.3}  ")).unwrap_or_default();
    format!("{score}{}  {:<15} w={:.2}  {}  {}", e.id, e.kind.as_str(), e.weight, e.updated_at, text)
}

pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let root = ctx.workspace.clone();
    let config = ctx.loaded.config.clone();
    let store = tokio::task::spawn_blocking(move || crate::store::open_workspace(&root, &config)).await??;
    let memory = MemoryStore::new(store);
    let mut out = std::io::stdout().lock();
    match args.command {
        MemoryCommand::Search { query, filter, limit, json } => {
            // The CLI searches full-text only: it does not start a model client for embeddings.
            let retriever = MemoryRetriever::new(memory, ctx.loaded.config.memory.clone(), None);
            for found in retriever.search(&query, filter.to_filter()?, limit).await? {
                if json {
                    writeln!(out, "{}", serde_json::to_string(&found)?)?;
                } else {
                    writeln!(out, "{}", line(&found.entry, Some(found.score)))?;
                }
            }
        }
        MemoryCommand::List { filter, limit, json } => {
            for e in memory.list(filter.to_filter()?, limit).await? {
                if json {
                    writeln!(out, "{}", serde_json::to_string(&e)?)?;
                } else {
                    writeln!(out, "{}", line(&e, None))?;
                }
            }
        }
        MemoryCommand::Delete { id } => {
            if !memory.delete(&id).await? {
                anyhow::bail!("no memory item `{id}` (see `tinycoder memory list`)");
            }
            writeln!(out, "deleted {id}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
