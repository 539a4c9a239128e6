//! A hostile test suite run through the real test path (`run_project_tests`:
//! pytest in a shadow): its `conftest.py` attacks the workspace, the terminal,
//! host sockets, other processes' environments, SysV IPC, /dev/shm, the
//! user's toolchain caches, and leaves processes behind. Each attack must be
//! contained, and the real workspace unchanged to the bit (content, mode,
//! mtime, xattrs).
//!
//! Each test also runs itself again in a child process with
//! `TINYCODER_SANDBOX_DISABLE=landlock` (the capability probe reads it once
//! per process): without Landlock the other mechanisms must still hold.

#[path = "sandbox_common.rs"]
mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tinycoder::paths::WorkspacePaths;
use tinycoder::sandbox::{mechanisms, run_project_tests, TestReport};
use tokio_util::sync::CancellationToken;

const SECRET_VAR: &str = "TINYCODER_HOSTILE_SECRET";
const CHILD_MARK: &str = "TINYCODER_HOSTILE_CHILD";

/// True when this process runs with `mechanism` switched off by the knob.
fn switched_off(mechanism: &str) -> bool {
    std::env::var(mechanisms::DISABLE_ENV).unwrap_or_default().split(',').any(|m| m.trim() == mechanism)
}

/// Runs test `name` of this binary again in a child with `disable` as the knob; asserts it passed.
fn rerun_with_disabled(name: &str, disable: &str) {
    if std::env::var_os(CHILD_MARK).is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(mechanisms::DISABLE_ENV, disable)
        .env(CHILD_MARK, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{name} with {}={disable} failed:\n{}\n{}",
        mechanisms::DISABLE_ENV,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A unique tag for this run (file names, sleep lengths).
fn tag() -> String {
    format!("{}{}", std::process::id(), uuid::Uuid::new_v4().simple().to_string().get(..6).unwrap_or("x"))
}

fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = [0u8; 256];
    let len = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (len >= 0).then(|| buf[..len as usize].to_vec())
}

/// Everything about a file a hostile test might change.
fn file_state(path: &Path) -> (u32, i64, i64, u64, Option<Vec<u8>>, Vec<u8>) {
    let m = std::fs::metadata(path).unwrap();
    (m.mode(), m.mtime(), m.mtime_nsec(), m.len(), xattr(path, "user.tinycoder"), std::fs::read(path).unwrap())
}

const HOSTILE_CONFTEST: &str = r#"
import ctypes, json, os, socket, subprocess, sys
A = json.load(open(os.path.join(os.path.dirname(__file__), "attack.json")))
def attempt(name, fn):
    try:
        r = fn()
        print(f"HOSTILE {name}: DONE {r!r}", flush=True)
    except BaseException as e:
        print(f"HOSTILE {name}: refused {type(e).__name__}: {e}", flush=True)
targets = [("shadow", "victim.txt")] + ([("real", A["victim"])] if A["attack_real"] else [])
for label, path in targets:
    attempt(f"chmod-{label}", lambda: os.chmod(path, 0o4755))
    attempt(f"utime-{label}", lambda: os.utime(path, (0, 0)))
    attempt(f"setxattr-{label}", lambda: os.setxattr(path, "user.tinycoder", b"pwned"))
    def write(path=path):
        with open(path, "a") as f:
            f.write("pwned\n")
    attempt(f"write-{label}", write)
    attempt(f"truncate-{label}", lambda: os.truncate(path, 1))
def unix_connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(A["socket"])
    s.sendall(b"pwned")
attempt("unix-socket", unix_connect)
def environ():
    found = []
    for pid in [A["host_pid"], A["host_ppid"], A["decoy_pid"]] + [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            data = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        for kv in data.split(b"\0"):
            if kv.startswith(A["secret_var"].encode() + b"="):
                found.append(kv.decode())
    return found
attempt("proc-environ", environ)
def shm():
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(A["shm_key"], 4096, 0o1000 | 0o600)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    return shmid
attempt("sysv-shm", shm)
def devshm():
    with open("/dev/shm/" + A["tag"], "w") as f:
        f.write("pwned")
attempt("dev-shm", devshm)
def cache():
    d = os.path.join(A["home"], ".cargo", "registry")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, A["tag"]), "w") as f:
        f.write("pwned")
attempt("toolchain-cache", cache)
def home():
    with open(os.path.join(A["home"], A["tag"]), "w") as f:
        f.write("pwned")
attempt("home", home)
attempt("survivor", lambda: subprocess.Popen(["sleep", A["sleep"]], start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)
"#;

struct Hostile {
    /// A process of this user holding the secret in its environment (as an
    /// editor or shell started with a token would: /proc/<pid>/environ shows
    /// the environment a process started with).
    decoy: std::process::Child,
    secret: String,
    workspace: tempfile::TempDir,
    outside: tempfile::TempDir,
    tag: String,
    home: PathBuf,
    shm_key: i32,
    sleep: String,
}

fn hostile_workspace() -> Hostile {
    common::hermetic_dirs();
    let secret = format!("s3cret-{}", tag());
    let decoy = std::process::Command::new("sleep").arg("300").env(SECRET_VAR, &secret).spawn().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let tag = format!("tinycoder-hostile-{}", tag());
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let shm_key = 0x7c00_0000 | (std::process::id() as i32 & 0xffff);
    let sleep = format!("{}.{}", 3000 + std::process::id() % 1000, 3);
    let w = workspace.path();
    std::fs::write(w.join("victim.txt"), "precious\n").unwrap();
    std::fs::write(w.join("conftest.py"), HOSTILE_CONFTEST).unwrap();
    std::fs::write(w.join("test_ok.py"), "def test_ok():\n    assert True\n").unwrap();
    let attack = serde_json::json!({
        "victim": w.join("victim.txt"),
        "socket": outside.path().join("host.sock"),
        "host_pid": std::process::id(),
        "host_ppid": std::os::unix::process::parent_id(),
        "decoy_pid": decoy.id(),
        "secret_var": SECRET_VAR,
        "shm_key": shm_key,
        "tag": tag,
        "home": home,
        "sleep": sleep,
        // With no mount namespace the real path is in plain view: nothing stops a
        // chmod there (Landlock has no metadata rights), so only the shadow is attacked.
        "attack_real": !switched_off(mechanisms::names::MOUNT_NAMESPACE),
    });
    std::fs::write(w.join("attack.json"), attack.to_string()).unwrap();
    Hostile { decoy, secret, workspace, outside, tag, home, shm_key, sleep }
}

async fn run_tests(root: &Path) -> TestReport {
    let mut config = common::default_config();
    config.sandbox.test_command = "python3 -m pytest -s -q -p no:cacheprovider".into();
    config.sandbox.wall_timeout_s = 120;
    let paths = WorkspacePaths::new(root, "");
    run_project_tests(&config, &paths, &[], &CancellationToken::new()).await.expect("test run")
}

fn line<'a>(report: &'a TestReport, attack: &str) -> &'a str {
    let key = format!("HOSTILE {attack}: ");
    report.output_tail.lines().find_map(|l| l.strip_prefix(key.as_str())).unwrap_or_else(|| {
        panic!("no result for {attack}: {}", report.output_tail);
    })
}

fn pids_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).replace('\0', " ").contains(needle) {
                out.push(pid);
            }
        }
    }
    out
}

#[tokio::test]
async fn a_hostile_conftest_is_contained() {
    let mut h = hostile_workspace();
    let victim = h.workspace.path().join("victim.txt");
    let before_state = file_state(&victim);
    let before_tree = common::tree_hashes(h.workspace.path());
    let listener = std::os::unix::net::UnixListener::bind(h.outside.path().join("host.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let leftovers =
        [h.home.join(".cargo/registry").join(&h.tag), h.home.join(&h.tag), Path::new("/dev/shm").join(&h.tag)];

    let report = run_tests(h.workspace.path()).await;

    let survivors = pids_with(&format!("sleep {}", h.sleep));
    for pid in &survivors {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), nix::sys::signal::Signal::SIGKILL);
    }
    let shm = unsafe { libc::shmget(h.shm_key, 0, 0) };
    if shm >= 0 {
        unsafe { libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()) };
    }
    let leaked: Vec<_> = leftovers.iter().filter(|p| p.exists()).cloned().collect();
    for p in &leaked {
        let _ = std::fs::remove_file(p);
    }
    let connected = listener.accept().is_ok();
    // Control: outside the sandbox the decoy's environment does show the secret.
    let decoy_env = std::fs::read(format!("/proc/{}/environ", h.decoy.id())).unwrap_or_default();
    assert!(String::from_utf8_lossy(&decoy_env).contains(&h.secret), "the decoy holds no secret");
    let _ = h.decoy.kill();
    let _ = h.decoy.wait();
    // What each attack got, for whoever reads the test log.
    eprintln!("{}", report.output_tail);
    eprintln!("{:#?}", report.mechanisms);

    assert!(report.passed, "the suite itself runs: {}", report.output_tail);
    // The workspace: a copy in the shadow may change, the real file never.
    assert_eq!(before_state, file_state(&victim), "the real workspace file changed: {}", report.output_tail);
    assert_eq!(before_tree, common::tree_hashes(h.workspace.path()), "the real workspace changed");
    assert!(line(&report, "chmod-shadow").starts_with("DONE"), "the shadow's own copy is the test's to change");
    // Without a PID namespace only a pids cgroup (root here) finds a process that left the session.
    if !switched_off(mechanisms::names::PID_NAMESPACE) || nix::unistd::geteuid().is_root() {
        assert!(survivors.is_empty(), "a process outlived the run: {survivors:?}");
    }
    if !switched_off(mechanisms::names::MOUNT_NAMESPACE) {
        assert!(
            !report.output_tail.contains(&h.secret),
            "a secret outside env_allowlist was read: {}",
            report.output_tail
        );
        assert!(!connected, "connected to a unix socket on the host: {}", line(&report, "unix-socket"));
        assert!(leaked.is_empty(), "wrote outside the sandbox: {leaked:?}\n{}", report.output_tail);
        for attack in ["chmod-real", "utime-real", "setxattr-real", "write-real", "truncate-real", "unix-socket"] {
            assert!(line(&report, attack).starts_with("refused"), "{attack}: {}", line(&report, attack));
        }
    }
    if !switched_off(mechanisms::names::IPC_NAMESPACE) {
        assert!(shm < 0, "a SysV shared memory segment was left in the host's IPC namespace");
    }
    let enforced = |name: &str| report.mechanisms.iter().any(|m| m.name == name && m.enforced);
    for name in [mechanisms::names::MOUNT_NAMESPACE, mechanisms::names::IPC_NAMESPACE, mechanisms::names::CAPABILITIES]
    {
        assert_eq!(enforced(name), !switched_off(name), "{name} as reported: {:?}", report.mechanisms);
    }
    assert_eq!(enforced(mechanisms::names::LANDLOCK), !switched_off(mechanisms::names::LANDLOCK));
    // The cache lies outside the workspace, so with a mount namespace the shadow is an overlay
    // (the real tree read-only beneath it), else copies; the attacks above hold either way.
    let layered = enforced(mechanisms::names::MOUNT_NAMESPACE) && !switched_off(mechanisms::names::LAYERED_SHADOW);
    let why = tinycoder::sandbox::layer_unavailable(
        h.workspace.path(),
        &WorkspacePaths::new(h.workspace.path(), "").cache_dir,
    );
    assert_eq!(
        enforced(mechanisms::names::LAYERED_SHADOW),
        layered,
        "shadow as reported: {:?} (no layer because: {why:?})",
        report.mechanisms
    );
}

/// The same attacks on a shadow of copies (the overlay switched off).
#[test]
fn a_hostile_conftest_is_contained_by_copies() {
    rerun_with_disabled("a_hostile_conftest_is_contained", "layered-shadow");
}

#[test]
fn a_hostile_conftest_is_contained_without_landlock() {
    rerun_with_disabled("a_hostile_conftest_is_contained", "landlock-writes");
}

/// With every namespace, Landlock and seccomp off, the real workspace still never changes (the shadow holds copies).
#[test]
fn the_workspace_survives_with_every_mechanism_off() {
    rerun_with_disabled(
        "a_hostile_conftest_is_contained",
        "landlock-writes,mount-namespace,ipc-namespace,pid-namespace,network-namespace,user-namespace,seccomp,capabilities",
    );
}

/// Run as root, the suite runs again as an unprivileged user (uid and gid 65534,
/// no groups, through `setpriv`), from a copy of this binary a user may execute:
/// the sandbox must hold there too, where it enters through a user namespace
/// instead of dropping root's capabilities. Needs `setpriv` and a system
/// `python3` with pytest (`scripts/setup.sh` installs python3-pytest).
#[test]
fn the_hostile_suite_holds_as_an_unprivileged_user() {
    if std::env::var_os(CHILD_MARK).is_some() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let pytest_ok = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(pytest_ok, "/usr/bin/python3 has no pytest: `apt-get install python3-pytest` (scripts/setup.sh does)");
    let dir = tempfile::Builder::new().prefix("tinycoder-user-").tempdir_in("/tmp").unwrap();
    let exe = dir.path().join("sandbox_hostile");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let names = [
        "a_hostile_conftest_is_contained",
        "a_hostile_conftest_is_contained_by_copies",
        "a_hostile_conftest_is_contained_without_landlock",
        "the_workspace_survives_with_every_mechanism_off",
    ];
    for name in names {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&exe)
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", dir.path())
            .env("TMPDIR", "/tmp")
            .current_dir(dir.path())
            .output()
            .expect("setpriv runs (util-linux)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{name} as uid 65534 failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

const TIOCSTI_CONFTEST: &str = r#"
import fcntl, os, termios
def inject(fd, text):
    for ch in text:
        fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
for name, opener in (("tty", lambda: os.open("/dev/tty", os.O_RDWR)), ("stdin", lambda: 0), ("stdout", lambda: 1), ("stderr", lambda: 2)):
    try:
        fd = opener()
        inject(fd, "echo TINYCODER_TYPED\n")
        print(f"TIOCSTI {name}: DONE", flush=True)
    except OSError as e:
        print(f"TIOCSTI {name}: refused {e}", flush=True)
"#;

/// The sandboxed run may not type into the terminal tinycoder runs in. The
/// test runs itself again as the leader of a new session whose controlling
/// terminal is a pty, so the sandbox's parent really has a terminal.
#[tokio::test]
async fn tiocsti_cannot_type_into_the_terminal() {
    if std::env::var_os("TINYCODER_PTY_CHILD").is_some() {
        return tiocsti_inside_the_pty().await;
    }
    let (mut master, mut slave) = (0, 0);
    let rc =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty");
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "tiocsti_cannot_type_into_the_terminal", "--nocapture", "--test-threads=1"])
        .env("TINYCODER_PTY_CHILD", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            libc::dup2(slave, 0);
            if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    unsafe { libc::close(slave) };
    unsafe { libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK) };
    let mut echoed = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = unsafe { libc::read(master, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        echoed.extend_from_slice(&buf[..n as usize]);
    }
    unsafe { libc::close(master) };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&echoed).contains("TINYCODER_TYPED"), "typed into the terminal:\n{stdout}");
}

async fn tiocsti_inside_the_pty() {
    common::hermetic_dirs();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("conftest.py"), TIOCSTI_CONFTEST).unwrap();
    std::fs::write(ws.path().join("test_ok.py"), "def test_ok():\n    assert True\n").unwrap();
    // Control: this process does have the terminal the attack is after.
    assert!(std::fs::OpenOptions::new().read(true).open("/dev/tty").is_ok(), "no controlling terminal to protect");
    let report = run_tests(ws.path()).await;
    assert!(report.passed, "{}", report.output_tail);
    assert!(report.output_tail.contains("TIOCSTI tty: refused"), "{}", report.output_tail);
    assert!(!report.output_tail.contains(": DONE"), "{}", report.output_tail);
    // Nothing typed arrived in this terminal's input queue either.
    unsafe { libc::fcntl(0, libc::F_SETFL, libc::O_NONBLOCK) };
    let mut buf = [0u8; 256];
    tokio::time::sleep(Duration::from_millis(100)).await;
    let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
    assert!(n <= 0, "input was typed into the terminal: {:?}", String::from_utf8_lossy(&buf[..n.max(0) as usize]));
}

#[test]
fn tiocsti_cannot_type_into_the_terminal_without_landlock() {
    rerun_with_disabled("tiocsti_cannot_type_into_the_terminal", "landlock-writes");
}
