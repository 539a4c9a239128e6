//! Runs one process under the sandbox: own session, namespaces (user, PID,
//! network, IPC, mount), no capabilities, Landlock, seccomp, rlimits, pids
//! cgroup, wall timeout and capped output.

use super::landlock_raw::LandlockPlan;
use super::mechanisms::{self, names, ChildPlan, MechanismStatus, RunCgroup, UserMap};
use super::mount_plan::{MountPlan, TmpfsSize, WRITABLE_DEVICES};
use super::{RunSpec, SandboxError};
use serde::Serialize;
use std::path::PathBuf;
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
    if spec.require_write_isolation && caps.landlock_abi == 0 && !caps.mount_ns {
        return Err(SandboxError::MechanismRequired {
            mechanism: format!("{} or {}", names::LANDLOCK, names::MOUNT_NAMESPACE),
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
    let plan = child_plan(spec, caps, cgroup.as_ref(), &mut applied);
    if let Some(layer) = &spec.writable.layer {
        if plan.mounts.is_none() {
            // The tree of a layered shadow is an empty mount point outside the run's namespace.
            return Err(SandboxError::LayerNeedsMountNamespace);
        }
        applied.push(MechanismStatus::new(
            names::LAYERED_SHADOW,
            true,
            format!(
                "the workspace {} is the read-only lower layer of an overlay: nothing was copied, every change lands in {}",
                layer.lower.display(),
                layer.upper.display()
            ),
        ));
    }

    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec; `apply` only
    // makes syscalls on data prepared in the parent (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || plan.apply());
    }

    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| SandboxError::Spawn { program: spec.program.clone(), source: e })?;
    let pgid = child.id().map(|p| p as i32);
    let out_reader = tokio::spawn(read_capped(child.stdout.take(), spec.output_cap, spec.stdout_lines.clone()));
    let err_reader = tokio::spawn(read_capped(child.stderr.take(), spec.output_cap, None));

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

/// Everything the child does before exec, from what this machine enforces.
fn child_plan(
    spec: &RunSpec,
    caps: &mechanisms::Capabilities,
    cgroup: Option<&RunCgroup>,
    applied: &mut [MechanismStatus],
) -> ChildPlan {
    let mut plan = ChildPlan::bare();
    plan.setsid = true;
    plan.cgroup_fd = cgroup.map(RunCgroup::procs_fd);
    plan.limits = Some(spec.limits);
    plan.nproc_rlimit = cgroup.is_none();
    let mut private_dirs = Vec::new();
    if caps.is_root || caps.user_ns {
        plan.userns = (!caps.is_root).then(UserMap::current);
        plan.pid_ns = caps.pid_ns;
        if caps.network_ns {
            plan.unshare_flags |= libc::CLONE_NEWNET;
        }
        if caps.ipc_ns {
            plan.unshare_flags |= libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
        }
        if caps.mount_ns {
            let size = TmpfsSize { mb: spec.tmpfs_size_mb };
            match MountPlan::build(&spec.writable, caps.mount_proc && caps.pid_ns, size)
                .and_then(|m| Ok((m, std::ffi::CString::new(spec.cwd.as_os_str().as_encoded_bytes())?)))
            {
                Ok((m, cwd)) => {
                    private_dirs = m.private_dirs().to_vec();
                    plan.mounts = Some(m);
                    plan.cwd = Some(cwd);
                    plan.unshare_flags |= libc::CLONE_NEWNS;
                }
                Err(e) => {
                    tracing::warn!("cannot prepare the sandbox's mount namespace: {e}");
                    mark(
                        applied,
                        names::MOUNT_NAMESPACE,
                        false,
                        format!("mount plan failed ({e}): sandboxed processes see the whole filesystem"),
                    );
                }
            }
        }
    }
    plan.drop_caps = caps.drop_caps;
    plan.no_new_privs = true;
    if caps.landlock_abi > 0 {
        let mut write = spec.writable.dirs.clone();
        write.extend(WRITABLE_DEVICES.iter().map(PathBuf::from));
        let mut ll = LandlockPlan::new(caps.landlock_abi, &[PathBuf::from("/")], &write, !caps.network_ns);
        ll.add_write_dirs(&private_dirs);
        plan.landlock = Some(ll);
    }
    if caps.seccomp {
        plan.seccomp = Some(super::seccomp::filter());
    }
    plan
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

/// Sends the whole lines at the start of `partial` to `tx`, keeping the unfinished rest;
/// a line longer than 64 KiB is sent in pieces so a run without newlines holds no memory.
fn send_lines(partial: &mut Vec<u8>, tx: &tokio::sync::mpsc::UnboundedSender<String>) {
    while let Some(end) = partial.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = partial.drain(..=end).collect();
        let _ = tx.send(String::from_utf8_lossy(&line[..end]).into_owned());
    }
    if partial.len() > 64 * 1024 {
        let _ = tx.send(String::from_utf8_lossy(partial).into_owned());
        partial.clear();
    }
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
/// the writer never blocks on a full pipe; each whole line also goes to `lines`.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    stream: Option<R>,
    cap: usize,
    lines: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> CappedOutput {
    let Some(mut stream) = stream else {
        return CappedOutput::default();
    };
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut partial = Vec::new();
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Some(tx) = &lines {
                    partial.extend_from_slice(&buf[..n]);
                    send_lines(&mut partial, tx);
                }
                total += n as u64;
                if kept.len() < cap {
                    let take = n.min(cap - kept.len());
                    kept.extend_from_slice(&buf[..take]);
                }
            }
        }
    }
    if let (Some(tx), false) = (&lines, partial.is_empty()) {
        let _ = tx.send(String::from_utf8_lossy(&partial).into_owned());
    }
    CappedOutput {
        text: String::from_utf8_lossy(&kept).into_owned(),
        total_bytes: total,
        truncated: total > kept.len() as u64,
    }
}
