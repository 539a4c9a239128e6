//! Checkers for real: `cargo check` and `ruff` run in the sandbox on a shadow
//! of a broken project report the diagnostic, and stop reporting it once the
//! overlay carries the fix; a checker whose program is missing says how to install it.

use std::path::{Path, PathBuf};
use tinycoder::config::{Config, LoadedConfig};
use tinycoder::paths::WorkspacePaths;
use tinycoder::sandbox::{checker_for, run_checker, BufferOverlay, CheckerChoice};
use tokio_util::sync::CancellationToken;

mod common;

fn config() -> Config {
    LoadedConfig::load(&Default::default()).expect("defaults").config
}

fn workspace(fixture: &str) -> (tempfile::TempDir, WorkspacePaths) {
    let dir = tempfile::tempdir().expect("workspace");
    common::copy_fixture(fixture, dir.path());
    let root = dir.path().canonicalize().unwrap();
    let paths = WorkspacePaths::new(&root, &config().store.dir);
    (dir, paths)
}

fn fixed(rel: &str, from: &str, to: &str, root: &Path) -> BufferOverlay {
    let text = std::fs::read_to_string(root.join(rel)).unwrap().replace(from, to);
    BufferOverlay { rel_path: PathBuf::from(rel), text }
}

#[tokio::test]
async fn cargo_check_in_the_sandbox_reports_the_rustc_error_until_the_overlay_fixes_it() {
    let config = config();
    let (_dir, paths) = workspace("rust-diagnostic");
    let checker = match checker_for(&config, "rustc", "src/lib.rs", &paths.root) {
        CheckerChoice::Use(c) => c,
        other => panic!("cargo is on PATH here: {other:?}"),
    };
    assert_eq!(checker.name, "cargo");
    let cancel = CancellationToken::new();
    let before = run_checker(&config, &paths, &[], &checker, &cancel).await.expect("cargo check runs");
    let errors: Vec<String> = before.errors().map(|d| d.headline()).collect();
    assert_eq!(errors, ["src/lib.rs:9: E0425 cannot find value `totl` in this scope"], "{before:#?}");
    let overlay = fixed("src/lib.rs", "    totl\n", "    total\n", &paths.root);
    let after = run_checker(&config, &paths, &[overlay], &checker, &cancel).await.expect("cargo check runs");
    assert_eq!(after.errors().count(), 0, "{after:#?}");
    // The workspace itself was never touched.
    assert!(std::fs::read_to_string(paths.root.join("src/lib.rs")).unwrap().contains("    totl\n"));
}

#[tokio::test]
async fn ruff_in_the_sandbox_reports_an_undefined_name_until_the_overlay_fixes_it() {
    let Some(ruff) = std::env::var_os("TINYCODER_TEST_RUFF") else {
        assert!(
            std::env::var_os("TINYCODER_REQUIRE_TESTBED").is_none(),
            "TINYCODER_TEST_RUFF is not set: `eval \"$(scripts/testbed.sh up)\"` installs ruff and sets it"
        );
        eprintln!("skipped: TINYCODER_TEST_RUFF is not set (scripts/testbed.sh up installs ruff)");
        return;
    };
    let mut config = config();
    let ruff = PathBuf::from(ruff);
    // The test bed's venv is not among the folders the sandbox shows by default.
    config.sandbox.readable_paths.push(ruff.parent().unwrap().parent().unwrap().display().to_string());
    config.checkers.get_mut("ruff").unwrap().command[0] = ruff.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("shop")).unwrap();
    std::fs::write(root.join("shop/prices.py"), "def net(gross, rate):\n    return gross / (1 + rat)\n").unwrap();
    let paths = WorkspacePaths::new(&root, &config.store.dir);
    let checker = match checker_for(&config, "Ruff", "shop/prices.py", &root) {
        CheckerChoice::Use(c) => c,
        other => panic!("{other:?}"),
    };
    let cancel = CancellationToken::new();
    let before = run_checker(&config, &paths, &[], &checker, &cancel).await.expect("ruff runs");
    let errors: Vec<String> = before.errors().map(|d| d.headline()).collect();
    assert_eq!(errors, ["shop/prices.py:2: F821 Undefined name `rat`"], "{before:#?}");
    let overlay = fixed("shop/prices.py", "(1 + rat)", "(1 + rate)", &root);
    let after = run_checker(&config, &paths, &[overlay], &checker, &cancel).await.expect("ruff runs");
    assert_eq!(after.errors().count(), 0, "{after:#?}");
}

#[test]
fn a_missing_checker_program_names_the_install_command() {
    let mut config = config();
    config.checkers.get_mut("ruff").unwrap().command[0] = "ruff-not-installed-here".into();
    let dir = tempfile::tempdir().unwrap();
    let choice = checker_for(&config, "ruff", "a.py", dir.path());
    let why = choice.not_rechecked().expect("not re-checked");
    assert!(why.contains("`ruff-not-installed-here`") && why.contains("pip install ruff"), "{why}");
}
