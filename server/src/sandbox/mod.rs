//! Shadow workspace, process runner with limits, test detection and failure
//! parsing, shell tool, permission policy.
//!
//! Entry points for other layers:
//! - [`run_project_tests`]: tests of the workspace (with unsaved buffers) in a fresh shadow.
//! - [`run_tests_in_shadow`]: tests in a shadow the caller owns (agent patches).
//! - [`trace_python_test`]: one failing pytest test again, with the calls it makes into the project.
//! - [`ShellTool::run`]: a shell command behind the permission gate, run in the sandbox.
//! - [`PermissionPolicy::check`]: the verdict for a command, without running it.
//! - [`probe_mechanisms`]: which isolation mechanisms this machine enforces.

mod allowlist;
mod call_trace;
mod cargo_hang;
mod check_parse;
mod checks;
mod error;
mod human;
mod landlock_raw;
mod limits;
pub mod mechanisms;
mod mount_plan;
mod permission;
mod permission_store;
mod runner;
mod seccomp;
mod shadow;
mod shadow_layer;
#[cfg(test)]
mod shell_fuzz;
mod shell_lex;
pub mod shell_parse;
mod shell_tool;
mod test_detect;
pub mod test_parse;
mod test_timeout;
mod tests_run;

pub use call_trace::{trace_python_test, CallTrace, TraceLimits, TracedCall};
pub use check_parse::{parse_check_output, CheckedDiagnostic};
pub use checks::{checker_for, checkers_for_project, find_program, run_checker, CheckReport, Checker, CheckerChoice};
pub use error::SandboxError;
pub use human::{
    HumanPort, NonInteractiveHuman, OneQuestionAtATime, PermissionChoice, PermissionRequest, StepConfirmation,
};
pub use limits::{allowlisted_env, expand_path, ResourceLimits, RunSpec};
pub use mechanisms::{probe_mechanisms, MechanismStatus, WritePlan};
pub use permission::{PermissionPolicy, PermissionVerdict};
pub use permission_store::{PermissionStore, SqlitePermissionStore, StoredDecision};
pub use runner::{run_sandboxed, CappedOutput, RunEnd, RunOutput};
pub use shadow::{cleanup_stale_shadows, list_workspace_files, ShadowWorkspace};
pub use shadow_layer::{layer_unavailable, ShadowLayer};
pub use shell_tool::{ShellOutcome, ShellTool};
pub use test_detect::{detect_test_command, TestCommand, TestFramework};
pub use test_parse::TestFailure;
pub use tests_run::{
    remove_shadow, run_project_tests, run_tests_in_shadow, shadow_with_overlays, BufferOverlay, TestReport,
};
