//! The sandbox's own root filesystem, built in its mount namespace between
//! fork and exec, much as bubblewrap does: a tmpfs becomes the new root,
//! system folders are bound read-only, the shadow and the other writable
//! paths read-write (nosuid, nodev), /tmp, /dev/shm and $HOME are private
//! tmpfs mounts, /dev holds only null, zero, full, random and urandom, /proc
//! is a fresh one of the run's own PID namespace; then pivot_root into it and
//! detach the old root. Nothing else of the host is reachable: not /run (host
//! sockets), /var, /sys, /home, nor the real workspace.
//!
//! Every path is prepared here in the parent ([`MountPlan::build`]); the
//! child ([`MountPlan::apply`]) only makes syscalls on them.

use super::mechanisms::{check, WritePlan};
use std::collections::HashSet;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// System folders bound read-only when present (a symlink, as /bin on merged-/usr systems, is recreated as one).
pub const SYSTEM_DIRS: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"];
/// Device nodes of the minimal /dev.
pub const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/// Devices a sandboxed process may open for writing.
pub const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
/// Parts of the fresh /proc made read-only (kernel settings).
const PROC_READ_ONLY: &[&str] = &["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];
/// Paths never bound from the host (the sandbox has its own).
const NEVER_BOUND: &[&str] = &["/", "/dev", "/proc", "/sys"];

#[derive(Debug, Clone)]
enum Op {
    Dir(CString),
    File(CString),
    Symlink { target: CString, at: CString },
    Bind { src: CString, dst: CString, read_only: bool, devices: bool },
    RemountReadOnly(CString),
    Tmpfs { dst: CString, data: CString },
    Overlay { dst: CString, data: CString },
    Proc(CString),
    ProcReadOnly(CString),
}

/// The mount operations of one run, in order.
#[derive(Debug, Clone)]
pub struct MountPlan {
    root: CString,
    old_root: CString,
    ops: Vec<Op>,
    private_dirs: Vec<PathBuf>,
}

/// Settings of the private tmpfs mounts.
#[derive(Debug, Clone, Copy)]
pub struct TmpfsSize {
    /// Size limit of /tmp, /dev/shm and $HOME each, in MiB (0 = the kernel default, half of RAM).
    pub mb: u64,
}

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// The empty directory the new root's tmpfs is mounted on (in the run's own
/// mount namespace only; the host never sees anything mounted there).
fn new_root_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::geteuid().as_raw();
    let dir = std::env::temp_dir().join(format!(".tinycoder-newroot-{uid}"));
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && m.uid() == uid => Ok(dir),
        Ok(_) => Err(std::io::Error::other(format!("{} is not this user's directory", dir.display()))),
        Err(_) => {
            std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
            Ok(dir)
        }
    }
}

/// Mount points strictly beneath `dir`, from /proc/self/mountinfo (octal escapes undone).
fn submounts(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else { return vec![] };
    let unescape = |s: &str| -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 3 < b.len() {
                if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
            out.push(b[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(unescape(m)))
        .filter(|m| m != dir && m.starts_with(dir))
        .collect()
}

struct Builder {
    root: PathBuf,
    ops: Vec<Op>,
    made: HashSet<PathBuf>,
}

impl Builder {
    fn at(&self, p: &Path) -> PathBuf {
        self.root.join(p.strip_prefix("/").unwrap_or(p))
    }

    /// Directories from the new root down to `p` (inclusive when `inclusive`).
    fn dirs(&mut self, p: &Path, inclusive: bool) -> std::io::Result<()> {
        let mut cur = PathBuf::from("/");
        let comps: Vec<_> = p.components().skip(1).collect();
        let n = comps.len().saturating_sub(usize::from(!inclusive));
        for c in comps.into_iter().take(n) {
            cur.push(c);
            if self.made.insert(cur.clone()) {
                self.ops.push(Op::Dir(cstr(&self.at(&cur))?));
            }
        }
        Ok(())
    }

    fn bind(&mut self, src: &Path, dst: &Path, read_only: bool, devices: bool) -> std::io::Result<()> {
        let is_dir = std::fs::metadata(src)?.is_dir();
        if is_dir {
            self.dirs(dst, true)?;
        } else {
            self.dirs(dst, false)?;
            if self.made.insert(dst.to_path_buf()) {
                self.ops.push(Op::File(cstr(&self.at(dst))?));
            }
        }
        self.ops.push(Op::Bind { src: cstr(src)?, dst: cstr(&self.at(dst))?, read_only, devices });
        if read_only && is_dir {
            for m in submounts(src) {
                if let Ok(rel) = m.strip_prefix(src) {
                    self.ops.push(Op::RemountReadOnly(cstr(&self.at(&dst.join(rel)))?));
                }
            }
        }
        Ok(())
    }

    fn tmpfs(&mut self, dst: &Path, mode: &str, size: TmpfsSize) -> std::io::Result<()> {
        self.dirs(dst, true)?;
        let data = if size.mb > 0 { format!("mode={mode},size={}m", size.mb) } else { format!("mode={mode}") };
        self.ops.push(Op::Tmpfs { dst: cstr(&self.at(dst))?, data: CString::new(data).unwrap_or_default() });
        Ok(())
    }

    fn symlink(&mut self, target: &Path, at: &Path) -> std::io::Result<()> {
        self.dirs(at, false)?;
        if self.made.insert(at.to_path_buf()) {
            self.ops.push(Op::Symlink { target: cstr(target)?, at: cstr(&self.at(at))? });
        }
        Ok(())
    }
}

/// True for an absolute path made of plain names only (no `.`, no `..`), which stays inside
/// whatever folder it is joined under.
fn is_plain_absolute(p: &Path) -> bool {
    use std::path::Component;
    p.is_absolute() && p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

impl MountPlan {
    /// The plan for one run: `plan.dirs` read-write, `plan.readable` read-only,
    /// `plan.home` a private tmpfs; a fresh /proc when `proc_fs` (the run has its own PID namespace).
    pub fn build(plan: &WritePlan, proc_fs: bool, size: TmpfsSize) -> std::io::Result<Self> {
        let root = new_root_dir()?;
        let mut b = Builder { root: root.clone(), ops: Vec::new(), made: HashSet::new() };
        b.made.insert(PathBuf::from("/"));
        for d in SYSTEM_DIRS {
            let p = Path::new(d);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => b.symlink(&std::fs::read_link(p)?, p)?,
                Ok(m) if m.is_dir() => b.bind(p, p, true, false)?,
                _ => {}
            }
        }
        let mut private_dirs = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
        b.tmpfs(Path::new("/tmp"), "1777", size)?;
        b.tmpfs(Path::new("/dev"), "0755", size)?;
        for d in DEVICES {
            if Path::new(d).exists() {
                b.bind(Path::new(d), Path::new(d), false, true)?;
            }
        }
        b.tmpfs(Path::new("/dev/shm"), "1777", size)?;
        for (target, at) in [
            ("/proc/self/fd", "/dev/fd"),
            ("/proc/self/fd/0", "/dev/stdin"),
            ("/proc/self/fd/1", "/dev/stdout"),
            ("/proc/self/fd/2", "/dev/stderr"),
        ] {
            b.symlink(Path::new(target), Path::new(at))?;
        }
        if proc_fs {
            b.dirs(Path::new("/proc"), true)?;
            b.ops.push(Op::Proc(cstr(&b.at(Path::new("/proc")))?));
            for p in PROC_READ_ONLY {
                b.ops.push(Op::ProcReadOnly(cstr(&b.at(Path::new(p)))?));
            }
        }
        if let Some(home) = &plan.home {
            let sys = |h: &Path| SYSTEM_DIRS.iter().any(|d| Path::new(d).starts_with(h) || h.starts_with(d));
            let own = |n: &&str| *n == "/" && home == Path::new("/") || *n != "/" && home.starts_with(n);
            if is_plain_absolute(home) && !NEVER_BOUND.iter().any(own) && !sys(home) {
                b.tmpfs(home, "0700", size)?;
                private_dirs.push(home.clone());
            }
        }
        // Parents before children, so a writable cache inside a read-only toolchain folder is bound on top.
        let mut binds: Vec<(PathBuf, bool)> = Vec::new();
        let layered_at = plan.layer.as_ref().map(|l| l.at.clone());
        for (paths, read_only) in [(&plan.readable, true), (&plan.dirs, false)] {
            for p in paths {
                if layered_at.as_ref() == Some(p) {
                    continue;
                }
                let Ok(canon) = std::fs::canonicalize(p) else { continue };
                if NEVER_BOUND.iter().any(|n| canon == Path::new(n) || (*n != "/" && canon.starts_with(n))) {
                    tracing::warn!(path = %p.display(), "not bound into the sandbox (it has its own)");
                    continue;
                }
                // The name as configured becomes a link to the bound folder, unless it holds `.` or
                // `..`: joined under the new root, such a name could point out of it.
                if canon != *p && is_plain_absolute(p) {
                    let _ = b.symlink(&canon, p);
                }
                binds.push((canon, read_only));
            }
        }
        binds.sort_by(|a, b| a.0.components().count().cmp(&b.0.components().count()).then(a.0.cmp(&b.0)));
        let mut merged: Vec<(PathBuf, bool)> = Vec::new();
        for (p, read_only) in binds {
            match merged.last_mut() {
                // Named both readable and writable: writable.
                Some(last) if last.0 == p => last.1 &= read_only,
                _ => merged.push((p, read_only)),
            }
        }
        for (p, read_only) in merged {
            b.bind(&p, &p, read_only, false)?;
        }
        if let Some(layer) = &plan.layer {
            // Mounted last: nothing is bound beneath the shadow tree.
            b.dirs(&layer.at, true)?;
            let user_ns = !nix::unistd::geteuid().is_root();
            let data = CString::new(layer.mount_data(user_ns)).map_err(std::io::Error::other)?;
            b.ops.push(Op::Overlay { dst: cstr(&b.at(&layer.at))?, data });
        }
        let old = Path::new("/.oldroot");
        b.dirs(old, true)?;
        Ok(Self { root: cstr(&root)?, old_root: cstr(&b.at(old))?, ops: b.ops, private_dirs })
    }

    /// The private tmpfs directories (writable inside, gone after the run).
    pub fn private_dirs(&self) -> &[PathBuf] {
        &self.private_dirs
    }

    /// A small plan for the capability probe: system folders only.
    pub fn probe(proc_fs: bool) -> std::io::Result<Self> {
        Self::build(&WritePlan::default(), proc_fs, TmpfsSize { mb: 1 })
    }

    /// Child side: builds the new root and pivots into it.
    pub fn apply(&self) -> std::io::Result<()> {
        use libc::{MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT};
        let null = std::ptr::null::<libc::c_char>();
        let mnt = |src: *const libc::c_char,
                   dst: &CString,
                   fstype: *const libc::c_char,
                   flags: libc::c_ulong,
                   data: *const libc::c_char| {
            check(unsafe { libc::mount(src, dst.as_ptr(), fstype, flags, data.cast()) })
        };
        // Nothing mounted here may propagate back to the host.
        check(unsafe { libc::mount(null, c"/".as_ptr(), null, MS_REC | MS_PRIVATE, std::ptr::null()) })?;
        mnt(c"tmpfs".as_ptr(), &self.root, c"tmpfs".as_ptr(), MS_NOSUID | MS_NODEV, c"mode=0755".as_ptr())?;
        for op in &self.ops {
            match op {
                Op::Dir(p) => {
                    if unsafe { libc::mkdir(p.as_ptr(), 0o755) } < 0
                        && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Op::File(p) => {
                    let fd = unsafe { libc::open(p.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o644) };
                    if fd >= 0 {
                        unsafe { libc::close(fd) };
                    } else if std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Op::Symlink { target, at } => {
                    if unsafe { libc::symlink(target.as_ptr(), at.as_ptr()) } < 0
                        && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Op::Bind { src, dst, read_only, devices } => {
                    mnt(src.as_ptr(), dst, null, MS_BIND | MS_REC, null)?;
                    let mut flags = MS_REMOUNT | MS_BIND | MS_NOSUID | locked_flags(dst)?;
                    if *read_only {
                        flags |= MS_RDONLY;
                    }
                    if !*devices {
                        flags |= MS_NODEV;
                    }
                    mnt(null, dst, null, flags, null)?;
                }
                Op::RemountReadOnly(dst) => {
                    let flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | locked_flags(dst)?;
                    // A submount that vanished or cannot be changed stays as it is; one
                    // that can be read back as still writable is an error.
                    if mnt(null, dst, null, flags, null).is_err() && locked_flags(dst)? & MS_RDONLY == 0 {
                        return Err(std::io::Error::from_raw_os_error(libc::EPERM));
                    }
                }
                Op::Tmpfs { dst, data } => {
                    mnt(c"tmpfs".as_ptr(), dst, c"tmpfs".as_ptr(), MS_NOSUID | MS_NODEV, data.as_ptr())?;
                }
                Op::Overlay { dst, data } => {
                    mnt(c"overlay".as_ptr(), dst, c"overlay".as_ptr(), MS_NOSUID | MS_NODEV, data.as_ptr())?;
                }
                Op::Proc(dst) => {
                    mnt(c"proc".as_ptr(), dst, c"proc".as_ptr(), MS_NOSUID | MS_NODEV | MS_NOEXEC, null)?;
                }
                Op::ProcReadOnly(dst) => {
                    // Absent on some kernels (no /proc/bus): nothing to protect then.
                    if mnt(dst.as_ptr(), dst, null, MS_BIND, null).is_ok() {
                        mnt(null, dst, null, MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(dst)?, null)?;
                    }
                }
            }
        }
        let rc = unsafe { libc::syscall(libc::SYS_pivot_root, self.root.as_ptr(), self.old_root.as_ptr()) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        check(unsafe { libc::chdir(c"/".as_ptr()) })?;
        check(unsafe { libc::umount2(c"/.oldroot".as_ptr(), libc::MNT_DETACH) })?;
        unsafe { libc::rmdir(c"/.oldroot".as_ptr()) };
        // The new root itself (a tmpfs holding only mount points) becomes read-only.
        let ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
        check(unsafe { libc::mount(null, c"/".as_ptr(), null, ro, std::ptr::null()) })
    }
}

/// The flags a bind remount must keep (in a user namespace the kernel refuses
/// to clear nosuid, nodev, noexec, read-only or the atime mode it inherited).
fn locked_flags(dst: &CString) -> std::io::Result<libc::c_ulong> {
    // The kernel's struct statfs on 64-bit Linux (the libc crate's has no f_flags).
    #[repr(C)]
    struct KernelStatfs {
        counts: [u64; 7],
        fsid: [i32; 2],
        namelen: i64,
        frsize: i64,
        flags: i64,
        spare: [i64; 4],
    }
    let mut st = KernelStatfs { counts: [0; 7], fsid: [0; 2], namelen: 0, frsize: 0, flags: 0, spare: [0; 4] };
    let rc = unsafe { libc::syscall(libc::SYS_statfs, dst.as_ptr(), &mut st as *mut KernelStatfs) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let f = st.flags as libc::c_ulong;
    let map: [(libc::c_ulong, libc::c_ulong); 7] = [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(map.iter().filter(|(st, _)| f & st != 0).fold(0, |acc, (_, ms)| acc | ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_dot_dot_are_bound_by_their_real_path_only() {
        let outside = tempfile::tempdir().unwrap();
        let inner = outside.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        // `/…/inner/../../../..` names `/` the long way; joined under the new root it would climb out.
        let climbing = inner.join("../../../../../../../../tmp");
        let plan = WritePlan { readable: vec![climbing], ..WritePlan::default() };
        let mount = MountPlan::build(&plan, false, TmpfsSize { mb: 1 }).unwrap();
        let root = Path::new(mount.root.to_str().unwrap()).to_path_buf();
        for op in &mount.ops {
            if let Op::Symlink { at, .. } = op {
                let at = Path::new(at.to_str().unwrap());
                assert!(is_plain_absolute(at) && at.starts_with(&root), "a link made outside the new root: {at:?}");
            }
        }
        assert!(is_plain_absolute(Path::new("/usr/lib")));
        assert!(!is_plain_absolute(Path::new("/usr/../etc")) && !is_plain_absolute(Path::new("usr")));
    }
}
