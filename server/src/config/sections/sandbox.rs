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
    /// Seconds one pytest test may run before it fails as hanging (0 = only the run's limit).
    pub test_timeout_s: u64,
    /// Seconds a hanging test is given to stop after its failure before the run is ended.
    pub test_timeout_grace_s: u64,
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
    /// Bytes of a test run's output kept for reports and the coder (its end).
    pub output_tail_bytes: u64,
    /// Environment variables passed to sandboxed processes.
    pub env_allowlist: Vec<String>,
    /// Extra directories writable under write isolation (`~` and `$VAR` expanded).
    pub writable_paths: Vec<String>,
    /// Paths outside the system folders visible read-only in the sandbox's mount namespace (toolchains).
    pub readable_paths: Vec<String>,
    /// Size of each private tmpfs (/tmp, /dev/shm, $HOME) in the sandbox, MiB (0 = kernel default).
    pub tmpfs_size_mb: u64,
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

/// The effects a command can have, as `[permissions]` names them.
pub const EFFECTS: &[&str] = &[
    "destroys-data",
    "escalates-privileges",
    "reaches-network",
    "writes-outside-workspace",
    "changes-permissions",
    "defines-later-code",
    "changes-system",
    "unanalysable",
    "unproven",
];

/// `[permissions]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// Decision for a dangerous command when nobody can be asked: "deny" or "allow".
    pub non_interactive: String,
    /// Paths plain writes (redirects, tee) may target even though they lie outside the workspace.
    pub harmless_write_targets: Vec<String>,
    /// The effects (of [`EFFECTS`]) that make a command dangerous.
    pub effects: Vec<String>,
    /// Programs whose operands are written: "last" (the destination) or "all".
    pub writers: std::collections::BTreeMap<String, String>,
    /// Writers that open an existing destination and write into it rather than replace it
    /// (tee, cp): for these, `harmless_write_targets` stay harmless as destinations.
    pub in_place_writers: Vec<String>,
    /// Shell variables whose value is code that runs later.
    pub code_variables: Vec<String>,
    /// Rules on the paths a command writes (or reads).
    pub path_rules: Vec<PathRule>,
    /// The rules on programs and their arguments.
    pub rules: Vec<PermissionRule>,
    /// The programs (with their arguments) known to be harmless: a command runs unasked only
    /// when every part of it is one of these (with the `unproven` effect on).
    pub allow: Vec<AllowRule>,
    /// Variables a command may set unasked (`NAME=value cmd`, `export`, `env NAME=value`).
    pub safe_variables: Vec<String>,
    /// Folders where a program named by its path counts as the program of its base name.
    pub program_dirs: Vec<String>,
}

/// One `[[permissions.allow]]` entry: a program and the arguments that keep it harmless.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AllowRule {
    /// Short name shown in reasons.
    pub name: String,
    /// Program base names.
    pub programs: Vec<String>,
    /// The arguments must begin with one of these (words separated by spaces); empty = any.
    #[serde(default)]
    pub subcommands: Vec<String>,
    /// Regex over one argument (after the subcommand) → why that argument is not harmless.
    #[serde(default)]
    pub forbid: std::collections::BTreeMap<String, String>,
    /// The most operands (arguments not starting with `-`) after the subcommand.
    #[serde(default)]
    pub max_operands: Option<usize>,
    /// Options that take a value (the next argument), so that it is not read as an operand.
    #[serde(default)]
    pub value_flags: Vec<String>,
    /// What the first operand is: "" (an argument like the others), "script" (a file of code:
    /// it must lie in the workspace, and the line must write nothing), "code" (program text
    /// checked by `code_allowed` / `code_forbid`; so is every value of a `code_flags` option).
    #[serde(default)]
    pub operand: String,
    /// Options whose value is program text (`sed -e`); when one is given, no operand is code.
    #[serde(default)]
    pub code_flags: Vec<String>,
    /// Program text must match one of these regexes (none = any).
    #[serde(default)]
    pub code_allowed: Vec<String>,
    /// Regex over the program text → why that text is not harmless.
    #[serde(default)]
    pub code_forbid: std::collections::BTreeMap<String, String>,
    /// It runs the workspace's code (tests, builds, scripts): nothing else in the line may
    /// write a file before it, since what was written could be what runs.
    #[serde(default)]
    pub runs_workspace_code: bool,
    /// It runs the command that follows its options and `operands` (timeout, nice, env, xargs);
    /// that command is checked on its own.
    #[serde(default)]
    pub wrapper: bool,
    /// Operands of a wrapper before the wrapped command (`timeout DURATION`).
    #[serde(default)]
    pub operands: usize,
    /// The wrapped command gets more arguments at run time (xargs): only a program that is
    /// harmless with any arguments may be wrapped.
    #[serde(default)]
    pub appends_args: bool,
    /// Options whose value is a path the program writes (`gcc -o FILE`, `cmake -B DIR`): the
    /// path must lie in the workspace, match no `path_rules` entry and not be an existing file.
    #[serde(default)]
    pub output_flags: Vec<String>,
    /// It writes files into its working directory (`gcc -c main.c` writes main.o), which must
    /// be known to lie in the workspace.
    #[serde(default)]
    pub writes_cwd: bool,
    /// When given, every option (an argument starting with `-`) must match one of these
    /// regexes; for a wrapper, the options before the wrapped command.
    #[serde(default)]
    pub options: Vec<String>,
    /// The first operand is a path the program writes (`tar czf NEW.tgz`, `zip -r NEW.zip`),
    /// checked like an `output_flags` value; it must also match this regex.
    #[serde(default)]
    pub output_operand: Option<String>,
    /// Options whose value is the folder the program writes into (`tar -C DIR`); without one,
    /// its working directory.
    #[serde(default)]
    pub folder_flags: Vec<String>,
    /// It fills a folder with files it does not name (an archive's members), replacing any
    /// there: the folder must lie in the workspace and be empty or missing, and the command
    /// must be alone in its line (a `cd` before it aside). The first word after the subcommand
    /// is its input (`tar xzf ARCHIVE`), never an option.
    #[serde(default)]
    pub fills_folder: bool,
    /// It makes a symbolic link (`ln -s TARGET LINK`): LINK must be a new path in the
    /// workspace and TARGET, read from LINK's folder, an existing path in the workspace.
    #[serde(default)]
    pub makes_link: bool,
    /// Variables that may be set in front of it (`CARGO_TARGET_DIR=DIR cargo build`, or through
    /// `env`) whose value is a path it writes, checked like an `output_flags` value.
    #[serde(default)]
    pub path_variables: Vec<String>,
    /// Folders `export PATH=…` may add in front of or after `$PATH` (`$HOME` and `~` stand for
    /// the home folder); `$PATH` itself must stay, once.
    #[serde(default)]
    pub path_dirs: Vec<String>,
    /// The program text (`operand = "code"`) is Python, proven harmless by these lists.
    #[serde(default)]
    pub python: Option<PythonRules>,
}

/// What inline Python (`python3 -c CODE`) may use: the code must parse, hold only
/// expressions and imports (no assignment, definition, loop or lambda), import only
/// `modules`, and name only `names` (builtins, and `module.attr` of an imported module;
/// `module.*` for all of one), `methods` (after any other value) and `keywords`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PythonRules {
    /// Modules `import NAME` may load.
    pub modules: Vec<String>,
    /// Builtins and module attributes the code may name (call or read).
    pub names: Vec<String>,
    /// Methods and attributes of other values (`.read()`, `.items()`).
    pub methods: Vec<String>,
    /// Keyword argument names (`sep=`, `indent=`).
    pub keywords: Vec<String>,
    /// Calls that open a file: allowed only with a literal mode (second argument or
    /// `mode=`) matching `read_mode`, or none.
    pub openers: Vec<String>,
    /// Regex over an opener's mode (its text without the quotes).
    pub read_mode: String,
}

/// One `[[permissions.path_rules]]` entry: a written (or read) path that has an effect.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PathRule {
    /// Short rule name shown to the user.
    pub name: String,
    /// Regexes over the resolved absolute path.
    pub paths: Vec<String>,
    /// "write" (written paths only) or "any" (read paths too).
    pub access: String,
    /// The effect (one of [`EFFECTS`]).
    pub effect: String,
    /// Why it is dangerous (shown to the user).
    pub reason: String,
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
    /// Regex over the space-joined arguments; when it matches, the rule does not apply (the
    /// harmless form of a dangerous program: `chmod +x FILE`, `git restore --staged FILE`).
    #[serde(default)]
    pub args_unless: Option<String>,
    /// Only when the command's output is piped into one of these programs.
    #[serde(default)]
    pub piped_into: Vec<String>,
    /// Only when a non-option argument names a path outside the workspace.
    #[serde(default)]
    pub path_outside_workspace: bool,
    /// Which arguments `path_outside_workspace` looks at: "all" (default) or "last" (the destination).
    #[serde(default)]
    pub path_args: String,
    /// The effect it detects (one of [`EFFECTS`]).
    pub effect: String,
    /// Why it is dangerous (shown to the user).
    pub reason: String,
}

fn check_effect(key: &str, effect: &str) -> Result<(), Invalid> {
    if EFFECTS.contains(&effect) {
        Ok(())
    } else {
        Err(Invalid::new(key, format!("{effect:?}"), &format!("one of {}", EFFECTS.join(", "))))
    }
}

/// Parses `re` without compiling it: every command starts by loading the configuration, and
/// compiling each rule's patterns here cost tens of milliseconds before any work was done.
fn check_regex(key: &str, re: &str) -> Result<(), Invalid> {
    regex_syntax::Parser::new()
        .parse(re)
        .map(|_| ())
        .map_err(|e| Invalid::new(key, re, &format!("a valid regex ({e})")))
}

impl PermissionsConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !matches!(self.non_interactive.as_str(), "deny" | "allow") {
            return Err(Invalid::new("permissions.non_interactive", &self.non_interactive, "\"deny\" or \"allow\""));
        }
        for e in &self.effects {
            check_effect("permissions.effects", e)?;
        }
        for (program, which) in &self.writers {
            if !matches!(which.as_str(), "all" | "last") {
                return Err(Invalid::new(&format!("permissions.writers.{program}"), which, "\"all\" or \"last\""));
            }
        }
        for rule in &self.path_rules {
            let key = |k: &str| format!("permissions.path_rules[{}].{k}", rule.name);
            for re in &rule.paths {
                check_regex(&key("paths"), re)?;
            }
            if !matches!(rule.access.as_str(), "write" | "any") {
                return Err(Invalid::new(&key("access"), &rule.access, "\"write\" or \"any\""));
            }
            check_effect(&key("effect"), &rule.effect)?;
        }
        for rule in &self.rules {
            let key = |k: &str| format!("permissions.rules[{}].{k}", rule.name);
            for re in rule.args_match.iter().chain(&rule.args_unless) {
                check_regex(&key("args_match"), re)?;
            }
            if !matches!(rule.path_args.as_str(), "" | "all" | "last") {
                return Err(Invalid::new(&key("path_args"), &rule.path_args, "\"all\" or \"last\""));
            }
            if rule.programs.is_empty() {
                return Err(Invalid::new(&key("programs"), "[]", "at least one program"));
            }
            check_effect(&key("effect"), &rule.effect)?;
        }
        for rule in &self.allow {
            let key = |k: &str| format!("permissions.allow[{}].{k}", rule.name);
            for re in rule.forbid.keys() {
                check_regex(&key("forbid"), re)?;
            }
            for re in rule.code_forbid.keys().chain(rule.code_allowed.iter()) {
                check_regex(&key("code"), re)?;
            }
            for re in rule.options.iter().chain(rule.output_operand.iter()) {
                check_regex(&key("options"), re)?;
            }
            if let Some(py) = &rule.python {
                check_regex(&key("python.read_mode"), &py.read_mode)?;
            }
            if !matches!(rule.operand.as_str(), "" | "script" | "code") {
                return Err(Invalid::new(&key("operand"), &rule.operand, "\"\", \"script\" or \"code\""));
            }
            if rule.programs.is_empty() {
                return Err(Invalid::new(&key("programs"), "[]", "at least one program"));
            }
        }
        Ok(())
    }
}
