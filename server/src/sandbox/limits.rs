//! What one sandboxed run is allowed: resource limits and isolation wishes.

use crate::config::SandboxConfig;
use std::path::PathBuf;
use std::time::Duration;

/// Resource limits applied to a sandboxed process (0 = no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLimits {
    /// RLIMIT_CPU, seconds.
    pub cpu_s: u64,
    /// RLIMIT_AS, bytes.
    pub address_space_bytes: u64,
    /// RLIMIT_FSIZE, bytes.
    pub file_size_bytes: u64,
    /// Most processes at once (cgroup pids.max or RLIMIT_NPROC).
    pub max_processes: u64,
}

impl ResourceLimits {
    /// Limits from `[sandbox]`.
    pub fn from_config(c: &SandboxConfig) -> Self {
        Self {
            cpu_s: c.cpu_time_s,
            address_space_bytes: c.address_space_mb.saturating_mul(1024 * 1024),
            file_size_bytes: c.file_size_mb.saturating_mul(1024 * 1024),
            max_processes: c.max_processes,
        }
    }
}

/// Everything the runner needs to start one process.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Program (looked up in the allowlisted PATH).
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory (inside the shadow tree).
    pub cwd: PathBuf,
    /// The complete environment (already filtered by the allowlist).
    pub env: Vec<(String, String)>,
    /// Wall-clock limit for the whole process group.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// Bytes of stdout and of stderr kept.
    pub output_cap: usize,
    /// Where writes are allowed under write isolation.
    pub writable: super::mechanisms::WritePlan,
    /// Size of each private tmpfs (/tmp, /dev/shm, $HOME) in the mount namespace, MiB (0 = kernel default).
    pub tmpfs_size_mb: u64,
    /// Refuse to start without network isolation.
    pub require_network_isolation: bool,
    /// Refuse to start without write isolation.
    pub require_write_isolation: bool,
    /// Where each line of stdout also goes as it is written (a per-test time limit watches it).
    pub stdout_lines: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

impl RunSpec {
    /// A spec for `program args` in `cwd` with limits, environment and requirements from config.
    pub fn from_config(c: &SandboxConfig, program: &str, args: &[String], cwd: PathBuf, timeout: Duration) -> Self {
        let env = allowlisted_env(&c.env_allowlist);
        let home = env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| PathBuf::from(v));
        Self {
            program: program.to_string(),
            args: args.to_vec(),
            env,
            writable: super::mechanisms::WritePlan {
                dirs: vec![cwd.clone()],
                readable: c.readable_paths.iter().filter_map(|p| expand_path(p)).collect(),
                home,
                layer: None,
            },
            tmpfs_size_mb: c.tmpfs_size_mb,
            cwd,
            timeout,
            kill_grace: Duration::from_millis(c.kill_grace_ms),
            limits: ResourceLimits::from_config(c),
            output_cap: (c.output_cap_kb as usize).saturating_mul(1024),
            require_network_isolation: c.require_network_isolation,
            require_write_isolation: c.require_write_isolation,
            stdout_lines: None,
        }
    }

    /// A spec whose cwd and writable tree are `shadow`, with the shadow's temp dir as TMPDIR.
    pub fn in_shadow(
        c: &SandboxConfig,
        program: &str,
        args: &[String],
        shadow: &super::ShadowWorkspace,
        timeout: Duration,
    ) -> Result<Self, super::SandboxError> {
        let mut spec = Self::from_config(c, program, args, shadow.path().to_path_buf(), timeout);
        let tmp = shadow.temp_dir()?;
        spec.set_env("TMPDIR", &tmp.to_string_lossy());
        spec.writable.dirs.push(tmp);
        spec.writable.layer = shadow.layer().cloned();
        spec.writable.dirs.extend(c.writable_paths.iter().filter_map(|p| expand_path(p)));
        Ok(spec)
    }

    /// Sets (or replaces) one environment variable (`HOME` also moves the private home).
    /// Puts `dir` first on the run's `PYTHONPATH` (built-in pytest plugins load from there).
    pub fn prepend_python_path(&mut self, dir: &std::path::Path) {
        let inherited = self.env.iter().find(|(k, _)| k == "PYTHONPATH").map(|(_, v)| v.clone());
        let path = match inherited {
            Some(p) if !p.is_empty() => format!("{}:{p}", dir.display()),
            _ => dir.display().to_string(),
        };
        self.set_env("PYTHONPATH", &path);
    }

    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
        if key == "HOME" {
            self.writable.home = Some(PathBuf::from(value));
        }
    }
}

/// The current process's variables named in `allow`.
pub fn allowlisted_env(allow: &[String]) -> Vec<(String, String)> {
    allow.iter().filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v))).collect()
}

/// Expands `~` and `$VAR` in a configured path; None when a variable is unset.
pub fn expand_path(raw: &str) -> Option<PathBuf> {
    let mut s = raw.to_string();
    if let Some(rest) = s.strip_prefix('~') {
        s = format!("{}{}", std::env::var("HOME").ok()?, rest);
    }
    if let Some(rest) = s.strip_prefix('$') {
        let end = rest.find('/').unwrap_or(rest.len());
        let value = std::env::var(&rest[..end]).ok()?;
        s = format!("{}{}", value, &rest[end..]);
    }
    Some(PathBuf::from(s))
}
