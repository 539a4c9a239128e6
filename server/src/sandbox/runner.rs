//! Runs one process under the sandbox: own process group, namespaces,
//! Landlock, rlimits, pids cgroup, wall timeout and capped output.

use super::mechanisms::{self, names, MechanismStatus, NamespacePlan, RunCgroup};
use super::{RunSpec, SandboxError};
use serde::Serialize;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// How a sandboxed run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum RunEnd {
    /// Exited with this code.
    Exited(i32),
    /// Killed by this signal (not by us).
    Signaled(i32),
    /// Killed at the wall timeout.
    TimedOut,
    /// Killed because the caller cancelled.
    Cancelled,
}

/// Captured output of one stream, capped.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CappedOutput {
    /// The first `cap` bytes, lossily decoded.
    pub text: String,
    /// Total bytes the process wrote.
    pub total_bytes: u64,
    /// True when bytes past the cap were dropped.
    pub truncated: bool,
}

/// The result of a sandboxed run.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutput {
    /// How it ended.
    pub end: RunEnd,
    /// Standard output.
    pub stdout: CappedOutput,
    /// Standard error.
    pub stderr: CappedOutput,
    /// Wall time.
    pub duration: Duration,
    /// The mechanisms applied to this run.
    pub mechanisms: Vec<MechanismStatus>,
}

impl RunOutput {
    /// True when the process exited with code 0.
    pub fn success(&self) -> bool {
        self.end == RunEnd::Exited(0)
    }
}

/// Runs `spec` in the sandbox; kills the whole group at the timeout or on `cancel`.
pub async fn run_sandboxed(spec: &RunSpec, cancel: &CancellationToken) -> Result<RunOutput, SandboxError> {
    let caps = mechanisms::capabilities();
    let mut applied = mechanisms::probe_mechanisms();
    if spec.require_network_isolation && !caps.network_ns {
        return Err(SandboxError::MechanismRequired {
            mechanism: names::NETWORK.into(),
            key: "sandbox.require_network_isolation",
        });
    }
    if spec.require_write_isolation && !caps.landlock {
        return Err(SandboxError::MechanismRequired {
            mechanism: names::LANDLOCK.into(),
            key: "sandbox.require_write_isolation",
        });
    }
    for m in applied.iter().filter(|m| !m.enforced) {
        tracing::warn!(mechanism = %m.name, "sandbox mechanism not enforced: {}", m.detail);
    }

    let cgroup = match &caps.pids_cgroup {
        Some(base) => match RunCgroup::create(base, spec.limits.max_processes) {
            Ok(cg) => Some(cg),
            Err(e) => {
                tracing::warn!("cannot create a pids cgroup: {e}");
                mark(&mut applied, names::PROCESS_LIMIT, false, format!("cgroup creation failed: {e}"));
                None
            }
        },
        None => None,
    };
    let ruleset = if caps.landlock {
        match mechanisms::landlock_ruleset(&spec.writable) {
            Ok(rs) => rs,
            Err(e) => {
                mark(&mut applied, names::LANDLOCK, false, format!("ruleset creation failed: {e}"));
                None
            }
        }
    } else {
        None
    };

    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);

    let ns = NamespacePlan::new(caps.is_root);
    let (use_net, use_pid) = (caps.network_ns, caps.pid_ns);
    let limits = spec.limits;
    let cgroup_fd = cgroup.as_ref().map(RunCgroup::procs_fd);
    let nproc_rlimit = cgroup.is_none();
    let mut ruleset = ruleset;
    // SAFETY: the closure runs in the forked child before exec; it only makes
    // syscalls on data prepared in the parent (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = cgroup_fd {
                RunCgroup::join_self(fd)?;
            }
            mechanisms::set_rlimits(&limits, nproc_rlimit)?;
            if use_pid {
                mechanisms::fork_into_pid_namespace(&ns, use_net)?;
            } else if use_net {
                ns.enter(libc::CLONE_NEWNET)?;
            }
            if let Some(rs) = ruleset.take() {
                mechanisms::restrict_landlock(rs)?;
            }
            Ok(())
        });
    }

    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| SandboxError::Spawn { program: spec.program.clone(), source: e })?;
    let pgid = child.id().map(|p| p as i32);
    let out_reader = tokio::spawn(read_capped(child.stdout.take(), spec.output_cap));
    let err_reader = tokio::spawn(read_capped(child.stderr.take(), spec.output_cap));

    let end = tokio::select! {
        status = child.wait() => status_end(status.map_err(SandboxError::Wait)?),
        _ = tokio::time::sleep(spec.timeout) => RunEnd::TimedOut,
        _ = cancel.cancelled() => RunEnd::Cancelled,
    };
    if matches!(end, RunEnd::TimedOut | RunEnd::Cancelled) {
        terminate_group(pgid, &mut child, spec.kill_grace).await;
    } else if let (false, Some(pg)) = (caps.pid_ns, pgid) {
        // Without a PID namespace (which already killed them with PID 1),
        // leftovers in the group (background jobs) must not outlive the run.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pg), nix::sys::signal::Signal::SIGKILL);
    }
    if let Some(cg) = &cgroup {
        cg.kill_all();
    }
    let drain = spec.kill_grace.max(Duration::from_millis(200));
    let stdout = finish_reader(out_reader, drain).await;
    let stderr = finish_reader(err_reader, drain).await;
    drop(cgroup);
    Ok(RunOutput { end, stdout, stderr, duration: started.elapsed(), mechanisms: applied })
}

fn mark(list: &mut [MechanismStatus], name: &str, enforced: bool, detail: String) {
    if let Some(m) = list.iter_mut().find(|m| m.name == name) {
        m.enforced = enforced;
        m.detail = detail;
    }
}

fn status_end(status: std::process::ExitStatus) -> RunEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => RunEnd::Exited(c),
        (None, Some(s)) => RunEnd::Signaled(s),
        _ => RunEnd::Exited(-1),
    }
}

async fn terminate_group(pgid: Option<i32>, child: &mut tokio::process::Child, grace: Duration) {
    use nix::sys::signal::{killpg, Signal};
    let Some(pg) = pgid else { return };
    let pg = nix::unistd::Pid::from_raw(pg);
    let _ = killpg(pg, Signal::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        let _ = killpg(pg, Signal::SIGKILL);
    }
    let _ = killpg(pg, Signal::SIGKILL);
    let _ = child.kill().await;
}

async fn finish_reader(handle: tokio::task::JoinHandle<CappedOutput>, drain: Duration) -> CappedOutput {
    match tokio::time::timeout(drain, handle).await {
        Ok(Ok(out)) => out,
        Ok(Err(_)) => CappedOutput::default(),
        Err(_) => CappedOutput {
            text: String::from("<output still open after the run ended; dropped>"),
            ..Default::default()
        },
    }
}

/// Reads a stream to its end, keeping `cap` bytes and discarding the rest so
/// the writer never blocks on a full pipe.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(stream: Option<R>, cap: usize) -> CappedOutput {
    let Some(mut stream) = stream else {
        return CappedOutput::default();
    };
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                if kept.len() < cap {
                    let take = n.min(cap - kept.len());
                    kept.extend_from_slice(&buf[..take]);
                }
            }
        }
    }
    CappedOutput {
        text: String::from_utf8_lossy(&kept).into_owned(),
        total_bytes: total,
        truncated: total > kept.len() as u64,
    }
}
