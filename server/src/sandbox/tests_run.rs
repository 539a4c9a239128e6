//! Running a project's tests in a shadow and turning the output into a report.

use super::test_parse::{parse_failures, TestFailure};
use super::{detect_test_command, run_sandboxed, MechanismStatus, RunEnd, RunSpec, SandboxError, ShadowWorkspace};
use crate::config::Config;
use crate::paths::WorkspacePaths;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// An unsaved editor buffer to overlay on the shadow.
#[derive(Debug, Clone)]
pub struct BufferOverlay {
    /// Workspace-relative path.
    pub rel_path: PathBuf,
    /// The buffer's text.
    pub text: String,
}

/// The outcome of a test run.
#[derive(Debug, Clone, Serialize)]
pub struct TestReport {
    /// The command that ran.
    pub command: String,
    /// Why that command (project files found, or the configured one).
    pub why: String,
    /// True when the command exited 0 (and was not killed).
    pub passed: bool,
    /// How the run ended.
    pub end: RunEnd,
    /// Parsed failures, workspace-relative.
    pub failures: Vec<TestFailure>,
    /// Wall time.
    pub duration: Duration,
    /// The last part of the output (stdout then stderr), for display.
    pub output_tail: String,
    /// The isolation mechanisms and whether each was enforced.
    pub mechanisms: Vec<MechanismStatus>,
}

/// Runs the workspace's tests in a fresh shadow (with `overlays`), then removes the shadow.
/// Cancelling `cancel` kills the test process group.
pub async fn run_project_tests(
    config: &Config,
    paths: &WorkspacePaths,
    overlays: &[BufferOverlay],
    cancel: &CancellationToken,
) -> Result<TestReport, SandboxError> {
    let mut shadow = shadow_with_overlays(paths, "tests", overlays).await?;
    let report = run_tests_in_shadow(config, paths, &mut shadow, cancel).await;
    remove_shadow(shadow).await;
    report
}

/// A fresh shadow of the workspace (named `PREFIX-<uuid>`) with `overlays` written
/// into it; stale shadows of dead owners are removed first.
pub async fn shadow_with_overlays(
    paths: &WorkspacePaths,
    prefix: &str,
    overlays: &[BufferOverlay],
) -> Result<ShadowWorkspace, SandboxError> {
    super::cleanup_stale_shadows(&paths.cache_dir);
    let task = format!("{prefix}-{}", uuid::Uuid::new_v4());
    let root = paths.root.clone();
    let cache = paths.cache_dir.clone();
    let overlays = overlays.to_vec();
    tokio::task::spawn_blocking(move || -> Result<ShadowWorkspace, SandboxError> {
        let mut shadow = ShadowWorkspace::create_for_run(&root, &cache, &task)?;
        for o in &overlays {
            shadow.overlay(&o.rel_path, &o.text)?;
        }
        Ok(shadow)
    })
    .await
    .map_err(|e| SandboxError::Walk(format!("shadow creation task failed: {e}")))?
}

/// Removes `shadow` off the async threads (a large tree takes a while to delete).
pub async fn remove_shadow(shadow: ShadowWorkspace) {
    tokio::task::spawn_blocking(move || drop(shadow)).await.ok();
}

/// Runs the detected (or configured) test command in `shadow`.
///
/// The shadow holds copies of the workspace files, so the run may write them
/// in place (cargo rewrites `Cargo.lock`); the workspace never changes.
pub async fn run_tests_in_shadow(
    config: &Config,
    paths: &WorkspacePaths,
    shadow: &mut ShadowWorkspace,
    cancel: &CancellationToken,
) -> Result<TestReport, SandboxError> {
    let sc = &config.sandbox;
    let cmd = detect_test_command(shadow.project_dir(), &sc.test_command)?;
    let mut spec = RunSpec::in_shadow(sc, &cmd.program, &cmd.args, shadow, Duration::from_secs(sc.wall_timeout_s))?;
    set_build_env(&mut spec, paths)?;
    super::test_timeout::arm(&mut spec, sc, shadow)?;
    let cargo_limit = (sc.test_timeout_s > 0 && super::cargo_hang::applies(&cmd.program, &cmd.args))
        .then(|| Duration::from_secs(sc.test_timeout_s).max(super::cargo_hang::LIBTEST_NAMES_AFTER));
    let (out, shown, hung) = match cargo_limit {
        Some(limit) => {
            let run = super::cargo_hang::run(&spec, limit, cancel).await?;
            (run.last, run.combined, run.hung)
        }
        None => {
            let out = run_sandboxed(&spec, cancel).await?;
            let shown = format!("{}\n{}", out.stdout.text, out.stderr.text);
            (out, shown, Vec::new())
        }
    };
    // Failures come from the last run alone: a stopped run's tests ran again after it.
    let combined = format!("{}\n{}", out.stdout.text, out.stderr.text);
    let mut failures = parse_failures(cmd.framework, &combined, shadow.path());
    super::test_timeout::name_hung_test(&mut failures, &combined, sc);
    for name in &hung {
        failures.push(TestFailure {
            file: String::new(),
            line: 0,
            test: name.clone(),
            message: format!(
                "timed out: ran past {} s (sandbox.test_timeout_s), so it was stopped and the other tests ran without it",
                cargo_limit.unwrap_or_default().as_secs()
            ),
        });
    }
    if !out.success() && failures.is_empty() {
        let why = match out.end {
            RunEnd::TimedOut => {
                format!("killed after the {} s wall timeout (sandbox.wall_timeout_s)", sc.wall_timeout_s)
            }
            RunEnd::Cancelled => "cancelled".to_string(),
            RunEnd::Signaled(s) => format!("killed by signal {s}"),
            RunEnd::Exited(c) => {
                format!("exited with code {c}; no failure could be parsed from the output")
            }
        };
        failures.push(TestFailure { file: String::new(), line: 0, test: cmd.display(), message: why });
    }
    Ok(TestReport {
        command: cmd.display(),
        why: cmd.why.clone(),
        passed: out.success() && hung.is_empty(),
        end: out.end,
        failures,
        duration: out.duration,
        output_tail: output_for_people(&shown, shadow, sc.output_tail_bytes as usize),
        mechanisms: out.mechanisms,
    })
}

/// The environment every run in a shadow gets: the workspace's shared cargo
/// target dir (so a shadow does not rebuild every dependency), offline cargo,
/// no colour, no bytecode files.
pub(super) fn set_build_env(spec: &mut RunSpec, paths: &WorkspacePaths) -> Result<(), SandboxError> {
    let target = paths.cache_dir.join("cargo-target");
    std::fs::create_dir_all(&target).map_err(|e| SandboxError::io("create the shared cargo target dir", &target, e))?;
    spec.set_env("CARGO_TARGET_DIR", &target.to_string_lossy());
    spec.set_env("CARGO_TERM_COLOR", "never");
    spec.set_env("CARGO_NET_OFFLINE", "true");
    spec.set_env("PYTHONDONTWRITEBYTECODE", "1");
    spec.set_env("NO_COLOR", "1");
    spec.writable.dirs.push(target);
    Ok(())
}

/// The end (`max` bytes) of a run's output with the shadow's paths made the
/// workspace's: the shadow's path means nothing to the user or the model.
pub(super) fn output_for_people(output: &str, shadow: &ShadowWorkspace, max: usize) -> String {
    tail(&output.replace(&format!("{}/", shadow.path().display()), ""), max)
}

/// The last `max` bytes of `s` (at a character boundary).
pub(super) fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}
