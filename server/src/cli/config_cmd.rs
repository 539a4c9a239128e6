//! `tinycoder config`: the effective configuration and the origin of each value.

use super::CliContext;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder config`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON (`{key: {value, origin}}`) instead of annotated TOML-like lines.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(workspace)?;
    let rows = ctx.loaded.describe();
    let mut out = String::new();
    if args.json {
        let map: serde_json::Map<String, serde_json::Value> = rows
            .into_iter()
            .map(|(k, v, o)| (k, serde_json::json!({"value": v, "origin": o.to_string()})))
            .collect();
        out = serde_json::to_string_pretty(&map)?;
        out.push('\n');
    } else {
        let width = rows.iter().map(|(k, v, _)| k.len() + v.len()).max().unwrap_or(0) + 4;
        for (k, v, o) in rows {
            let lhs = format!("{k} = {v}");
            out.push_str(&format!("{lhs:<width$} # {o}\n"));
        }
    }
    use std::io::Write;
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
