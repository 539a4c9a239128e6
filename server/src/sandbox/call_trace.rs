//! Watching one failing Python test run again: the calls it makes into the
//! project's own code, with their arguments and what each returned or raised.
//! A traceback only shows where an error was raised; a wrong value passed up
//! through several functions leaves no trace of where it was computed, and
//! these calls show it (`apply_discount(cents=700, percent=10) -> 0`).
//!
//! The tracer is a pytest plugin (`call_trace.py`, built in) loaded from the
//! shadow's scratch folder, so nothing in the project changes; it runs under
//! the same sandbox and limits as the tests themselves.

use super::tests_run::{remove_shadow, shadow_with_overlays, BufferOverlay};
use super::{detect_test_command, run_sandboxed, RunSpec, SandboxError, TestFramework};
use crate::config::Config;
use crate::paths::WorkspacePaths;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const PLUGIN: &str = include_str!("call_trace.py");
const PLUGIN_MODULE: &str = "tinycoder_call_trace";

/// One call into the project's code that a test made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedCall {
    /// Workspace-relative file of the called function.
    pub path: String,
    /// Its qualified name (`Cart.total`).
    pub name: String,
    /// 1-based first line of its code (the `def`, or its first decorator).
    pub line: usize,
    /// How many traced calls it is nested in (0: called from the test).
    pub depth: usize,
    /// `name=value, …` as `repr` shows them, each cut short.
    pub args: String,
    /// What it returned (`repr`), when it returned.
    pub result: Option<String>,
    /// The exception type it raised, when it raised.
    pub raised: Option<String>,
}

/// The calls of one test run, in the order they started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTrace {
    /// The test as pytest names it.
    pub test: String,
    pub calls: Vec<TracedCall>,
    /// More calls were made than were recorded.
    pub truncated: bool,
}

/// How much a trace records.
#[derive(Debug, Clone, Copy)]
pub struct TraceLimits {
    /// Calls recorded at most (the rest are counted as truncated).
    pub max_calls: u32,
    /// Characters of one argument or result shown at most.
    pub value_chars: u32,
}

/// Runs `test` (a pytest node id) once more in a fresh shadow with `overlays`
/// and records its calls. `Ok(None)` when the project's tests are not pytest's
/// or the run left no trace (the test was not collected, the plugin could not
/// load): the trace is extra evidence, never a reason to stop.
pub async fn trace_python_test(
    config: &Config,
    paths: &WorkspacePaths,
    overlays: &[BufferOverlay],
    test: &str,
    limits: TraceLimits,
    cancel: &CancellationToken,
) -> Result<Option<CallTrace>, SandboxError> {
    let sc = &config.sandbox;
    // A project whose own files name another runner (cargo, npm) is never
    // traced, and need not pay for a shadow. Anything else is decided in the
    // shadow, which holds the editor's unsaved buffers.
    if detect_test_command(&paths.root, &sc.test_command).is_ok_and(|c| c.framework != TestFramework::Pytest) {
        return Ok(None);
    }
    let shadow = shadow_with_overlays(paths, "trace", overlays).await?;
    let result = async {
        let cmd = detect_test_command(shadow.project_dir(), &sc.test_command)?;
        if cmd.framework != TestFramework::Pytest {
            return Ok(None);
        }
        let scratch = shadow.temp_dir()?;
        let plugin = scratch.join(format!("{PLUGIN_MODULE}.py"));
        std::fs::write(&plugin, PLUGIN).map_err(|e| SandboxError::io("write the call tracer", &plugin, e))?;
        let out = scratch.join("calls.json");
        let mut args = cmd.args.clone();
        args.extend(["-p".to_string(), PLUGIN_MODULE.to_string(), test.to_string()]);
        let timeout = Duration::from_secs(sc.wall_timeout_s);
        let mut spec = RunSpec::in_shadow(sc, &cmd.program, &args, &shadow, timeout)?;
        spec.prepend_python_path(&scratch);
        super::test_timeout::arm(&mut spec, sc, &shadow)?;
        spec.set_env("PYTHONDONTWRITEBYTECODE", "1");
        spec.set_env("NO_COLOR", "1");
        spec.set_env("TINYCODER_TRACE_OUT", &out.to_string_lossy());
        spec.set_env("TINYCODER_TRACE_MAX_CALLS", &limits.max_calls.to_string());
        spec.set_env("TINYCODER_TRACE_VALUE_CHARS", &limits.value_chars.to_string());
        let run = run_sandboxed(&spec, cancel).await?;
        let Ok(text) = std::fs::read_to_string(&out) else {
            tracing::debug!(test, stderr = %run.stderr.text, "the call tracer left no output");
            return Ok(None);
        };
        match serde_json::from_str::<CallTrace>(&text) {
            Ok(trace) => Ok(Some(trace)),
            Err(e) => {
                tracing::debug!(test, "the call tracer's output is not a trace: {e}");
                Ok(None)
            }
        }
    }
    .await;
    remove_shadow(shadow).await;
    result
}
