//! `tinycoder models list`: the models tinycoder can use, and from where: the
//! configured server's models, and the GGUF files the embedded backend finds.

use super::CliContext;
use crate::config::{BackendKind, ModelRole};
use crate::llm::local_models::{read_gguf_info, ModelLocator};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

/// What to do with models.
#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// List the models on disk (embedded backend) and on the configured server, with the roles using them.
    List {
        /// Print JSON rows instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// One usable model.
#[derive(Debug, serde::Serialize)]
struct Row {
    name: String,
    /// "disk" (the embedded backend loads it) or "server".
    from: &'static str,
    /// The file, or the server's URL.
    location: String,
    context_length: Option<u64>,
    size_bytes: Option<u64>,
    /// Roles configured with this model.
    roles: Vec<String>,
}

pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ModelsCommand::List { json } = args.command;
    let ctx = CliContext::load(workspace)?;
    let config = &ctx.loaded.config;
    let roles_of = |name: &str| -> Vec<String> {
        ModelRole::ALL.iter().filter(|r| config.models.get(**r).name == name).map(|r| r.to_string()).collect()
    };
    let locator = ModelLocator::new(&config.backend);
    let mut rows: Vec<Row> = Vec::new();
    for role in ModelRole::ALL {
        if let Ok(m) = locator.find_role(config, role) {
            if !rows.iter().any(|r| r.location == m.path.display().to_string()) {
                rows.push(disk_row(m.name.clone(), &m.path, roles_of(&m.name)));
            }
        }
    }
    for m in locator.list() {
        if !rows.iter().any(|r| r.location == m.path.display().to_string()) {
            let roles = roles_of(&m.name);
            rows.push(disk_row(m.name, &m.path, roles));
        }
    }
    let mut notes = Vec::new();
    // One client: `auto` is resolved (a connection attempt) once, by making it.
    let backend = match crate::llm::client_from_config(config) {
        Ok(client) if client.backend() != BackendKind::Embedded => {
            match client.list_models().await {
                Ok(models) => rows.extend(models.into_iter().map(|m| Row {
                    roles: roles_of(&m.name),
                    name: m.name,
                    from: "server",
                    location: client.url().to_string(),
                    context_length: m.context_length,
                    size_bytes: m.size_bytes,
                })),
                Err(e) => notes.push(format!("the server's models are not listed: {e}")),
            }
            client.backend()
        }
        Ok(client) => client.backend(),
        Err(e) => {
            notes.push(format!("the server's models are not listed: {e}"));
            config.backend.kind
        }
    };
    let backend_name = match backend {
        BackendKind::Embedded => "embedded (models load from disk, no server)".to_string(),
        BackendKind::Openai => format!("OpenAI-compatible server at {}", config.backend.url),
        BackendKind::Ollama | BackendKind::Auto => format!("Ollama at {}", config.backend.url),
    };
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({"backend": format!("{backend:?}").to_lowercase(), "models": rows, "notes": notes});
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "backend in use: {backend_name}")?;
    if rows.is_empty() {
        writeln!(
            out,
            "no models found: pull one with `ollama pull qwen2.5-coder:1.5b`, set backend.models_dir to a folder of <name>.gguf files, or set models.<role>.path"
        )?;
    }
    for r in &rows {
        let ctx_len = r.context_length.map(|c| format!("ctx {c}")).unwrap_or_else(|| "ctx ?".into());
        let size = r.size_bytes.map(|b| format!("{:.0} MB", b as f64 / 1e6)).unwrap_or_default();
        let roles = if r.roles.is_empty() { String::new() } else { format!("  [{}]", r.roles.join(", ")) };
        writeln!(out, "{:<28} {:<6} {:<10} {:>8}  {}{}", r.name, r.from, ctx_len, size, r.location, roles)?;
    }
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn disk_row(name: String, path: &std::path::Path, roles: Vec<String>) -> Row {
    Row {
        name,
        from: "disk",
        location: path.display().to_string(),
        context_length: read_gguf_info(path).ok().and_then(|i| i.context_length),
        size_bytes: std::fs::metadata(path).ok().map(|m| m.len()),
        roles,
    }
}
