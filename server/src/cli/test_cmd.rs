//! `tinycoder test [PATH] [--json]`: runs the project's tests in the sandbox
//! and prints the structured failures.

use crate::sandbox::{run_project_tests, TestReport};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Project directory (default: --workspace, else the current directory).
    pub path: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the tests; exit code 0 when they pass, 1 when they fail.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = super::CliContext::load(args.path.or(workspace))?;
    let paths = ctx.paths();
    let cancel = tokio_util::sync::CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let report = run_project_tests(&ctx.loaded.config, &paths, &[], &cancel).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(if report.passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn print_report(report: &TestReport) {
    for m in report.mechanisms.iter().filter(|m| !m.enforced) {
        eprintln!("warning: sandbox mechanism `{}` not enforced: {}", m.name, m.detail);
    }
    println!("$ {}", report.command);
    println!("  (chosen because: {})", report.why);
    for f in &report.failures {
        let loc = if f.file.is_empty() { "<unknown>".to_string() } else { format!("{}:{}", f.file, f.line) };
        println!("{loc}: [{}] {}", f.test, f.message.replace('\n', "\n    "));
    }
    println!(
        "{} in {:.1}s ({} failure{})",
        if report.passed { "PASSED" } else { "FAILED" },
        report.duration.as_secs_f64(),
        report.failures.len(),
        if report.failures.len() == 1 { "" } else { "s" }
    );
}
