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
    let trust = &ctx.loaded.trust;
    let ignored = |k: &str| trust.ignored.iter().find(|l| l.key == k || k.starts_with(&format!("{}.", l.key)));
    let applied = |k: &str| trust.applied.iter().find(|l| l.key == k || k.starts_with(&format!("{}.", l.key)));
    let mut out = String::new();
    if args.json {
        let mut map = serde_json::Map::new();
        for (k, v, o) in rows {
            let mut entry = serde_json::json!({"value": v, "origin": o.to_string()});
            if let Some(l) = ignored(&k) {
                entry["ignored"] = serde_json::json!({"requested": l.requested, "origin": l.origin.to_string(),
                    "why": "the workspace is not trusted to loosen this security key"});
            }
            if applied(&k).is_some() {
                entry["trusted"] = serde_json::json!(true);
            }
            map.insert(k, entry);
        }
        out = serde_json::to_string_pretty(&map)?;
        out.push('\n');
    } else {
        let width = (rows.iter().map(|(k, v, _)| k.len() + v.len()).max().unwrap_or(0) + 4).min(60);
        for (k, v, o) in rows {
            let lhs = format!("{k} = {v}");
            let note = match (ignored(&k), applied(&k)) {
                (Some(l), _) => format!(" (ignored: {} from {}; untrusted workspace)", l.requested, l.origin),
                (_, Some(_)) => " (loosens a security key; workspace trusted)".to_string(),
                _ => String::new(),
            };
            out.push_str(&format!("{lhs:<width$} # {o}{note}\n"));
        }
        for line in trust.ignored_lines() {
            out.push_str(&format!("# {line}\n"));
        }
    }
    use std::io::Write;
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
