//! The kernel mechanisms behind the sandbox, what this machine enforces, and
//! the child-side setup run between fork and exec.
//!
//! Child layout with a PID namespace: the spawned process (the "reaper")
//! calls setsid, enters a user namespace when not root, unshares the other
//! namespaces and forks; the fork becomes PID 1 of the fresh PID namespace,
//! builds the mount namespace's root, drops every capability, applies
//! Landlock and seccomp, and execs the command, dying with the reaper
//! (PDEATHSIG). When PID 1 exits or is killed, the kernel kills every process
//! in the namespace, including ones that left the process group with setsid.
//!
//! Everything the child does is prepared in the parent ([`ChildPlan`]): paths
//! as `CString`s, the seccomp program, the uid map lines. Between fork and
//! exec only raw syscalls run on that data (no allocation, no locks).
//!
//! `TINYCODER_SANDBOX_DISABLE` (read once, by the first probe) is a diagnostic
//! knob: a comma-separated list of mechanism names (see [`names`]; `landlock`
//! and `mount` are accepted for short) that are then treated as missing, to
//! see how the sandbox behaves on a machine without them. It can only turn
//! mechanisms off.

use super::landlock_raw::{self, LandlockPlan};
use super::mount_plan::MountPlan;
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
    /// What it does, or why it is missing (and what is then not contained).
    pub detail: String,
}

impl MechanismStatus {
    pub(super) fn new(name: &str, enforced: bool, detail: impl Into<String>) -> Self {
        Self { name: name.to_string(), enforced, detail: detail.into() }
    }
}

/// Mechanism names, shared by the probe, the runner, `doctor` and `TINYCODER_SANDBOX_DISABLE`.
pub mod names {
    /// Own session and process group (setsid: no controlling terminal), killed as a whole.
    pub const SESSION: &str = "session";
    /// Resource rlimits (CPU, address space, file size).
    pub const RLIMITS: &str = "rlimits";
    /// User namespace (the way in to the other namespaces when not root).
    pub const USER_NAMESPACE: &str = "user-namespace";
    /// Every capability dropped, no_new_privs.
    pub const CAPABILITIES: &str = "capabilities";
    /// Fresh network namespace (no network, no abstract unix sockets of the host).
    pub const NETWORK: &str = "network-namespace";
    /// Fresh PID namespace (no process outlives the run, no other process visible).
    pub const PID_NAMESPACE: &str = "pid-namespace";
    /// Fresh IPC (SysV, POSIX mqueue) and UTS namespaces.
    pub const IPC_NAMESPACE: &str = "ipc-namespace";
    /// Own mount namespace: a new root with only the shadow, system folders and configured paths.
    pub const MOUNT_NAMESPACE: &str = "mount-namespace";
    /// Landlock write restriction.
    pub const LANDLOCK: &str = "landlock-writes";
    /// Landlock ABI 6 scopes (signals, abstract unix sockets) and ABI 5 device ioctls.
    pub const LANDLOCK_SCOPES: &str = "landlock-scopes";
    /// Seccomp filter (TIOCSTI/TIOCLINUX, new user namespaces).
    pub const SECCOMP: &str = "seccomp";
    /// Process count limit.
    pub const PROCESS_LIMIT: &str = "process-limit";
    /// The shadow as an overlay over the workspace (else copies of every file).
    pub const LAYERED_SHADOW: &str = "layered-shadow";
}

/// The environment variable naming mechanisms to treat as missing (diagnostics only).
pub const DISABLE_ENV: &str = "TINYCODER_SANDBOX_DISABLE";

/// What the probe found; cached for the life of the process.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// A user namespace can be made (only used when not root).
    pub user_ns: bool,
    /// unshare(CLONE_NEWNET) works (with a user namespace when not root).
    pub network_ns: bool,
    /// unshare(CLONE_NEWPID) works.
    pub pid_ns: bool,
    /// unshare(CLONE_NEWIPC | CLONE_NEWUTS) works.
    pub ipc_ns: bool,
    /// A new root can be built and pivoted into.
    pub mount_ns: bool,
    /// A fresh /proc can be mounted in it (needs the PID namespace).
    pub mount_proc: bool,
    /// Capabilities can be dropped (bounding set, ambient, effective) before exec.
    pub drop_caps: bool,
    /// A seccomp filter can be installed.
    pub seccomp: bool,
    /// Landlock ABI version in use (0 = none).
    pub landlock_abi: u32,
    /// A writable pids cgroup directory to create per-run cgroups under.
    pub pids_cgroup: Option<PathBuf>,
    /// Running as root (RLIMIT_NPROC is then not enforced by the kernel).
    pub is_root: bool,
    /// Mechanisms switched off through [`DISABLE_ENV`].
    pub disabled: Vec<String>,
}

impl Capabilities {
    /// Namespaces are entered (as root directly, else through a user namespace).
    fn ns_ok(&self) -> bool {
        self.is_root || self.user_ns
    }
}

static CAPABILITIES: OnceLock<Capabilities> = OnceLock::new();

/// The mechanisms named in [`DISABLE_ENV`], normalised to [`names`].
fn disabled_from_env() -> Vec<String> {
    let raw = std::env::var(DISABLE_ENV).unwrap_or_default();
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match s {
            "landlock" => names::LANDLOCK.to_string(),
            "mount" => names::MOUNT_NAMESPACE.to_string(),
            "pid" => names::PID_NAMESPACE.to_string(),
            "network" | "net" => names::NETWORK.to_string(),
            "ipc" => names::IPC_NAMESPACE.to_string(),
            "user" => names::USER_NAMESPACE.to_string(),
            "overlay" | "layer" => names::LAYERED_SHADOW.to_string(),
            other => other.to_string(),
        })
        .collect()
}

/// Probes (once) which mechanisms the kernel enforces here, by starting tiny processes with each.
pub fn capabilities() -> &'static Capabilities {
    CAPABILITIES.get_or_init(|| {
        let disabled = disabled_from_env();
        if !disabled.is_empty() {
            tracing::warn!("{DISABLE_ENV}: treating as missing: {}", disabled.join(", "));
        }
        let off = |n: &str| disabled.iter().any(|d| d == n);
        let is_root = nix::unistd::geteuid().is_root();
        let mut caps = Capabilities {
            user_ns: false,
            network_ns: false,
            pid_ns: false,
            ipc_ns: false,
            mount_ns: false,
            mount_proc: false,
            drop_caps: false,
            seccomp: false,
            landlock_abi: 0,
            pids_cgroup: if off(names::PROCESS_LIMIT) { None } else { find_pids_cgroup() },
            is_root,
            disabled: disabled.clone(),
        };
        let base = ChildPlan::bare();
        caps.user_ns = !is_root && !off(names::USER_NAMESPACE) && {
            let mut p = base.clone();
            p.userns = Some(UserMap::current());
            probe_spawn(p)
        };
        if caps.ns_ok() {
            let with = |flags: libc::c_int| {
                let mut p = base.clone();
                p.userns = (!is_root).then(UserMap::current);
                p.unshare_flags = flags;
                p
            };
            caps.network_ns = !off(names::NETWORK) && probe_spawn(with(libc::CLONE_NEWNET));
            caps.ipc_ns = !off(names::IPC_NAMESPACE) && probe_spawn(with(libc::CLONE_NEWIPC | libc::CLONE_NEWUTS));
            caps.pid_ns = !off(names::PID_NAMESPACE) && {
                let mut p = with(0);
                p.pid_ns = true;
                probe_spawn(p)
            };
            if !off(names::MOUNT_NAMESPACE) {
                let pid_ns = caps.pid_ns;
                let attempt = |proc_fs: bool| {
                    let mut p = with(libc::CLONE_NEWNS);
                    p.pid_ns = pid_ns && proc_fs;
                    match MountPlan::probe(proc_fs && pid_ns) {
                        Ok(m) => {
                            p.mounts = Some(m);
                            probe_spawn(p)
                        }
                        Err(e) => {
                            tracing::debug!("no mount plan: {e}");
                            false
                        }
                    }
                };
                caps.mount_proc = caps.pid_ns && attempt(true);
                caps.mount_ns = caps.mount_proc || attempt(false);
            }
        }
        caps.drop_caps = !off(names::CAPABILITIES) && {
            let mut p = base.clone();
            p.userns = caps.user_ns.then(UserMap::current);
            p.drop_caps = true;
            probe_spawn(p)
        };
        caps.seccomp = !off(names::SECCOMP) && super::seccomp::supported() && {
            let mut p = base.clone();
            p.no_new_privs = true;
            p.seccomp = Some(super::seccomp::filter());
            probe_spawn(p)
        };
        if !off(names::LANDLOCK) {
            let abi = landlock_raw::abi_version();
            if abi > 0 {
                let mut p = base;
                p.no_new_privs = true;
                p.landlock = Some(LandlockPlan::new(abi, &[PathBuf::from("/")], &[], false));
                if probe_spawn(p) {
                    caps.landlock_abi = abi.min(landlock_raw::MAX_ABI);
                }
            }
        }
        caps
    })
}

/// The mechanisms and whether each is enforced, for `tinycoder doctor` and test reports.
pub fn probe_mechanisms() -> Vec<MechanismStatus> {
    let caps = capabilities();
    let why_off = |name: &str, missing: &str| -> String {
        if caps.disabled.iter().any(|d| d == name) {
            format!("switched off by {DISABLE_ENV}: {missing}")
        } else {
            missing.to_string()
        }
    };
    let mut out = vec![
        MechanismStatus::new(
            names::SESSION,
            true,
            "own session and process group (setsid): no controlling terminal, so TIOCSTI has no terminal to type into; SIGTERM then SIGKILL to the group at the wall timeout",
        ),
        MechanismStatus::new(names::RLIMITS, true, "RLIMIT_CPU, RLIMIT_AS and RLIMIT_FSIZE set before exec"),
    ];
    if !caps.is_root {
        out.push(if caps.user_ns {
            MechanismStatus::new(names::USER_NAMESPACE, true, "user namespace (the uid mapped to itself): the way in to the namespaces below without privileges")
        } else {
            MechanismStatus::new(names::USER_NAMESPACE, false, why_off(names::USER_NAMESPACE, "unshare(CLONE_NEWUSER) refused: no network, PID, IPC or mount namespace either (enable unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0)"))
        });
    }
    out.push(if caps.drop_caps {
        let who = if caps.is_root {
            "running as root: uid 0 is kept (so the shadow stays writable) but every capability is dropped before exec (bounding set, ambient, effective, permitted), with no_new_privs; without them root cannot remount, load modules, ptrace others or pass DAC checks on files it does not own"
        } else {
            "every capability dropped before exec (also those the user namespace gave), with no_new_privs: setuid binaries gain nothing"
        };
        MechanismStatus::new(names::CAPABILITIES, true, who)
    } else {
        MechanismStatus::new(names::CAPABILITIES, false, why_off(names::CAPABILITIES, if caps.is_root { "capabilities could not be dropped: a test running as root keeps every capability" } else { "capabilities could not be dropped (a setuid binary could still raise privileges)" }))
    });
    out.push(if caps.network_ns {
        MechanismStatus::new(names::NETWORK, true, "fresh network namespace: no interfaces but a down loopback, and none of the host's abstract unix sockets")
    } else {
        MechanismStatus::new(names::NETWORK, false, why_off(names::NETWORK, "unshare(CLONE_NEWNET) refused: sandboxed processes can reach the network and the host's abstract unix sockets (Landlock blocks TCP connect/bind where its ABI has it)"))
    });
    out.push(if caps.pid_ns {
        MechanismStatus::new(
            names::PID_NAMESPACE,
            true,
            "fresh PID namespace: every process, even one that called setsid, dies with the run; no other process can be seen or signalled",
        )
    } else {
        MechanismStatus::new(
            names::PID_NAMESPACE,
            false,
            why_off(names::PID_NAMESPACE, "unshare(CLONE_NEWPID) refused: detached children are only killed through the pids cgroup, if any, and other processes of the user are visible"),
        )
    });
    out.push(if caps.ipc_ns {
        MechanismStatus::new(names::IPC_NAMESPACE, true, "fresh IPC and UTS namespaces: SysV shared memory, semaphores and message queues of the host are out of reach, and what a run leaves behind dies with it")
    } else {
        MechanismStatus::new(names::IPC_NAMESPACE, false, why_off(names::IPC_NAMESPACE, "unshare(CLONE_NEWIPC) refused: sandboxed processes share SysV IPC with the host and can leave segments behind"))
    });
    out.push(if caps.mount_ns {
        let proc_fs = if caps.mount_proc {
            "a fresh /proc of its own PID namespace (/proc/sys read-only)"
        } else {
            "no /proc (a fresh one needs the PID namespace)"
        };
        MechanismStatus::new(names::MOUNT_NAMESPACE, true, format!("own mount namespace on a new root: the shadow tree, its temp dir, the build dir and sandbox.writable_paths read-write; /usr, /bin, /lib*, /etc, /opt and sandbox.readable_paths read-only; private /tmp, /dev/shm and $HOME (tmpfs); a minimal /dev (null, zero, full, random, urandom); {proc_fs}; no /run, /var, /sys, /home, no real workspace, no host sockets"))
    } else {
        MechanismStatus::new(names::MOUNT_NAMESPACE, false, why_off(names::MOUNT_NAMESPACE, "no mount namespace: sandboxed processes see the whole filesystem, can read what the user can (other projects, ~/.ssh), and connect to path-named unix sockets (docker, X11, D-Bus); /tmp and /dev/shm are the host's"))
    });
    out.push(if caps.landlock_abi > 0 {
        MechanismStatus::new(names::LANDLOCK, true, format!("Landlock ABI {}: writes only under the shadow, its temp dir, the build dir and sandbox.writable_paths (and, in the mount namespace, the private /tmp, /dev/shm and $HOME)", caps.landlock_abi))
    } else {
        MechanismStatus::new(names::LANDLOCK, false, why_off(names::LANDLOCK, if caps.mount_ns { "Landlock unavailable (kernel < 5.13 or not in the lsm= boot list): writes are still confined by the mount namespace's read-only mounts; the shadow holds copies, so the real workspace is never written" } else { "Landlock unavailable (kernel < 5.13 or not in the lsm= boot list) and no mount namespace: sandboxed processes can write anywhere the user can, except the real workspace files (the shadow holds copies, not links)" }))
    });
    out.push(match caps.landlock_abi {
        6.. => MechanismStatus::new(names::LANDLOCK_SCOPES, true, "Landlock scopes: no signals to processes outside the run, no connection to abstract unix sockets outside it, no ioctl on device files"),
        5 => MechanismStatus::new(names::LANDLOCK_SCOPES, false, "Landlock ABI 5: device ioctls are blocked, but signals and abstract unix sockets are not scoped (kernel < 6.12)"),
        _ => MechanismStatus::new(names::LANDLOCK_SCOPES, false, why_off(names::LANDLOCK, "no Landlock scopes (ABI < 5): signals, abstract unix sockets and device ioctls are only contained by the namespaces")),
    });
    out.push(if caps.seccomp {
        MechanismStatus::new(names::SECCOMP, true, "seccomp filter: ioctl TIOCSTI and TIOCLINUX, new user namespaces (unshare, clone) and clone3 refused; other syscall ABIs (x32, i386) refused")
    } else {
        MechanismStatus::new(names::SECCOMP, false, why_off(names::SECCOMP, "no seccomp filter: TIOCSTI is only stopped by the missing controlling terminal, and a test can create its own user namespace"))
    });
    out.push(match (&caps.pids_cgroup, caps.is_root) {
        (Some(dir), _) => MechanismStatus::new(names::PROCESS_LIMIT, true, format!("per-run pids cgroup under {} (pids.max = sandbox.max_processes)", dir.display())),
        (None, false) => MechanismStatus::new(names::PROCESS_LIMIT, true, "RLIMIT_NPROC = sandbox.max_processes"),
        (None, true) => MechanismStatus::new(names::PROCESS_LIMIT, false, "running as root without a writable pids cgroup: the kernel ignores RLIMIT_NPROC for root, so a fork bomb is only stopped by the wall timeout"),
    });
    out
}

/// The uid/gid map lines of a user namespace that maps the caller's ids to themselves.
#[derive(Debug, Clone)]
pub struct UserMap {
    uid_map: CString,
    gid_map: CString,
}

impl UserMap {
    /// Maps the current euid/egid to themselves (prepared in the parent).
    pub fn current() -> Self {
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        let line = |id: u32| CString::new(format!("{id} {id} 1")).unwrap_or_default();
        Self { uid_map: line(uid), gid_map: line(gid) }
    }

    /// Child side: unshare a user namespace and write the maps.
    fn enter(&self) -> std::io::Result<()> {
        check(unsafe { libc::unshare(libc::CLONE_NEWUSER) })?;
        write_proc(c"/proc/self/setgroups", c"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)
    }
}

/// Everything the child does between fork and exec, prepared in the parent.
#[derive(Debug, Clone)]
pub struct ChildPlan {
    /// setsid (else setpgid only; probes keep their session).
    pub setsid: bool,
    /// cgroup.procs of the run's pids cgroup.
    pub cgroup_fd: Option<libc::c_int>,
    /// rlimits to set.
    pub limits: Option<super::ResourceLimits>,
    /// Also set RLIMIT_NPROC.
    pub nproc_rlimit: bool,
    /// Enter a user namespace first (not root).
    pub userns: Option<UserMap>,
    /// Further namespaces (CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNS).
    pub unshare_flags: libc::c_int,
    /// Fork into a fresh PID namespace.
    pub pid_ns: bool,
    /// Build the new root (needs CLONE_NEWNS in `unshare_flags`).
    pub mounts: Option<MountPlan>,
    /// The working directory to change to once the new root is in place.
    pub cwd: Option<CString>,
    /// Drop every capability.
    pub drop_caps: bool,
    /// Set no_new_privs.
    pub no_new_privs: bool,
    /// Landlock rules to apply.
    pub landlock: Option<LandlockPlan>,
    /// Seccomp program to install last.
    pub seccomp: Option<Vec<libc::sock_filter>>,
}

impl ChildPlan {
    /// A plan that does nothing but a process group (probes start from it).
    pub fn bare() -> Self {
        Self {
            setsid: false,
            cgroup_fd: None,
            limits: None,
            nproc_rlimit: false,
            userns: None,
            unshare_flags: 0,
            pid_ns: false,
            mounts: None,
            cwd: None,
            drop_caps: false,
            no_new_privs: false,
            landlock: None,
            seccomp: None,
        }
    }

    /// Child side: runs the plan. Only syscalls on data prepared in the parent.
    pub fn apply(&self) -> std::io::Result<()> {
        if self.setsid {
            if unsafe { libc::setsid() } < 0 {
                return Err(std::io::Error::last_os_error());
            }
        } else {
            check(unsafe { libc::setpgid(0, 0) })?;
        }
        if let Some(fd) = self.cgroup_fd {
            RunCgroup::join_self(fd)?;
        }
        if let Some(limits) = &self.limits {
            set_rlimits(limits, self.nproc_rlimit)?;
        }
        if let Some(map) = &self.userns {
            map.enter()?;
        }
        let flags = self.unshare_flags | if self.pid_ns { libc::CLONE_NEWPID } else { 0 };
        if flags != 0 {
            check(unsafe { libc::unshare(flags) })?;
        }
        if self.pid_ns {
            fork_as_pid1()?;
        }
        if let Some(m) = &self.mounts {
            m.apply()?;
        }
        if let Some(cwd) = &self.cwd {
            check(unsafe { libc::chdir(cwd.as_ptr()) })?;
        }
        if self.drop_caps {
            // Outside a user namespace a non-root process holds no capability but
            // cannot shrink its bounding set; no_new_privs keeps it that way.
            let holds_caps = self.userns.is_some() || unsafe { libc::geteuid() } == 0;
            drop_capabilities(holds_caps)?;
        }
        if self.no_new_privs || self.landlock.is_some() || self.seccomp.is_some() {
            check(prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0))?;
        }
        if let Some(l) = &self.landlock {
            l.apply()?;
        }
        if let Some(prog) = &self.seccomp {
            super::seccomp::install(prog)?;
        }
        // No inherited descriptor (a terminal, a socket the editor passed on) reaches the command.
        unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
        Ok(())
    }
}

/// prctl with its unused arguments passed as full-width zeros (the kernel checks them).
pub(super) fn prctl(op: libc::c_int, a: libc::c_ulong, b: libc::c_ulong) -> libc::c_int {
    unsafe { libc::prctl(op, a, b, 0 as libc::c_ulong, 0 as libc::c_ulong) }
}

/// Child side: drops every capability (bounding set first, which needs
/// CAP_SETPCAP, then ambient, then effective/permitted/inheritable), so an
/// exec, even of a setuid binary or as uid 0, gains none.
fn drop_capabilities(check_bounding_set: bool) -> std::io::Result<()> {
    for cap in 0..64 {
        // EINVAL past the last capability the kernel knows.
        prctl(libc::PR_CAPBSET_DROP, cap, 0);
    }
    prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0);
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let data =
        [Data { effective: 0, permitted: 0, inheritable: 0 }, Data { effective: 0, permitted: 0, inheritable: 0 }];
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Bounding set must be empty now (a check: CAP_SYS_ADMIN is 21).
    if check_bounding_set && prctl(libc::PR_CAPBSET_READ, 21, 0) == 1 {
        return Err(std::io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(())
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

pub(super) fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Where a sandboxed process may write, and what else it may read.
#[derive(Debug, Clone, Default)]
pub struct WritePlan {
    /// Directories (or files) writable without restriction: the shadow tree, its
    /// temp dir, the build dir, config extras. The shadow holds copies, never
    /// links into the workspace, so it is writable like the rest.
    pub dirs: Vec<PathBuf>,
    /// Extra paths visible read-only in the mount namespace (toolchains, caches).
    pub readable: Vec<PathBuf>,
    /// The home directory to replace by a private tmpfs in the mount namespace.
    pub home: Option<PathBuf>,
    /// The overlay that makes a layered shadow's tree (the run is refused without a mount namespace).
    pub layer: Option<super::shadow_layer::ShadowLayer>,
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

/// Child side, after unshare(CLONE_NEWPID): fork; the parent stays as reaper
/// and exits with the child's status, the child returns to exec as PID 1.
fn fork_as_pid1() -> std::io::Result<()> {
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // PID 1 of the new namespace: die with the reaper.
        prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0);
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

/// Starts `true` with `plan` applied; true when it ran and exited 0.
pub(super) fn probe_spawn(plan: ChildPlan) -> bool {
    use std::os::unix::process::CommandExt;
    let program = if Path::new("/bin/true").exists() { "/bin/true" } else { "true" };
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    // SAFETY: `apply` only makes syscalls on data prepared here.
    unsafe {
        cmd.pre_exec(move || plan.apply());
    }
    match cmd.output() {
        Ok(s) if s.status.success() => true,
        Ok(s) => {
            tracing::debug!("sandbox probe failed: {:?} {}", s.status, String::from_utf8_lossy(&s.stderr));
            false
        }
        Err(e) => {
            tracing::debug!("sandbox probe failed: {e}");
            false
        }
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
