//! Checkers: running the tool that reported a diagnostic (`cargo check`,
//! `ruff`, `pyright`, `mypy`) in a shadow, to see whether it still reports it.

use super::check_parse::{parse_check_output, CheckedDiagnostic};
use super::tests_run::{output_for_people, remove_shadow, set_build_env, shadow_with_overlays, tail};
use super::{run_sandboxed, BufferOverlay, RunEnd, RunSpec, SandboxError};
use crate::config::{CheckerConfig, Config};
use crate::paths::WorkspacePaths;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A configured checker and its name (`[checkers.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Checker {
    pub name: String,
    pub config: CheckerConfig,
}

impl Checker {
    /// The command as one line.
    pub fn display(&self) -> String {
        self.config.command.join(" ")
    }
}

/// Which checker reproduces a diagnostic, or why none can.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckerChoice {
    Use(Checker),
    /// No `[checkers.*]` names this source for this kind of file.
    NoChecker {
        source: String,
    },
    /// The checker exists but its program is not on the PATH the sandbox gets.
    NotInstalled {
        checker: String,
        program: String,
        install: String,
    },
}

impl CheckerChoice {
    /// Why no checker can run, in words; `None` when one can.
    pub fn why_not(&self) -> Option<String> {
        match self {
            Self::Use(_) => None,
            Self::NoChecker { source } => {
                Some(format!("no checker for source `{source}` (add one as [checkers.NAME] in the config)"))
            }
            Self::NotInstalled { checker, program, install } => {
                let fix = if install.is_empty() { String::new() } else { format!("; {install}") };
                Some(format!("the {checker} checker needs `{program}`, which is not on PATH{fix}"))
            }
        }
    }

    /// Why a patch is not re-checked, for the proposal; `None` when it is.
    pub fn not_rechecked(&self) -> Option<String> {
        self.why_not().map(|why| format!("not re-checked: {why}"))
    }
}

/// The checker for a diagnostic of `source` in the file `path` of the project at `root`.
pub fn checker_for(config: &Config, source: &str, path: &str, root: &Path) -> CheckerChoice {
    let found = config
        .checkers
        .iter()
        .find(|(_, c)| c.reproduces(source) && c.checks_file(path) && c.applies_to(root))
        .map(|(name, c)| Checker { name: name.clone(), config: c.clone() });
    match found {
        None => CheckerChoice::NoChecker { source: source.to_string() },
        Some(c) => installed(config, c),
    }
}

/// The checkers `tinycoder fix --check` runs in the project at `root` (those
/// with `on_check`, whose project files exist and whose kind of file the
/// project has), each with whether it can run.
pub fn checkers_for_project(config: &Config, root: &Path, files: &[PathBuf]) -> Vec<CheckerChoice> {
    config
        .checkers
        .iter()
        .filter(|(_, c)| c.on_check && c.applies_to(root))
        .filter(|(_, c)| files.iter().any(|f| c.checks_file(&f.to_string_lossy())))
        .map(|(name, c)| installed(config, Checker { name: name.clone(), config: c.clone() }))
        .collect()
}

fn installed(config: &Config, c: Checker) -> CheckerChoice {
    let program = c.config.command[0].clone();
    let path = super::allowlisted_env(&config.sandbox.env_allowlist)
        .into_iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v)
        .unwrap_or_default();
    if find_program(&program, &path).is_some() {
        CheckerChoice::Use(c)
    } else {
        CheckerChoice::NotInstalled { checker: c.name, program, install: c.config.install }
    }
}

/// Where `program` is on `path` (a name with a `/` is taken as it is).
pub fn find_program(program: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return runnable(Path::new(program)).then(|| PathBuf::from(program));
    }
    path.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(program)).find(|p| runnable(p))
}

/// What one checker run reported.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The checker's name.
    pub checker: String,
    /// The command that ran.
    pub command: String,
    pub diagnostics: Vec<CheckedDiagnostic>,
    /// The end of its output, for people and the coder.
    pub output_tail: String,
    pub duration: Duration,
}

impl CheckReport {
    /// The errors it reported.
    pub fn errors(&self) -> impl Iterator<Item = &CheckedDiagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

/// Runs `checker` in a fresh shadow of the workspace with `overlays`, under the
/// sandbox and its limits; a run that ends without a diagnostic it can read
/// (a crash, a missing dependency, the timeout) is an error, never "clean".
pub async fn run_checker(
    config: &Config,
    paths: &WorkspacePaths,
    overlays: &[BufferOverlay],
    checker: &Checker,
    cancel: &CancellationToken,
) -> Result<CheckReport, SandboxError> {
    let shadow = shadow_with_overlays(paths, "check", overlays).await?;
    let sc = &config.sandbox;
    let (program, args) = (&checker.config.command[0], &checker.config.command[1..]);
    let report = async {
        let mut spec = RunSpec::in_shadow(sc, program, args, &shadow, Duration::from_secs(sc.wall_timeout_s))?;
        set_build_env(&mut spec, paths)?;
        let out = run_sandboxed(&spec, cancel).await?;
        let diagnostics = parse_check_output(checker.config.format, &out.stdout.text, shadow.path());
        let combined = format!("{}\n{}", out.stdout.text, out.stderr.text);
        let failed = |reason: String| SandboxError::CheckerFailed {
            checker: checker.name.clone(),
            command: checker.display(),
            reason,
            output: tail(out.stderr.text.trim(), 2000),
        };
        match out.end {
            RunEnd::TimedOut => {
                return Err(failed(format!("killed after {} s (sandbox.wall_timeout_s)", sc.wall_timeout_s)))
            }
            RunEnd::Cancelled => return Err(failed("cancelled".into())),
            RunEnd::Signaled(s) => return Err(failed(format!("killed by signal {s}"))),
            RunEnd::Exited(c) if c != 0 && !diagnostics.iter().any(|d| d.is_error()) => {
                return Err(failed(format!("exited with code {c} and reported no error it could be read for")))
            }
            RunEnd::Exited(_) => {}
        }
        Ok(CheckReport {
            checker: checker.name.clone(),
            command: checker.display(),
            diagnostics,
            output_tail: output_for_people(&combined, &shadow, sc.output_tail_bytes as usize),
            duration: out.duration,
        })
    }
    .await;
    remove_shadow(shadow).await;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checker_is_chosen_by_source_file_kind_and_project() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::LoadedConfig::load(&Default::default()).unwrap().config;
        match checker_for(&config, "rustc", "src/lib.rs", dir.path()) {
            CheckerChoice::NoChecker { source } => assert_eq!(source, "rustc"),
            other => panic!("no Cargo.toml: no cargo checker, got {other:?}"),
        }
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        match checker_for(&config, "rustc", "src/lib.rs", dir.path()) {
            CheckerChoice::Use(c) => assert_eq!(c.name, "cargo"),
            other => panic!("{other:?}"),
        }
        let none = checker_for(&config, "made-up-lint", "src/lib.rs", dir.path());
        assert!(none.not_rechecked().unwrap().contains("no checker for source `made-up-lint`"), "{none:?}");
        let mut config = config;
        config.checkers.get_mut("cargo").unwrap().command[0] = "no-such-cargo-program".into();
        let missing = checker_for(&config, "rustc", "src/lib.rs", dir.path());
        let why = missing.not_rechecked().unwrap();
        assert!(why.contains("`no-such-cargo-program`") && why.contains("rustup"), "{why}");
    }
}
