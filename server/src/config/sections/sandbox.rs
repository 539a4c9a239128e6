//! `[sandbox]` and `[permissions]`: test runs and shell commands.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[sandbox]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// Test command override (empty = detect).
    pub test_command: String,
    /// Seconds before a sandboxed test run's process group is killed.
    pub wall_timeout_s: u64,
    /// Seconds before a sandboxed shell command is killed.
    pub shell_timeout_s: u64,
    /// Milliseconds between SIGTERM and SIGKILL at a timeout.
    pub kill_grace_ms: u64,
    /// RLIMIT_CPU in seconds (0 = no limit).
    pub cpu_time_s: u64,
    /// RLIMIT_AS in MiB (0 = no limit).
    pub address_space_mb: u64,
    /// RLIMIT_FSIZE in MiB (0 = no limit).
    pub file_size_mb: u64,
    /// Most processes of one run (cgroup pids.max, else RLIMIT_NPROC).
    pub max_processes: u64,
    /// KiB of stdout and of stderr kept per run.
    pub output_cap_kb: u64,
    /// Environment variables passed to sandboxed processes.
    pub env_allowlist: Vec<String>,
    /// Extra directories writable under write isolation (`~` and `$VAR` expanded).
    pub writable_paths: Vec<String>,
    /// Refuse to run when no network isolation can be enforced.
    pub require_network_isolation: bool,
    /// Refuse to run when write isolation (Landlock) cannot be enforced.
    pub require_write_isolation: bool,
}

impl SandboxConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.wall_timeout_s == 0 {
            return Err(Invalid::new("sandbox.wall_timeout_s", 0, "a positive number of seconds"));
        }
        if self.shell_timeout_s == 0 {
            return Err(Invalid::new("sandbox.shell_timeout_s", 0, "a positive number of seconds"));
        }
        if self.max_processes == 0 {
            return Err(Invalid::new("sandbox.max_processes", 0, "a positive number of processes"));
        }
        if self.output_cap_kb == 0 {
            return Err(Invalid::new("sandbox.output_cap_kb", 0, "a positive number of KiB"));
        }
        Ok(())
    }
}

/// `[permissions]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// Decision for a dangerous command when nobody can be asked: "deny" or "allow".
    pub non_interactive: String,
    /// Paths a command may write even though they lie outside the workspace.
    pub harmless_write_targets: Vec<String>,
    /// The rules that make a command dangerous.
    pub rules: Vec<PermissionRule>,
}

/// One `[[permissions.rules]]` entry: a command is dangerous when its program matches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionRule {
    /// Short rule name shown to the user.
    pub name: String,
    /// Program base names this rule applies to.
    pub programs: Vec<String>,
    /// Regex over the space-joined arguments; absent = any arguments.
    #[serde(default)]
    pub args_match: Option<String>,
    /// Only when the command's output is piped into one of these programs.
    #[serde(default)]
    pub piped_into: Vec<String>,
    /// Only when a non-option argument names a path outside the workspace.
    #[serde(default)]
    pub path_outside_workspace: bool,
    /// Which arguments `path_outside_workspace` looks at: "all" (default) or "last" (the destination).
    #[serde(default)]
    pub path_args: String,
    /// Why it is dangerous (shown to the user).
    pub reason: String,
}

impl PermissionsConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !matches!(self.non_interactive.as_str(), "deny" | "allow") {
            return Err(Invalid::new("permissions.non_interactive", &self.non_interactive, "\"deny\" or \"allow\""));
        }
        for rule in &self.rules {
            if let Some(re) = &rule.args_match {
                if let Err(e) = regex::Regex::new(re) {
                    return Err(Invalid::new(
                        &format!("permissions.rules[{}].args_match", rule.name),
                        re,
                        &format!("a valid regex ({e})"),
                    ));
                }
            }
            if !matches!(rule.path_args.as_str(), "" | "all" | "last") {
                return Err(Invalid::new(
                    &format!("permissions.rules[{}].path_args", rule.name),
                    &rule.path_args,
                    "\"all\" or \"last\"",
                ));
            }
            if rule.programs.is_empty() {
                return Err(Invalid::new(
                    &format!("permissions.rules[{}].programs", rule.name),
                    "[]",
                    "at least one program",
                ));
            }
        }
        Ok(())
    }
}
