//! Errors of the sandbox layer; each says what to do about it.

use std::path::{Path, PathBuf};

/// What went wrong in the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A file operation failed.
    #[error("cannot {what} ({path}): {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Walking the workspace failed.
    #[error("cannot list the workspace files: {0}")]
    Walk(String),
    /// A path leaves the shadow tree.
    #[error("path {0} is not a plain relative path inside the workspace")]
    PathOutsideShadow(PathBuf),
    /// The program could not be started.
    #[error("cannot start `{program}`: {source} (is it installed and on the allowlisted PATH?)")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Waiting for the process failed.
    #[error("lost track of the sandboxed process: {0}")]
    Wait(std::io::Error),
    /// Configuration demands a mechanism this kernel does not provide.
    #[error("the sandbox mechanism `{mechanism}` is not available on this machine, and `{key} = true` demands it (see `tinycoder doctor`; set it to false to run with a warning)")]
    MechanismRequired {
        /// The mechanism name.
        mechanism: String,
        /// The config key demanding it.
        key: &'static str,
    },
    /// A layered shadow's run could not get the mount namespace its overlay needs.
    #[error("this run's shadow is an overlay over the workspace, but the run could not get its own mount namespace (see `tinycoder doctor`); it did not start. TINYCODER_SANDBOX_DISABLE=overlay makes shadows of copies instead")]
    LayerNeedsMountNamespace,
    /// No test command could be found.
    #[error(
        "no test command found for {0}: no Cargo.toml, Python project or package.json; set `sandbox.test_command`"
    )]
    NoTestCommand(PathBuf),
    /// The configured test command could not be split into words.
    #[error("cannot parse `sandbox.test_command` {command:?}: {reason}")]
    BadTestCommand {
        /// The command.
        command: String,
        /// Why.
        reason: String,
    },
    /// A checker ran but its result cannot be trusted (crashed, timed out, or failed without a readable diagnostic).
    #[error("the {checker} checker (`{command}`) {reason}; fix the checker's setup or [checkers.{checker}] in the config{}", if output.is_empty() { String::new() } else { format!(":\n{output}") })]
    CheckerFailed {
        /// The checker's name.
        checker: String,
        /// Its command.
        command: String,
        /// What went wrong.
        reason: String,
        /// The end of its stderr.
        output: String,
    },
    /// The permission store could not be read or written.
    #[error("permission store {path}: {reason}")]
    Store {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl SandboxError {
    /// An I/O error while doing `what` on `path`.
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io { what, path: path.to_path_buf(), source }
    }
}
