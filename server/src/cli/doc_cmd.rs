//! `tinycoder document FILE:LINE` and `tinycoder write-tests FILE:LINE`: doc
//! comments for a definition, and tests for it that must pass in the shadow.
//! Both are jobs of the workspace session, shown and written like a fix.

use super::agent_cmd::{run_job, ApplyArgs};
use super::CliContext;
use crate::agent::{AgentRequest, Job, Location};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder document`.
#[derive(Debug, clap::Args)]
pub struct DocumentArgs {
    /// FILE:LINE inside the function or class to document (only its comments and docstrings change).
    pub target: String,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// Arguments of `tinycoder write-tests`.
#[derive(Debug, clap::Args)]
pub struct WriteTestsArgs {
    /// FILE:LINE inside the function or class to test.
    pub target: String,
    /// The test file to add them to (default: one of the project's, or a new one beside it).
    #[arg(long)]
    pub test_file: Option<String>,
    #[command(flatten)]
    pub apply: ApplyArgs,
}

/// `tinycoder document FILE:LINE`.
pub async fn run_document(args: DocumentArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let target = Location::parse(&args.target).map_err(anyhow::Error::msg)?;
    let job = Job::Document { task_id: uuid::Uuid::new_v4().to_string(), path: target.path, line: target.start_line };
    run_job(CliContext::load(workspace)?, job, &args.apply).await
}

/// `tinycoder write-tests FILE:LINE [--test-file FILE]`.
pub async fn run_write_tests(args: WriteTestsArgs, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let target = Location::parse(&args.target).map_err(anyhow::Error::msg)?;
    let target = Location::line(target.path, target.start_line);
    let request = AgentRequest::AddTests { target, test_file: args.test_file };
    let job = Job::New { task_id: uuid::Uuid::new_v4().to_string(), request };
    run_job(CliContext::load(workspace)?, job, &args.apply).await
}
