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

/// A test command: program, arguments, how to read its output, and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestCommand {
    /// Program name.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Framework (parser choice).
    pub framework: TestFramework,
    /// Why this command, in words (e.g. "conftest.py at the root").
    pub why: String,
}

impl TestCommand {
    /// The command as one line, for display.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str()).chain(self.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    }
}

/// Folders never searched for test files (virtual envs, caches, build output, VCS).
const SKIPPED_DIRS: [&str; 10] =
    ["node_modules", "target", "venv", ".venv", "env", "__pycache__", "site-packages", "build", "dist", ".tox"];

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
        return Ok(TestCommand {
            program: program.clone(),
            args: args.to_vec(),
            framework,
            why: "sandbox.test_command is set".into(),
        });
    }
    let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if root.join("Cargo.toml").is_file() {
        return Ok(TestCommand {
            program: "cargo".into(),
            args: words(&["test", "--no-fail-fast", "--color", "never"]),
            framework: TestFramework::Cargo,
            why: "Cargo.toml at the root".into(),
        });
    }
    if let Some(why) = python_evidence(root) {
        let python = python_program();
        if python_has_pytest(&python) {
            return Ok(TestCommand {
                program: python,
                args: words(&["-m", "pytest", "-rfE", "--tb=long", "-p", "no:cacheprovider", "--color=no"]),
                framework: TestFramework::Pytest,
                why,
            });
        }
        let why = format!("{why}; pytest is not installed for {python}, so unittest runs them");
        return Ok(TestCommand {
            program: python,
            args: words(&["-m", "unittest", "discover", "-v"]),
            framework: TestFramework::Unittest,
            why,
        });
    }
    if root.join("package.json").is_file() {
        return Ok(TestCommand {
            program: "npm".into(),
            args: words(&["test", "--silent"]),
            framework: TestFramework::Npm,
            why: "package.json at the root".into(),
        });
    }
    Err(SandboxError::NoTestCommand(root.to_path_buf()))
}

/// Why `root` looks like a Python project with tests, if it does.
fn python_evidence(root: &Path) -> Option<String> {
    for marker in ["pytest.ini", "conftest.py", "tox.ini"] {
        if root.join(marker).is_file() {
            return Some(format!("{marker} at the root"));
        }
    }
    let setup_cfg = root.join("setup.cfg");
    if std::fs::read_to_string(&setup_cfg).is_ok_and(|t| t.contains("[tool:pytest]")) {
        return Some("setup.cfg with [tool:pytest]".into());
    }
    if let Some(test) = first_python_test(root) {
        return Some(format!("test files such as {test}"));
    }
    ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"]
        .iter()
        .find(|m| root.join(m).is_file())
        .map(|m| format!("{m} at the root"))
}

/// The first `test_*.py` or `*_test.py` under `root` (ignored and tooling folders skipped), relative.
fn first_python_test(root: &Path) -> Option<String> {
    let is_test_file = |name: &str| name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"));
    let walk = ignore::WalkBuilder::new(root)
        .max_depth(Some(6))
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            !(e.file_type().is_some_and(|t| t.is_dir()) && SKIPPED_DIRS.contains(&name.as_ref()))
        })
        .build();
    let mut found: Vec<String> = walk
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && is_test_file(&e.file_name().to_string_lossy()))
        .filter_map(|e| e.path().strip_prefix(root).ok().map(|p| p.to_string_lossy().replace('\\', "/")))
        .collect();
    found.sort();
    found.into_iter().next()
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
        assert_eq!(c.why, "Cargo.toml at the root");
        let o = detect_test_command(d.path(), "python3 -m pytest -k 'a b'").unwrap();
        assert_eq!(o.args, vec!["-m", "pytest", "-k", "a b"]);
        assert_eq!(o.framework, TestFramework::Pytest);
    }
}

#[cfg(test)]
mod layouts {
    use super::*;

    fn layout(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = d.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn python_layouts_as_projects_have_them() {
        let cases: [(&[(&str, &str)], &str); 6] = [
            (&[("conftest.py", ""), ("checks/test_money.py", "")], "conftest.py at the root"),
            (&[("pytest.ini", "[pytest]\n"), ("src/a.py", "")], "pytest.ini at the root"),
            (&[("tox.ini", "[tox]\n")], "tox.ini at the root"),
            (&[("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\n")], "setup.cfg with [tool:pytest]"),
            (&[("pkg/core.py", ""), ("pkg/verify/core_test.py", "")], "test files such as pkg/verify/core_test.py"),
            (&[("pyproject.toml", "[project]\n"), ("lib.py", "")], "pyproject.toml at the root"),
        ];
        for (files, why) in cases {
            let d = layout(files);
            let c = detect_test_command(d.path(), "").unwrap_or_else(|e| panic!("{files:?}: {e}"));
            assert!(c.why.starts_with(why), "{files:?}: {}", c.why);
            assert!(matches!(c.framework, TestFramework::Pytest | TestFramework::Unittest));
        }
        // Tests inside a virtual env or node_modules are not the project's.
        let d = layout(&[(".venv/lib/test_x.py", ""), ("node_modules/a/test_y.py", ""), ("main.py", "")]);
        assert!(detect_test_command(d.path(), "").is_err());
    }
}
