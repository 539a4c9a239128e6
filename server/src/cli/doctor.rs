//! `tinycoder doctor`: checks configuration, prompts, the model server and each
//! role's model, storage, and sandbox mechanisms; prints each problem with its fix.

use super::CliContext;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `tinycoder doctor`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the doctor's report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    pub area: &'static str,
    pub status: Status,
    pub detail: String,
    /// What to do about it, when it is not ok.
    pub fix: Option<String>,
}

impl Check {
    fn ok(area: &'static str, detail: impl Into<String>) -> Self {
        Self { area, status: Status::Ok, detail: detail.into(), fix: None }
    }
    fn warn(area: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { area, status: Status::Warn, detail: detail.into(), fix: Some(fix.into()) }
    }
    fn fail(area: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { area, status: Status::Fail, detail: detail.into(), fix: Some(fix.into()) }
    }
}

pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let ctx = match CliContext::load_quiet(workspace) {
        Ok(ctx) => {
            checks.push(Check::ok("config", "configuration loaded and valid (see `tinycoder config`)"));
            checks.extend(trust_checks(&ctx.loaded.trust));
            Some(ctx)
        }
        Err(e) => {
            checks.push(Check::fail("config", format!("{e:#}"), "fix the named key in the named file"));
            None
        }
    };
    if let Some(ctx) = &ctx {
        let config = &ctx.loaded.config;
        match ctx.prompts() {
            Ok(_) => checks.push(Check::ok("prompts", "all prompt templates load and use only known variables")),
            Err(e) => checks.push(Check::fail("prompts", e.to_string(), "fix the template or remove the override")),
        }
        checks.extend(model_checks(config).await);
        let paths = ctx.paths();
        checks.push(writable("storage", "cache", &paths.cache_dir));
        let data = writable("storage", "data", &paths.data_dir);
        let data_ok = data.status == Status::Ok;
        checks.push(data);
        if data_ok {
            checks.push(store_check(paths.data_dir.join(crate::store::DB_FILE_NAME), config.clone()).await);
        }
        checks.extend(sandbox_checks());
        checks.push(shadow_check(&paths.root, &paths.cache_dir));
    }
    print_report(&checks, args.json)?;
    let failed = checks.iter().any(|c| c.status == Status::Fail);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

async fn model_checks(config: &crate::config::Config) -> Vec<Check> {
    crate::llm::diagnose(config)
        .await
        .into_iter()
        .map(|m| Check {
            area: if m.subject == "backend" { "backend" } else { "model" },
            status: if m.ok { Status::Ok } else { Status::Fail },
            detail: if m.subject == "backend" { m.detail } else { format!("{}: {}", m.subject, m.detail) },
            fix: m.fix,
        })
        .collect()
}

fn trust_checks(report: &crate::config::TrustReport) -> Vec<Check> {
    let mut checks: Vec<Check> = report
        .ignored
        .iter()
        .map(|l| {
            Check::warn(
                "trust",
                format!("ignored: {l}"),
                "`tinycoder trust` to trust this workspace's settings, or set the key in your own config file",
            )
        })
        .collect();
    checks.extend(report.applied.iter().map(|l| Check::ok("trust", format!("applied (workspace trusted): {l}"))));
    if checks.is_empty() {
        checks.push(Check::ok("trust", "no workspace setting loosens a security key"));
    }
    checks
}

fn sandbox_checks() -> Vec<Check> {
    let knob = crate::sandbox::mechanisms::DISABLE_ENV;
    let mut checks: Vec<Check> = std::env::var(knob)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            Check::warn(
                "sandbox",
                format!("{knob}={v}: these mechanisms are switched off for diagnosis"),
                format!("unset {knob} for normal use"),
            )
        })
        .into_iter()
        .collect();
    checks.extend(crate::sandbox::probe_mechanisms().into_iter()
        .map(|m| {
            if m.enforced {
                Check::ok("sandbox", format!("{}: enforced ({})", m.name, m.detail))
            } else {
                Check::warn(
                    "sandbox",
                    format!("{}: not available ({})", m.name, m.detail),
                    "tests still run, with less isolation (the detail says what is not contained); see docs/troubleshooting in the README",
                )
            }
        }));
    checks
}

/// How this workspace's test runs see it: an overlay (nothing copied) or copies.
fn shadow_check(root: &Path, cache_dir: &Path) -> Check {
    let name = crate::sandbox::mechanisms::names::LAYERED_SHADOW;
    match crate::sandbox::layer_unavailable(root, cache_dir) {
        None => Check::ok("sandbox", format!("{name}: enforced (test runs see the workspace read-only beneath an overlay in the cache: nothing is copied, every change lands in the overlay)")),
        Some(why) => Check::warn(
            "sandbox",
            format!("{name}: not available ({why}): each test run copies the workspace's files into the cache first"),
            "runs are as contained, only slower to start on a large tree; keep the cache folder outside the workspace (TINYCODER_CACHE_DIR) for the overlay",
        ),
    }
}

fn writable(area: &'static str, what: &str, dir: &Path) -> Check {
    let probe = dir.join(".tinycoder-doctor-probe");
    let result = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&probe, b"ok"))
        .and_then(|_| std::fs::remove_file(&probe));
    match result {
        Ok(()) => Check::ok(area, format!("{what} directory {} is writable", dir.display())),
        Err(e) => Check::fail(
            area,
            format!("{what} directory {} is not writable: {e}", dir.display()),
            "free disk space or fix permissions, or point TINYCODER_CACHE_DIR / TINYCODER_DATA_DIR / store.dir elsewhere",
        ),
    }
}

/// Opens the workspace's store when it exists (creating none), as every command would.
async fn store_check(path: PathBuf, config: crate::config::Config) -> Check {
    if !path.exists() {
        return Check::ok("store", format!("{} does not exist yet (created on first use)", path.display()));
    }
    let settings = crate::store::StoreSettings::from_config(&config.store);
    let p = path.clone();
    match tokio::task::spawn_blocking(move || crate::store::Store::open(&p, settings)).await {
        Ok(Ok(_)) => Check::ok("store", format!("{} opens", path.display())),
        Ok(Err(e)) => {
            let fix = e.fix().unwrap_or("see the message").to_string();
            Check::fail("store", e.to_string(), fix)
        }
        Err(e) => Check::fail("store", format!("opening {} stopped: {e}", path.display()), "run it again"),
    }
}

fn print_report(checks: &[Check], json: bool) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = String::new();
    if json {
        out = serde_json::to_string_pretty(checks)?;
        out.push('\n');
    } else {
        for c in checks {
            let tag = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "WARN",
                Status::Fail => "FAIL",
            };
            out.push_str(&format!("{tag} {:<8} {}\n", c.area, c.detail));
            if let Some(fix) = &c.fix {
                out.push_str(&format!("     {:<8} fix: {fix}\n", ""));
            }
        }
        let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
        let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
        out.push_str(&format!("{} checks: {fails} failed, {warns} warnings\n", checks.len()));
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}
