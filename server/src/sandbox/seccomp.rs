//! A small seccomp filter (classic BPF, built in the parent, installed last
//! before exec) for what the namespaces and Landlock leave open:
//!
//! - `ioctl(fd, TIOCSTI | TIOCLINUX)`: typing into a terminal (EPERM), in case
//!   a terminal fd reaches the run some other way than the controlling tty;
//! - `unshare` / `clone` with `CLONE_NEWUSER` (EPERM): a test making its own
//!   user namespace would get capabilities back inside it (as root, over every
//!   root-owned file it can see), and `clone3` (ENOSYS: its flags are behind a
//!   pointer the filter cannot read; libc falls back to `clone`);
//! - any other syscall ABI (x32, i386 through `int 0x80`): ENOSYS, so none of
//!   the above can be reached under another syscall number.

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0: u32 = 16;
const OFF_ARG1: u32 = 24;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: u32 = 0;

/// Whether this architecture has a filter.
pub fn supported() -> bool {
    AUDIT_ARCH != 0
}

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt: 0, jf: 0, k }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter program (prepared in the parent).
pub fn filter() -> Vec<libc::sock_filter> {
    let enosys = RET_ERRNO | libc::ENOSYS as u32;
    let eperm = RET_ERRNO | libc::EPERM as u32;
    let mut p =
        vec![stmt(LD_W_ABS, OFF_ARCH), jump(JEQ_K, AUDIT_ARCH, 1, 0), stmt(RET_K, enosys), stmt(LD_W_ABS, OFF_NR)];
    if cfg!(target_arch = "x86_64") {
        // x32 syscall numbers have bit 30 set.
        p.extend([jump(JGE_K, 0x4000_0000, 0, 1), stmt(RET_K, enosys)]);
    }
    p.extend([
        jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1),
        stmt(RET_K, enosys),
        jump(JEQ_K, libc::SYS_ioctl as u32, 0, 5),
        stmt(LD_W_ABS, OFF_ARG1),
        jump(JEQ_K, libc::TIOCSTI as u32, 2, 0),
        jump(JEQ_K, libc::TIOCLINUX as u32, 1, 0),
        stmt(RET_K, RET_ALLOW),
        stmt(RET_K, eperm),
        jump(JEQ_K, libc::SYS_unshare as u32, 1, 0),
        jump(JEQ_K, libc::SYS_clone as u32, 0, 3),
        stmt(LD_W_ABS, OFF_ARG0),
        jump(JSET_K, libc::CLONE_NEWUSER as u32, 0, 1),
        stmt(RET_K, eperm),
        stmt(RET_K, RET_ALLOW),
    ]);
    p
}

/// Child side: installs `prog` (no_new_privs must be set).
pub fn install(prog: &[libc::sock_filter]) -> std::io::Result<()> {
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
    let arg = &fprog as *const libc::sock_fprog as libc::c_ulong;
    super::mechanisms::check(super::mechanisms::prctl(
        libc::PR_SET_SECCOMP,
        libc::SECCOMP_MODE_FILTER as libc::c_ulong,
        arg,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_program_ends_in_a_return_and_every_jump_lands_inside() {
        let p = super::filter();
        assert_eq!(p.last().map(|i| i.code), Some(super::RET_K));
        for (i, ins) in p.iter().enumerate() {
            if ins.code & 0x07 == 0x05 {
                assert!(i + 1 + (ins.jt.max(ins.jf) as usize) < p.len(), "jump at {i} leaves the program");
            }
        }
    }
}
