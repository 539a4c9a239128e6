//! Landlock through its three syscalls, applied in the child after the mount
//! namespace's new root is in place.
//!
//! Why not the `landlock` crate: a ruleset's rules name inodes, and the
//! sandbox's root is only built between fork and exec, so the rules must be
//! added there, where only raw syscalls on data prepared in the parent are
//! safe (the crate allocates while opening paths). The ABI is small: a
//! ruleset attribute (handled filesystem and network accesses, scopes), one
//! rule type (path beneath), and restrict_self. Best effort: only the access
//! rights and scopes the running kernel's ABI knows are handled.

use std::ffi::CString;
use std::path::PathBuf;

/// The highest ABI this code knows (6: signal and abstract unix socket scopes).
pub const MAX_ABI: u32 = 6;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_int = 1;

const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
/// REMOVE_DIR .. MAKE_SYM (ABI 1).
const ABI1_ALL: u64 = (1 << 13) - 1;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;
const IOCTL_DEV: u64 = 1 << 15;
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The kernel's Landlock ABI version (0 = none).
pub fn abi_version() -> u32 {
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v < 0 {
        0
    } else {
        v as u32
    }
}

/// A ruleset to build in the child: read/execute beneath `read`, everything
/// beneath `write` (dirs) or read/write/truncate on `write` files.
#[derive(Debug, Clone)]
pub struct LandlockPlan {
    attr_size: usize,
    handled_fs: u64,
    handled_net: u64,
    scoped: u64,
    read: Vec<CString>,
    write_dirs: Vec<CString>,
    write_files: Vec<CString>,
}

impl LandlockPlan {
    /// Prepares the rules for `abi` (capped at [`MAX_ABI`]). `deny_tcp`: handle
    /// TCP bind/connect (ABI 4) so none is allowed (when there is no network namespace).
    pub fn new(abi: u32, read: &[PathBuf], write: &[PathBuf], deny_tcp: bool) -> Self {
        let abi = abi.min(MAX_ABI);
        let mut fs = ABI1_ALL;
        if abi >= 2 {
            fs |= REFER;
        }
        if abi >= 3 {
            fs |= TRUNCATE;
        }
        if abi >= 5 {
            fs |= IOCTL_DEV;
        }
        let net = if abi >= 4 && deny_tcp { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 };
        let scoped = if abi >= 6 { SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL } else { 0 };
        let attr_size = match abi {
            0..=3 => 8,
            4 | 5 => 16,
            _ => 24,
        };
        let c = |p: &PathBuf| CString::new(p.as_os_str().as_encoded_bytes()).ok();
        let (mut write_dirs, mut write_files) = (Vec::new(), Vec::new());
        for p in write {
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => write_dirs.extend(c(p)),
                Ok(_) => write_files.extend(c(p)),
                Err(_) => {}
            }
        }
        Self {
            attr_size,
            handled_fs: fs,
            handled_net: net,
            scoped,
            read: read.iter().filter_map(c).collect(),
            write_dirs,
            write_files,
        }
    }

    /// Adds writable paths known to be directories in the child's view (tmpfs
    /// mounts made between fork and exec, which the parent cannot stat).
    pub fn add_write_dirs(&mut self, dirs: &[PathBuf]) {
        self.write_dirs.extend(dirs.iter().filter_map(|p| CString::new(p.as_os_str().as_encoded_bytes()).ok()));
    }

    /// Adds writable files known in the child's view (device nodes of the new /dev).
    pub fn add_write_files(&mut self, files: &[PathBuf]) {
        self.write_files.extend(files.iter().filter_map(|p| CString::new(p.as_os_str().as_encoded_bytes()).ok()));
    }

    /// Child side: creates the ruleset, adds the rules (paths missing in the
    /// child's view are skipped) and restricts the calling thread.
    pub fn apply(&self) -> std::io::Result<()> {
        let attr = RulesetAttr {
            handled_access_fs: self.handled_fs,
            handled_access_net: self.handled_net,
            scoped: self.scoped,
        };
        let ruleset = unsafe {
            libc::syscall(libc::SYS_landlock_create_ruleset, &attr as *const RulesetAttr, self.attr_size, 0u32)
        };
        if ruleset < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let ruleset = ruleset as libc::c_int;
        let result = self.add_rules_and_restrict(ruleset);
        unsafe { libc::close(ruleset) };
        result
    }

    fn add_rules_and_restrict(&self, ruleset: libc::c_int) -> std::io::Result<()> {
        let read = (EXECUTE | READ_FILE | READ_DIR) & self.handled_fs;
        let file_rw = (READ_FILE | WRITE_FILE | TRUNCATE) & self.handled_fs;
        for p in &self.read {
            add_rule(ruleset, p, read)?;
        }
        for p in &self.write_dirs {
            add_rule(ruleset, p, self.handled_fs & !IOCTL_DEV)?;
        }
        for p in &self.write_files {
            add_rule(ruleset, p, file_rw)?;
        }
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

fn add_rule(ruleset: libc::c_int, path: &CString, access: u64) -> std::io::Result<()> {
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        // Not there in this view: nothing to allow.
        return Ok(());
    }
    let attr = PathBeneathAttr { allowed_access: access, parent_fd: fd };
    let rc = unsafe {
        libc::syscall(libc::SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &attr as *const PathBeneathAttr, 0u32)
    };
    let err = std::io::Error::last_os_error();
    unsafe { libc::close(fd) };
    if rc < 0 {
        return Err(err);
    }
    Ok(())
}
