//! Which command runs a project's tests.

use super::SandboxError;
use serde::Serialize;
use std::path::Path;

/// The test framework, which decides how output is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestFramework {
    /// `cargo test`.
    Cargo,
    /// pytest.
    Pytest,
    /// `python -m unittest`.
    Unittest,
    /// `npm test`.
    Npm,
    /// A configured command: every parser is tried.
    Custom,
}

/// A test command: program, arguments, and how to read its output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestCommand {
    /// Program name.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Framework (parser choice).
    pub framework: TestFramework,
}

impl TestCommand {
    /// The command as one line, for display.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str()).chain(self.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    }
}

/// Detects the test command for `root`; a non-empty `override_cmd` (config `sandbox.test_command`) wins.
pub fn detect_test_command(root: &Path, override_cmd: &str) -> Result<TestCommand, SandboxError> {
    if !override_cmd.trim().is_empty() {
        let words = super::shell_parse::split_words(override_cmd)
            .map_err(|reason| SandboxError::BadTestCommand { command: override_cmd.to_string(), reason })?;
        let Some((program, args)) = words.split_first() else {
            return Err(SandboxError::BadTestCommand { command: override_cmd.to_string(), reason: "empty".into() });
        };
        let joined = words.join(" ");
        let framework = if program == "cargo" {
            TestFramework::Cargo
        } else if joined.contains("pytest") {
            TestFramework::Pytest
        } else if joined.contains("unittest") {
            TestFramework::Unittest
        } else {
            TestFramework::Custom
        };
        return Ok(TestCommand { program: program.clone(), args: args.to_vec(), framework });
    }
    let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if root.join("Cargo.toml").is_file() {
        return Ok(TestCommand {
            program: "cargo".into(),
            args: words(&["test", "--no-fail-fast", "--color", "never"]),
            framework: TestFramework::Cargo,
        });
    }
    let python_markers = ["pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "requirements.txt"];
    let has_py = python_markers.iter().any(|m| root.join(m).is_file()) || has_python_tests(root);
    if has_py {
        let python = python_program();
        if python_has_pytest(&python) {
            return Ok(TestCommand {
                program: python,
                args: words(&["-m", "pytest", "-rfE", "--tb=long", "-p", "no:cacheprovider", "--color=no"]),
                framework: TestFramework::Pytest,
            });
        }
        return Ok(TestCommand {
            program: python,
            args: words(&["-m", "unittest", "discover", "-v"]),
            framework: TestFramework::Unittest,
        });
    }
    if root.join("package.json").is_file() {
        return Ok(TestCommand {
            program: "npm".into(),
            args: words(&["test", "--silent"]),
            framework: TestFramework::Npm,
        });
    }
    Err(SandboxError::NoTestCommand(root.to_path_buf()))
}

fn has_python_tests(root: &Path) -> bool {
    // pytest's own discovery: test_*.py or *_test.py at the top level, or a tests/ folder.
    let is_test_file = |name: &str| name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"));
    let top_level = std::fs::read_dir(root)
        .map(|rd| rd.flatten().any(|e| is_test_file(&e.file_name().to_string_lossy())))
        .unwrap_or(false);
    top_level
        || ["tests", "test"].iter().any(|d| {
            std::fs::read_dir(root.join(d))
                .map(|rd| rd.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".py")))
                .unwrap_or(false)
        })
}

fn python_program() -> String {
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    if on_path("python3") || !on_path("python") {
        "python3".into()
    } else {
        "python".into()
    }
}

fn python_has_pytest(python: &str) -> bool {
    std::process::Command::new(python)
        .args(["-c", "import pytest"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_project_files_and_override_wins() {
        let d = tempfile::tempdir().unwrap();
        assert!(detect_test_command(d.path(), "").is_err());
        std::fs::write(d.path().join("package.json"), "{}").unwrap();
        assert_eq!(detect_test_command(d.path(), "").unwrap().framework, TestFramework::Npm);
        std::fs::write(d.path().join("Cargo.toml"), "[package]").unwrap();
        let c = detect_test_command(d.path(), "").unwrap();
        assert_eq!((c.program.as_str(), c.framework), ("cargo", TestFramework::Cargo));
        let o = detect_test_command(d.path(), "python3 -m pytest -k 'a b'").unwrap();
        assert_eq!(o.args, vec!["-m", "pytest", "-k", "a b"]);
        assert_eq!(o.framework, TestFramework::Pytest);
    }
}
