//! The kernel mechanisms behind the sandbox, what this machine enforces, and
//! the child-side setup run between fork and exec.
//!
//! Child layout with a PID namespace: the spawned process (the "reaper") calls
//! unshare(CLONE_NEWPID) and forks; the fork becomes PID 1 of the fresh
//! namespace and execs the command, dying with the reaper (PDEATHSIG). When
//! PID 1 exits or is killed, the kernel kills every process in the namespace,
//! including ones that left the process group with setsid.

use landlock::{
    path_beneath_rules, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, ABI,
};
use serde::Serialize;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether one isolation mechanism is in force on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MechanismStatus {
    /// Mechanism name (e.g. `network-namespace`).
    pub name: String,
    /// True when the probe showed the kernel enforces it.
    pub enforced: bool,
    /// What it does, or why it is missing.
    pub detail: String,
}

impl MechanismStatus {
    fn new(name: &str, enforced: bool, detail: impl Into<String>) -> Self {
        Self { name: name.to_string(), enforced, detail: detail.into() }
    }
}

/// Mechanism names, shared by the probe, the runner and `doctor`.
pub mod names {
    /// Own process group, killed as a whole.
    pub const PROCESS_GROUP: &str = "process-group";
    /// Resource rlimits (CPU, address space, file size).
    pub const RLIMITS: &str = "rlimits";
    /// Fresh network namespace (no network).
    pub const NETWORK: &str = "network-namespace";
    /// Fresh PID namespace (no process outlives the run).
    pub const PID_NAMESPACE: &str = "pid-namespace";
    /// Landlock write restriction.
    pub const LANDLOCK: &str = "landlock-writes";
    /// Process count limit.
    pub const PROCESS_LIMIT: &str = "process-limit";
}

/// What the probe found; cached for the life of the process.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// unshare(CLONE_NEWNET) works (with a user namespace when not root).
    pub network_ns: bool,
    /// unshare(CLONE_NEWPID) works.
    pub pid_ns: bool,
    /// Landlock restricts writes.
    pub landlock: bool,
    /// A writable pids cgroup directory to create per-run cgroups under.
    pub pids_cgroup: Option<PathBuf>,
    /// Running as root (RLIMIT_NPROC is then not enforced by the kernel).
    pub is_root: bool,
}

static CAPABILITIES: OnceLock<Capabilities> = OnceLock::new();

/// Probes (once) which mechanisms the kernel enforces here, by starting tiny processes with each.
pub fn capabilities() -> &'static Capabilities {
    CAPABILITIES.get_or_init(|| {
        let is_root = nix::unistd::geteuid().is_root();
        let ns = NamespacePlan::new(is_root);
        let (ns1, ns2) = (ns.clone(), ns);
        let network_ns = probe_spawn(move || ns1.enter(libc::CLONE_NEWNET));
        let pid_ns = probe_spawn(move || ns2.enter(libc::CLONE_NEWPID));
        let landlock = match landlock_ruleset(&WritePlan::default()) {
            Ok(Some(rs)) => {
                let mut holder = Some(rs);
                probe_spawn(move || match holder.take() {
                    Some(rs) => restrict_landlock(rs),
                    None => Ok(()),
                })
            }
            _ => false,
        };
        Capabilities { network_ns, pid_ns, landlock, pids_cgroup: find_pids_cgroup(), is_root }
    })
}

/// The mechanisms and whether each is enforced, for `tinycoder doctor` and test reports.
pub fn probe_mechanisms() -> Vec<MechanismStatus> {
    let caps = capabilities();
    let mut out = vec![
        MechanismStatus::new(
            names::PROCESS_GROUP,
            true,
            "own process group; SIGTERM then SIGKILL to the group at the wall timeout",
        ),
        MechanismStatus::new(names::RLIMITS, true, "RLIMIT_CPU, RLIMIT_AS and RLIMIT_FSIZE set before exec"),
    ];
    out.push(if caps.network_ns {
        MechanismStatus::new(names::NETWORK, true, "fresh network namespace: no interfaces but a down loopback")
    } else {
        MechanismStatus::new(names::NETWORK, false, "unshare(CLONE_NEWNET) refused: sandboxed processes can reach the network (enable unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1)")
    });
    out.push(if caps.pid_ns {
        MechanismStatus::new(
            names::PID_NAMESPACE,
            true,
            "fresh PID namespace: every process, even one that called setsid, dies with the run",
        )
    } else {
        MechanismStatus::new(
            names::PID_NAMESPACE,
            false,
            "unshare(CLONE_NEWPID) refused: detached children are only killed through the pids cgroup, if any",
        )
    });
    out.push(if caps.landlock {
        MechanismStatus::new(names::LANDLOCK, true, "Landlock: writes only under the temp dir, the build dir and sandbox.writable_paths; in the shadow tree only new entries and the shadow's own copies (never a hard-linked workspace file in place)")
    } else {
        MechanismStatus::new(names::LANDLOCK, false, "Landlock unavailable (kernel < 5.13 or not in the lsm= boot list): sandboxed processes can write anywhere the user can")
    });
    out.push(match (&caps.pids_cgroup, caps.is_root) {
        (Some(dir), _) => MechanismStatus::new(names::PROCESS_LIMIT, true, format!("per-run pids cgroup under {} (pids.max = sandbox.max_processes)", dir.display())),
        (None, false) => MechanismStatus::new(names::PROCESS_LIMIT, true, "RLIMIT_NPROC = sandbox.max_processes"),
        (None, true) => MechanismStatus::new(names::PROCESS_LIMIT, false, "running as root without a writable pids cgroup: the kernel ignores RLIMIT_NPROC for root, so a fork bomb is only stopped by the wall timeout"),
    });
    out
}

/// How to enter namespaces: directly as root, through a user namespace otherwise.
#[derive(Debug, Clone)]
pub struct NamespacePlan {
    is_root: bool,
    uid_map: CString,
    gid_map: CString,
}

impl NamespacePlan {
    /// Prepares the uid/gid map lines in the parent (no allocation after fork).
    pub fn new(is_root: bool) -> Self {
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        let line = |id: u32| CString::new(format!("{id} {id} 1")).unwrap_or_default();
        Self { is_root, uid_map: line(uid), gid_map: line(gid) }
    }

    /// Child side: unshare `flags`, with a user namespace first when not root.
    pub fn enter(&self, flags: libc::c_int) -> std::io::Result<()> {
        if !self.is_root {
            check(unsafe { libc::unshare(libc::CLONE_NEWUSER) })?;
            write_proc(c"/proc/self/setgroups", c"deny")?;
            write_proc(c"/proc/self/uid_map", &self.uid_map)?;
            write_proc(c"/proc/self/gid_map", &self.gid_map)?;
        }
        check(unsafe { libc::unshare(flags) })
    }
}

fn write_proc(path: &std::ffi::CStr, content: &std::ffi::CStr) -> std::io::Result<()> {
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    let bytes = content.to_bytes();
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    unsafe { libc::close(fd) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Where a sandboxed process may write.
#[derive(Debug, Clone, Default)]
pub struct WritePlan {
    /// Directories writable without restriction (temp dir, build dir, config extras).
    pub dirs: Vec<PathBuf>,
    /// A shadow tree whose existing files may be hard links into the real
    /// workspace: entries may be created, renamed and removed, but no file in
    /// it may be written in place (that would write the real file too)...
    pub tree: Option<PathBuf>,
    /// ...except these files, which are real copies owned by the shadow.
    pub tree_files: Vec<PathBuf>,
}

/// Builds a Landlock ruleset: read/execute everywhere, writes per `plan`.
/// Ok(None) when the kernel has no Landlock.
pub fn landlock_ruleset(plan: &WritePlan) -> Result<Option<RulesetCreated>, String> {
    let abi = ABI::V4;
    let all = AccessFs::from_all(abi);
    let in_place = AccessFs::WriteFile | AccessFs::Truncate;
    let ruleset =
        Ruleset::default().handle_access(all).map_err(|e| e.to_string())?.create().map_err(|e| e.to_string())?;
    let existing = |v: &[PathBuf]| -> Vec<PathBuf> { v.iter().filter(|p| p.exists()).cloned().collect() };
    let mut ruleset = ruleset
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(existing(&plan.dirs), all))
        .map_err(|e| e.to_string())?;
    if let Some(tree) = &plan.tree {
        ruleset = ruleset
            .add_rules(path_beneath_rules([tree], all & !in_place))
            .map_err(|e| e.to_string())?
            .add_rules(path_beneath_rules(existing(&plan.tree_files), in_place | AccessFs::ReadFile))
            .map_err(|e| e.to_string())?;
    }
    Ok(Some(ruleset))
}

/// Child side: applies the ruleset; an error when the kernel does not enforce it.
pub fn restrict_landlock(ruleset: RulesetCreated) -> std::io::Result<()> {
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(std::io::Error::from_raw_os_error(libc::ENOSYS)),
        Err(_) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
    }
}

/// Child side: sets the rlimits (0 = leave unlimited).
pub fn set_rlimits(limits: &super::ResourceLimits, nproc: bool) -> std::io::Result<()> {
    let set = |res: libc::__rlimit_resource_t, v: u64| -> std::io::Result<()> {
        if v == 0 {
            return Ok(());
        }
        let lim = libc::rlimit { rlim_cur: v as libc::rlim_t, rlim_max: v as libc::rlim_t };
        check(unsafe { libc::setrlimit(res, &lim) })
    };
    set(libc::RLIMIT_CPU, limits.cpu_s)?;
    set(libc::RLIMIT_AS, limits.address_space_bytes)?;
    set(libc::RLIMIT_FSIZE, limits.file_size_bytes)?;
    if nproc {
        set(libc::RLIMIT_NPROC, limits.max_processes)?;
    }
    Ok(())
}

/// Child side, PID namespace: unshare, fork; the parent stays as reaper and
/// exits with the child's status, the child returns to exec as PID 1.
pub fn fork_into_pid_namespace(ns: &NamespacePlan, also_net: bool) -> std::io::Result<()> {
    let flags = libc::CLONE_NEWPID | if also_net { libc::CLONE_NEWNET } else { 0 };
    ns.enter(flags)?;
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // PID 1 of the new namespace: die with the reaper.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        // (getppid() is 0 here: the reaper lives outside the new namespace, so
        // there is no race check; the window before PDEATHSIG is set is tiny.)
        return Ok(());
    }
    // The reaper: it must never return to std (it would exec too). Close every
    // fd but stdio so std's exec-error pipe sees EOF once the child execs.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::close(0);
    }
    let mut status: libc::c_int = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            unsafe { libc::_exit(126) };
        }
    }
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
    unsafe { libc::_exit(code) }
}

fn probe_spawn<F>(setup: F) -> bool
where
    F: FnMut() -> std::io::Result<()> + Send + Sync + 'static,
{
    use std::os::unix::process::CommandExt;
    let program = if Path::new("/bin/true").exists() { "/bin/true" } else { "true" };
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    unsafe {
        cmd.pre_exec(setup);
    }
    match cmd.status() {
        Ok(s) => s.success(),
        Err(_) => false,
    }
}

/// The pids-controller directory where a per-run cgroup can be created, if writable.
fn find_pids_cgroup() -> Option<PathBuf> {
    let candidates = [PathBuf::from("/sys/fs/cgroup/pids"), own_v2_cgroup()?];
    candidates.into_iter().find(|base| {
        let probe = base.join(format!("tinycoder-probe-{}", std::process::id()));
        let ok = std::fs::create_dir(&probe).is_ok() && probe.join("pids.max").exists();
        let _ = std::fs::remove_dir(&probe);
        ok
    })
}

fn own_v2_cgroup() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(PathBuf::from("/sys/fs/cgroup").join(rel.trim_start_matches('/')))
}

/// A per-run pids cgroup: caps the process count, and lists every process of
/// the run so all can be killed even without a PID namespace.
#[derive(Debug)]
pub struct RunCgroup {
    dir: PathBuf,
    /// `cgroup.procs`, opened in the parent so the child only writes "0".
    pub procs: OwnedFd,
}

impl RunCgroup {
    /// Creates `<base>/tinycoder-<pid>-<n>` with `pids.max`.
    pub fn create(base: &Path, max_processes: u64) -> std::io::Result<Self> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = base.join(format!("tinycoder-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        std::fs::write(dir.join("pids.max"), max_processes.to_string())?;
        let procs = std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))?;
        Ok(Self { dir, procs: procs.into() })
    }

    /// Child side: moves the calling process into the cgroup.
    pub fn join_self(fd: libc::c_int) -> std::io::Result<()> {
        let n = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Raw fd of cgroup.procs.
    pub fn procs_fd(&self) -> libc::c_int {
        self.procs.as_raw_fd()
    }

    /// SIGKILLs every process still in the cgroup.
    pub fn kill_all(&self) {
        if let Ok(text) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
        }
    }

    /// True when no process is left.
    pub fn is_empty(&self) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.procs")).map(|t| t.trim().is_empty()).unwrap_or(true)
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            self.kill_all();
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        tracing::warn!(dir = %self.dir.display(), "could not remove the run's pids cgroup");
    }
}
