//! Test output → structured failures (file, line, test name, message).

mod cargo;
mod pytest;
mod unittest;

use super::TestFramework;
use serde::Serialize;
use std::path::Path;

pub use cargo::parse_cargo;
pub use pytest::parse_pytest;
pub use unittest::parse_unittest;

/// One failure, located in the workspace where possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TestFailure {
    /// Workspace-relative file ("" when unknown).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// Test name, or `compile error[E…]` for build failures.
    pub test: String,
    /// The failure message.
    pub message: String,
}

/// Parses `output` (stdout and stderr concatenated) with the framework's parser;
/// `shadow_root` turns absolute paths inside the shadow into workspace-relative ones.
pub fn parse_failures(framework: TestFramework, output: &str, shadow_root: &Path) -> Vec<TestFailure> {
    let mut out = match framework {
        TestFramework::Cargo => parse_cargo(output),
        TestFramework::Pytest => parse_pytest(output),
        TestFramework::Unittest => parse_unittest(output),
        TestFramework::Npm | TestFramework::Custom => {
            let mut v = parse_cargo(output);
            v.extend(parse_pytest(output));
            v.extend(parse_unittest(output));
            v
        }
    };
    for f in &mut out {
        f.file = relativize(&f.file, shadow_root);
    }
    out
}

/// Makes `file` workspace-relative when it is an absolute path inside `shadow_root`.
pub fn relativize(file: &str, shadow_root: &Path) -> String {
    let p = Path::new(file);
    let canon_root = shadow_root.canonicalize().unwrap_or_else(|_| shadow_root.to_path_buf());
    for root in [shadow_root, canon_root.as_path()] {
        if let Ok(rel) = p.strip_prefix(root) {
            return rel.to_string_lossy().into_owned();
        }
    }
    file.strip_prefix("./").unwrap_or(file).to_string()
}

/// Renders failures one per line, for expect-tests and the CLI.
pub fn render(failures: &[TestFailure]) -> String {
    failures.iter().map(|f| format!("{}:{} [{}] {}\n", f.file, f.line, f.test, f.message)).collect()
}
