//! A time limit for each test, so one test that loops forever fails on its own
//! instead of holding the whole run until `sandbox.wall_timeout_s`.
//!
//! For pytest the limit is a plugin (`test_timeout.py`, built in) loaded through
//! `PYTEST_PLUGINS` from the shadow's scratch folder, which also reaches a
//! pytest started by a configured `sandbox.test_command` (`make test`): a test
//! past the limit fails with its stack where it was stopped and the run goes
//! on; one that will not stop is named by a watchdog line, which
//! [`name_hung_test`] turns into that test's failure.

use super::{RunSpec, SandboxError, ShadowWorkspace, TestFailure};
use crate::config::SandboxConfig;

const PLUGIN: &str = include_str!("test_timeout.py");
const PLUGIN_MODULE: &str = "tinycoder_test_timeout";
/// The watchdog's line: this, the test's node id, then why.
const MARK: &str = "tinycoder-test-timeout:";

/// Arms the per-test limit of `sc` for a run in `shadow` (a no-op when it is 0).
pub fn arm(spec: &mut RunSpec, sc: &SandboxConfig, shadow: &ShadowWorkspace) -> Result<(), SandboxError> {
    if sc.test_timeout_s == 0 {
        return Ok(());
    }
    // Its own folder: the scratch folder is the run's TMPDIR, whose files must not become modules.
    let dir = shadow.temp_dir()?.join("tinycoder-plugins");
    std::fs::create_dir_all(&dir).map_err(|e| SandboxError::io("create the plugin folder", &dir, e))?;
    let plugin = dir.join(format!("{PLUGIN_MODULE}.py"));
    std::fs::write(&plugin, PLUGIN).map_err(|e| SandboxError::io("write the per-test time limit", &plugin, e))?;
    spec.prepend_python_path(&dir);
    spec.set_env("PYTEST_PLUGINS", PLUGIN_MODULE);
    spec.set_env("TINYCODER_TEST_TIMEOUT_S", &sc.test_timeout_s.to_string());
    spec.set_env("TINYCODER_TEST_TIMEOUT_GRACE_S", &sc.test_timeout_grace_s.to_string());
    Ok(())
}

/// Adds the test the watchdog named in `output` as a failure, unless `failures` names it already.
pub fn name_hung_test(failures: &mut Vec<TestFailure>, output: &str, sc: &SandboxConfig) {
    let Some(nodeid) = output.lines().find_map(|l| l.trim().strip_prefix(MARK)?.split_whitespace().next()) else {
        return;
    };
    if failures.iter().any(|f| f.test == nodeid || nodeid.ends_with(&format!("::{}", f.test))) {
        return;
    }
    let file = nodeid.split("::").next().unwrap_or_default().to_string();
    let func = nodeid.rsplit("::").next().unwrap_or_default().split('[').next().unwrap_or_default();
    // The test's own frame in the watchdog's stack: `File ".../test_x.py", line 9 in test_y`.
    let line = output
        .lines()
        .filter(|l| l.trim_end().ends_with(&format!(" in {func}")))
        .find_map(|l| {
            let (path, rest) = l.trim().strip_prefix("File \"")?.split_once("\", line ")?;
            (path == file || path.ends_with(&format!("/{file}"))).then_some(())?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or(0);
    failures.push(TestFailure {
        file,
        line,
        test: nodeid.to_string(),
        message: format!(
            "timed out: ran past {} s (sandbox.test_timeout_s) and did not stop, so the run was ended; its stack is in the output",
            sc.test_timeout_s
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SandboxConfig {
        crate::config::LoadedConfig::load(&Default::default()).unwrap().config.sandbox
    }

    #[test]
    fn the_watchdog_line_names_the_hung_test_once() {
        let sc = config();
        let out =
            "test_a.py .\ntinycoder-test-timeout: test_a.py::test_spin ran past 2 s and did not stop; its stack:\n\
                   Thread 0x1 (most recent call first):\n  File \"/s/tree/test_a.py\", line 9 in test_spin\n";
        let mut failures = Vec::new();
        name_hung_test(&mut failures, out, &sc);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].test, "test_a.py::test_spin");
        assert_eq!(failures[0].file, "test_a.py");
        assert_eq!(failures[0].line, 9, "the test's frame in the stack");
        assert!(failures[0].message.contains("sandbox.test_timeout_s"));
        name_hung_test(&mut failures, out, &sc);
        assert_eq!(failures.len(), 1, "named once");
        let mut none = Vec::new();
        name_hung_test(&mut none, "1 passed", &sc);
        assert!(none.is_empty());
    }
}
