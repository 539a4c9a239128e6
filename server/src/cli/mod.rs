//! The command line: an adapter over the same core as the language server.
//! Each subcommand lives in its own file with its `Args`.
//!
//! stdout carries results (and, for `lsp`, the protocol); logs go to stderr.

mod acp;
mod agent_cmd;
mod ask;
mod bench;
mod bench_collateral;
mod bench_complete;
mod bench_diag;
mod bench_lookup;
mod bench_model;
mod chat;
mod check_cmd;
mod config_cmd;
mod doc_cmd;
mod doctor;
mod events;
mod index;
mod lsp;
mod memory;
mod models;
mod permissions;
mod plan_cmd;
mod test_cmd;
mod trust;
mod undo;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// tinycoder: a local coding agent in your editor.
#[derive(Debug, Parser)]
#[command(name = "tinycoder", version, about)]
pub struct Cli {
    /// Workspace root (default: the current directory).
    #[arg(long, global = true)]
    pub workspace: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the language server over stdio.
    Lsp(lsp::Args),
    /// Run the Agent Client Protocol agent over stdio (Zed, JetBrains, Neovim agent panels).
    Acp(acp::Args),
    /// Fix a failing test or an error: the first failing test, or FILE[:LINE] with --message.
    Fix(agent_cmd::FixArgs),
    /// Change FILE[:START-END] as an instruction says, checked by the project's tests.
    Edit(agent_cmd::EditArgs),
    /// Write doc comments for the function or class at FILE:LINE (only comments change).
    Document(doc_cmd::DocumentArgs),
    /// Write tests for the function or class at FILE:LINE; they must pass before they are shown.
    #[command(name = "write-tests", visible_alias = "tests")]
    WriteTests(doc_cmd::WriteTestsArgs),
    /// Split a request that spans files into steps and print the validated plan (writes nothing).
    Plan(plan_cmd::PlanArgs),
    /// Carry out a request that may span files: plan, run each step, test the whole patch.
    Run(plan_cmd::RunArgs),
    /// Continue tasks an earlier run left unfinished, from their checkpoints.
    Resume(agent_cmd::ResumeArgs),
    /// Put back the files of the last patch tinycoder applied, exactly as they were.
    Undo(undo::Args),
    /// Answer a question from the project's code, citing file:line (never writes).
    Ask(ask::Args),
    /// Measure the agent on a corpus of small buggy projects.
    Bench(bench::Args),
    /// Stream a chat reply from the coder model.
    Chat(chat::Args),
    /// Print the effective configuration and where each value came from.
    Config(config_cmd::Args),
    /// Check the backend, models, storage and sandbox; print each problem with its fix.
    Doctor(doctor::Args),
    /// List the models tinycoder can use (on disk for the embedded backend, and on the server).
    Models(models::Args),
    /// Index the workspace.
    Index(index::IndexArgs),
    /// Search the workspace index.
    Search(index::SearchArgs),
    /// Print the context assembled for a location and its budget breakdown.
    Context(index::ContextArgs),
    /// Run the project's tests in the sandbox and print structured failures.
    Test(test_cmd::Args),
    /// Check, list or reset shell-command permission decisions.
    Permissions(permissions::Args),
    /// List a task's events.
    Events(events::EventsArgs),
    /// Rebuild a task's state from its events and show it step by step.
    Replay(events::ReplayArgs),
    /// Search, list or delete long-term memory.
    Memory(memory::Args),
    /// Show, record or revoke your trust of this workspace's own security settings.
    Trust(trust::Args),
    /// Run or resume a real multi-step task through the event store (for crash tests).
    #[command(hide = true)]
    DebugTask(events::DebugTaskArgs),
}

/// Shared start-up for subcommands: workspace root, configuration, prompts.
pub struct CliContext {
    pub workspace: PathBuf,
    pub loaded: crate::config::LoadedConfig,
}

impl CliContext {
    /// Loads configuration for the workspace (errors name the file and key). Security
    /// keys the workspace's own settings loosen are ignored and reported on stderr; in a
    /// terminal the user is asked once whether to trust them.
    pub fn load(workspace: Option<PathBuf>) -> anyhow::Result<Self> {
        let ctx = Self::load_quiet(workspace)?;
        trust::report_and_ask(ctx)
    }

    /// Loads configuration without reporting or asking about workspace trust.
    pub fn load_quiet(workspace: Option<PathBuf>) -> anyhow::Result<Self> {
        let workspace = match workspace {
            Some(w) => w,
            None => std::env::current_dir()
                .map_err(|e| anyhow::anyhow!("cannot read the current directory ({e}); pass --workspace DIR"))?,
        };
        let inputs = crate::config::ConfigInputs::from_environment(Some(workspace.clone()));
        let loaded = crate::config::LoadedConfig::load(&inputs)?;
        Ok(Self { workspace, loaded })
    }

    /// The prompt templates: built in, or from `prompts.dir` (relative to the workspace).
    pub fn prompts(&self) -> anyhow::Result<crate::config::PromptLibrary> {
        Ok(crate::config::PromptLibrary::for_workspace(&self.loaded.config, Some(&self.workspace))?)
    }

    /// Per-workspace cache and data directories.
    pub fn paths(&self) -> crate::paths::WorkspacePaths {
        crate::paths::WorkspacePaths::new(&self.workspace, &self.loaded.config.store.dir)
    }
}

fn init_logging(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        // llama.cpp warns about quirks of model files the user cannot act on.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{default_level},llama-cpp-2=error")));
    let _ =
        tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).with_target(false).try_init();
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Lsp(_) | Command::Acp(_)) {
        // `tinycoder search x | head` should end quietly when the reader goes away,
        // as other command-line tools do, instead of panicking on a broken pipe.
        // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    init_logging("warn");
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let workspace = cli.workspace.clone();
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Lsp(a) => lsp::run(a, workspace).await,
            Command::Acp(a) => acp::run(a, workspace).await,
            Command::Fix(a) => agent_cmd::run_fix(a, workspace).await,
            Command::Edit(a) => agent_cmd::run_edit(a, workspace).await,
            Command::Document(a) => doc_cmd::run_document(a, workspace).await,
            Command::WriteTests(a) => doc_cmd::run_write_tests(a, workspace).await,
            Command::Plan(a) => plan_cmd::run_plan(a, workspace).await,
            Command::Run(a) => plan_cmd::run_run(a, workspace).await,
            Command::Resume(a) => agent_cmd::run_resume(a, workspace).await,
            Command::Undo(a) => undo::run(a, workspace).await,
            Command::Ask(a) => ask::run(a, workspace).await,
            Command::Bench(a) => bench::run(a, workspace).await,
            Command::Chat(a) => chat::run(a, workspace).await,
            Command::Config(a) => config_cmd::run(a, workspace).await,
            Command::Doctor(a) => doctor::run(a, workspace).await,
            Command::Models(a) => models::run(a, workspace).await,
            Command::Index(a) => index::run_index(a, workspace).await,
            Command::Search(a) => index::run_search(a, workspace).await,
            Command::Context(a) => index::run_context(a, workspace).await,
            Command::Test(a) => test_cmd::run(a, workspace).await,
            Command::Permissions(a) => permissions::run(a, workspace).await,
            Command::Events(a) => events::run_events(a, workspace).await,
            Command::Replay(a) => events::run_replay(a, workspace).await,
            Command::Memory(a) => memory::run(a, workspace).await,
            Command::Trust(a) => trust::run(a, workspace).await,
            Command::DebugTask(a) => events::run_debug_task(a, workspace).await,
        }
    });
    // A blocking stdin read cannot be cancelled: bound the wait for blocking work so a
    // server whose connection ended with its input still open exits instead of hanging.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", one_message(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes on one line, each cause only when the text so far does
/// not already say it (library errors name their cause in their own message).
pub fn one_message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
