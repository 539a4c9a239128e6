//! The sandbox escape suite: real processes try to get out; each attempt
//! must be contained, and the real workspace must be byte-identical afterwards.

#[path = "sandbox_common.rs"]
mod common;

use std::path::Path;
use std::time::{Duration, Instant};
use tinycoder::sandbox::{mechanisms, run_sandboxed, RunEnd, RunOutput, RunSpec, ShadowWorkspace};
use tokio_util::sync::CancellationToken;

struct Fixture {
    workspace: tempfile::TempDir,
    cache: tempfile::TempDir,
}

fn fixture() -> Fixture {
    common::hermetic_dirs();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join("src")).unwrap();
    std::fs::write(workspace.path().join("src/lib.rs"), "pub fn f() -> i32 { 1 }\n").unwrap();
    std::fs::write(workspace.path().join("README.md"), "hello\n").unwrap();
    Fixture { workspace, cache: tempfile::tempdir().unwrap() }
}

/// Runs `script` with `sh -c` in a shadow of the fixture with a short timeout,
/// and checks the workspace is byte-identical afterwards.
async fn run_in_shadow(fx: &Fixture, script: &str, timeout_s: u64) -> RunOutput {
    let before = common::tree_hashes(fx.workspace.path());
    let shadow = ShadowWorkspace::create(fx.workspace.path(), fx.cache.path(), "escape").unwrap();
    let mut config = common::default_config().sandbox;
    config.kill_grace_ms = 300;
    config.max_processes = 64;
    config.output_cap_kb = 64;
    let spec =
        RunSpec::in_shadow(&config, "sh", &["-c".into(), script.into()], &shadow, Duration::from_secs(timeout_s))
            .unwrap();
    let out = run_sandboxed(&spec, &CancellationToken::new()).await.unwrap();
    drop(shadow);
    assert_eq!(before, common::tree_hashes(fx.workspace.path()), "the real workspace changed");
    out
}

fn require(mechanism: &str) {
    let m = tinycoder::sandbox::probe_mechanisms().into_iter().find(|m| m.name == mechanism).unwrap();
    assert!(m.enforced, "mechanism {mechanism} is not enforced on this machine: {}", m.detail);
}

#[tokio::test]
async fn network_connect_is_refused() {
    require(mechanisms::names::NETWORK);
    let fx = fixture();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=1); print('CONNECTED')\""
    );
    let out = run_in_shadow(&fx, &script, 5).await;
    assert!(!out.stdout.text.contains("CONNECTED"), "connected: {out:?}");
    assert_ne!(out.end, RunEnd::Exited(0));
    assert!(listener.accept().is_err(), "the listener saw a connection");
    // Control: the same script outside the sandbox does connect (the test can fail).
    let plain = std::process::Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(String::from_utf8_lossy(&plain.stdout).contains("CONNECTED"));
}

#[tokio::test]
async fn writes_outside_the_shadow_are_refused() {
    require(mechanisms::names::LANDLOCK);
    let fx = fixture();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("pwned.txt");
    let ws_file = fx.workspace.path().join("src/lib.rs");
    let script = format!(
        "echo pwned > {t}; touch {t}2; echo pwned >> src/lib.rs; echo pwned > {w}; true > README.md; echo done",
        t = target.display(),
        w = ws_file.display()
    );
    let out = run_in_shadow(&fx, &script, 5).await;
    assert!(out.stdout.text.contains("done"), "{out:?}");
    assert!(!target.exists() && !outside.path().join("pwned.txt2").exists(), "wrote outside the shadow");
    // Refused by Landlock, or not even there in the mount namespace.
    let refused = ["Permission denied", "Read-only file system", "No such file or directory"];
    assert!(refused.iter().any(|r| out.stderr.text.contains(r)), "{}", out.stderr.text);
}

#[tokio::test]
async fn fork_bomb_is_contained() {
    require(mechanisms::names::PROCESS_LIMIT);
    let fx = fixture();
    // A classic bomb; pids.max (64 here) stops it, the timeout kills what is left.
    let started = Instant::now();
    let out = run_in_shadow(&fx, "bomb() { bomb | bomb & }; bomb; sleep 30", 2).await;
    // Either the shell gave up when fork failed, or the timeout killed it.
    assert!(matches!(out.end, RunEnd::TimedOut | RunEnd::Exited(1..)), "{:?}", out.end);
    // Proof that the process limit (not luck) stopped it: fork failed inside.
    let err = out.stderr.text.to_lowercase();
    assert!(err.contains("fork") || err.contains("resource temporarily unavailable"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The machine can still start processes (the bomb did not eat the pid space).
    assert!(std::process::Command::new("true").status().unwrap().success());
}

#[tokio::test]
async fn infinite_output_is_capped() {
    let fx = fixture();
    let out = run_in_shadow(&fx, "yes tinycoder", 2).await;
    assert_eq!(out.end, RunEnd::TimedOut);
    assert_eq!(out.stdout.text.len(), 64 * 1024);
    assert!(out.stdout.truncated && out.stdout.total_bytes > 64 * 1024);
}

#[tokio::test]
async fn sleep_is_killed_at_the_timeout() {
    let fx = fixture();
    let started = Instant::now();
    let out = run_in_shadow(&fx, "sleep 1000", 1).await;
    assert_eq!(out.end, RunEnd::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_process_ignoring_sigterm_is_killed() {
    let fx = fixture();
    // A unique argument marks this run's shell so the test can look for it afterwards.
    let tag = format!("tinycoder-sigterm-{}", std::process::id());
    let script = format!("trap '' TERM; while true; do sleep 0.1; done # {tag}");
    let started = Instant::now();
    let out = run_in_shadow(&fx, &script, 1).await;
    assert_eq!(out.end, RunEnd::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(300));
    assert!(pids_with(&tag).is_empty(), "the shell that ignored SIGTERM is still running");
}

/// Pids of processes whose command line contains `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).replace('\0', " ").contains(needle) {
                out.push(pid);
            }
        }
    }
    out
}

#[tokio::test]
async fn a_detached_child_dies_with_the_run() {
    let fx = fixture();
    // A unique sleep length marks the escapee so we can look for it afterwards.
    let tag = format!("{}.{}", 4000 + (std::process::id() % 1000), 7);
    let script = format!("setsid nohup sleep {tag} > /dev/null 2>&1 & echo started; sleep 1000");
    let out = run_in_shadow(&fx, &script, 1).await;
    assert_eq!(out.end, RunEnd::TimedOut);
    assert!(out.stdout.text.contains("started"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(pids_with(&format!("sleep {tag}")).is_empty(), "the detached child survived");
    // Also when the main process exits normally, nothing it left behind survives.
    let script = format!("setsid nohup sleep {tag} > /dev/null 2>&1 & echo started");
    let out = run_in_shadow(&fx, &script, 5).await;
    assert_eq!(out.end, RunEnd::Exited(0));
    std::thread::sleep(Duration::from_millis(300));
    assert!(pids_with(&format!("sleep {tag}")).is_empty(), "the detached child survived a normal exit");
}

#[tokio::test]
async fn cancellation_kills_the_group() {
    let fx = fixture();
    let shadow = ShadowWorkspace::create(fx.workspace.path(), fx.cache.path(), "cancel").unwrap();
    let config = common::default_config().sandbox;
    let spec = RunSpec::in_shadow(&config, "sleep", &["1000".into()], &shadow, Duration::from_secs(60)).unwrap();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let out = run_sandboxed(&spec, &cancel).await.unwrap();
    assert_eq!(out.end, RunEnd::Cancelled);
    std::thread::sleep(Duration::from_millis(300));
    assert!(pids_with("sleep 1000").iter().all(|p| !is_descendant_of_us(*p)), "the cancelled sleep is still running");
}

/// True when `pid`'s parent chain reaches this test process.
fn is_descendant_of_us(pid: i32) -> bool {
    let me = std::process::id() as i32;
    let mut cur = pid;
    for _ in 0..64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{cur}/stat")) else { return false };
        let Some(ppid) = stat.rsplit(')').next().and_then(|r| r.split_whitespace().nth(1)).and_then(|p| p.parse().ok())
        else {
            return false;
        };
        if ppid == me {
            return true;
        }
        if ppid <= 1 {
            return false;
        }
        cur = ppid;
    }
    false
}

#[test]
fn workspace_path_helper_sees_changes() {
    // Guards the suite's own check: the hash comparison does notice a change.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a"), "1").unwrap();
    let before = common::tree_hashes(d.path());
    std::fs::write(d.path().join("a"), "2").unwrap();
    assert_ne!(before, common::tree_hashes(Path::new(d.path())));
}
