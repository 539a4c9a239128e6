//! A time limit for each Rust test. libtest names a test once it has run for a
//! minute ("test X has been running for over 60 seconds"); when such a test
//! passes `sandbox.test_timeout_s`, the run is stopped, the test is reported
//! as timed out, and the run starts again without it (`--skip X --exact`). One
//! test that loops forever then costs its limit instead of
//! `sandbox.wall_timeout_s`, and the tests after it still report.

use super::{run_sandboxed, RunEnd, RunOutput, RunSpec, SandboxError};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// libtest's fixed warning time: the first moment a running test is named, so
/// the shortest limit a Rust test can have.
pub const LIBTEST_NAMES_AFTER: Duration = Duration::from_secs(60);

/// What a cargo test run with per-test limits did, over all its restarts.
#[derive(Debug)]
pub struct CargoRun {
    /// The last run's output; its duration is the whole run's.
    pub last: RunOutput,
    /// Every run's stdout and stderr, with a line where each was stopped.
    pub combined: String,
    /// The tests stopped for running past the limit, in order.
    pub hung: Vec<String>,
}

/// Whether `args` (a cargo command's) runs tests and can take `--skip` for libtest.
pub fn applies(program: &str, args: &[String]) -> bool {
    let program = program.rsplit('/').next().unwrap_or(program);
    program == "cargo" && args.first().is_some_and(|a| a == "test")
}

/// Runs `spec` (a `cargo test`), stopping a test that runs past `limit` and
/// running again without it, until no test hangs or `spec.timeout` (for all
/// runs together) is spent.
pub async fn run(spec: &RunSpec, limit: Duration, cancel: &CancellationToken) -> Result<CargoRun, SandboxError> {
    let started = Instant::now();
    let mut hung: Vec<String> = Vec::new();
    let mut combined = String::new();
    loop {
        let mut this = spec.clone();
        this.args = with_skips(&spec.args, &hung);
        this.timeout = spec.timeout.saturating_sub(started.elapsed());
        let (tx, rx) = unbounded_channel();
        this.stdout_lines = Some(tx);
        let stop = cancel.child_token();
        let watcher = tokio::spawn(watch(rx, limit, LIBTEST_NAMES_AFTER, stop.clone()));
        let out = run_sandboxed(&this, &stop).await;
        drop(this);
        // The readers are done and every sender is gone, so the watcher ends; a
        // reader held open by a leftover process must not hold the run.
        let stopped = match tokio::time::timeout(Duration::from_secs(1), watcher).await {
            Ok(Ok(name)) => name,
            _ => None,
        };
        let mut out = out?;
        combined.push_str(&out.stdout.text);
        combined.push('\n');
        combined.push_str(&out.stderr.text);
        match stopped {
            Some(name) if out.end == RunEnd::Cancelled && !cancel.is_cancelled() => {
                combined.push_str(&format!(
                    "\ntinycoder: test {name} ran past {} s (sandbox.test_timeout_s) and was stopped; the tests run again without it\n",
                    limit.as_secs()
                ));
                hung.push(name);
                if started.elapsed() >= spec.timeout {
                    out.end = RunEnd::TimedOut;
                    out.duration = started.elapsed();
                    return Ok(CargoRun { last: out, combined, hung });
                }
            }
            _ => {
                out.duration = started.elapsed();
                return Ok(CargoRun { last: out, combined, hung });
            }
        }
    }
}

/// `args` with libtest told to skip exactly the `hung` tests.
fn with_skips(args: &[String], hung: &[String]) -> Vec<String> {
    let mut out = args.to_vec();
    if hung.is_empty() {
        return out;
    }
    if !out.iter().any(|a| a == "--") {
        out.push("--".into());
    }
    for name in hung {
        out.push("--skip".into());
        out.push(name.clone());
    }
    out.push("--exact".into());
    out
}

/// Watches a run's stdout lines and cancels `stop` once a test libtest named
/// as long-running (`named_after` into its run) is still running `limit` after
/// it started; returns its name.
async fn watch(
    mut lines: UnboundedReceiver<String>,
    limit: Duration,
    named_after: Duration,
    stop: CancellationToken,
) -> Option<String> {
    let after_named = limit.saturating_sub(named_after);
    let mut running: HashMap<String, Instant> = HashMap::new();
    loop {
        let first = running.iter().min_by_key(|(_, at)| **at).map(|(n, at)| (n.clone(), *at));
        let deadline = first.as_ref().map(|(_, at)| *at);
        tokio::select! {
            line = lines.recv() => {
                let line = line?;
                if let Some(name) = named_as_long_running(&line) {
                    running.entry(name.to_string()).or_insert_with(|| Instant::now() + after_named);
                } else if let Some(name) = finished(&line) {
                    running.remove(name);
                }
            }
            _ = sleep_until(deadline), if deadline.is_some() => {
                stop.cancel();
                return first.map(|(n, _)| n);
            }
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// `test NAME has been running for over 60 seconds` -> NAME.
fn named_as_long_running(line: &str) -> Option<&str> {
    let rest = line.trim_end().strip_prefix("test ")?;
    let (name, tail) = rest.rsplit_once(" has been running for over ")?;
    tail.ends_with(" seconds").then_some(name)
}

/// `test NAME ... ok` (or FAILED, ignored) -> NAME.
fn finished(line: &str) -> Option<&str> {
    let rest = line.trim_end().strip_prefix("test ")?;
    let (name, _) = rest.rsplit_once(" ... ")?;
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines_name_long_running_and_finished_tests() {
        let warn = "test tests::spins has been running for over 60 seconds";
        assert_eq!(named_as_long_running(warn), Some("tests::spins"));
        let doc = "test src/lib.rs - total (line 3) has been running for over 60 seconds";
        assert_eq!(named_as_long_running(doc), Some("src/lib.rs - total (line 3)"));
        assert_eq!(finished("test tests::spins ... FAILED"), Some("tests::spins"));
        assert_eq!(finished("test tests::adds ... ok"), Some("tests::adds"));
        assert_eq!(named_as_long_running("test result: ok. 1 passed"), None);
        assert_eq!(finished(warn), None);
    }

    #[test]
    fn a_rerun_skips_exactly_the_hung_tests() {
        let args: Vec<String> = ["test", "--no-fail-fast"].map(String::from).to_vec();
        assert_eq!(with_skips(&args, &[]), args);
        let hung = ["a::b".to_string(), "c".to_string()];
        assert_eq!(with_skips(&args, &hung).join(" "), "test --no-fail-fast -- --skip a::b --skip c --exact");
        let with_dashes: Vec<String> = ["test", "--", "--nocapture"].map(String::from).to_vec();
        assert_eq!(with_skips(&with_dashes, &hung[..1]).join(" "), "test -- --nocapture --skip a::b --exact");
        assert!(applies("/usr/bin/cargo", &args) && !applies("cargo", &["check".into()]) && !applies("make", &args));
    }

    // Time scaled down: named after 0 ms, limit 300 ms.
    const LIMIT: Duration = Duration::from_millis(300);

    #[tokio::test]
    async fn a_test_named_and_still_running_at_its_limit_stops_the_run() {
        let (tx, rx) = unbounded_channel();
        let stop = CancellationToken::new();
        let started = std::time::Instant::now();
        let watcher = tokio::spawn(watch(rx, LIMIT, Duration::ZERO, stop.clone()));
        tx.send("test fast ... ok".into()).unwrap();
        tx.send("test slow has been running for over 60 seconds".into()).unwrap();
        tx.send("test spin has been running for over 60 seconds".into()).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        tx.send("test slow ... ok".into()).unwrap();
        assert_eq!(watcher.await.unwrap().as_deref(), Some("spin"));
        assert!(stop.is_cancelled());
        assert!(started.elapsed() >= LIMIT, "stopped at the limit, not before");
        drop(tx);
    }

    #[tokio::test]
    async fn a_run_that_ends_stops_nothing() {
        let (tx, rx) = unbounded_channel();
        let stop = CancellationToken::new();
        let watcher = tokio::spawn(watch(rx, LIMIT, Duration::ZERO, stop.clone()));
        tx.send("test spin has been running for over 60 seconds".into()).unwrap();
        tx.send("test spin ... FAILED".into()).unwrap();
        drop(tx);
        assert_eq!(watcher.await.unwrap(), None);
        assert!(!stop.is_cancelled());
    }
}
