//! Test detection, sandboxed runs and failure parsing on real failing
//! projects in `tests/fixtures/` (real cargo, real pytest, real unittest).

#[path = "sandbox_common.rs"]
mod common;

use std::path::{Path, PathBuf};
use tinycoder::paths::WorkspacePaths;
use tinycoder::sandbox::test_parse::render;
use tinycoder::sandbox::{run_project_tests, trace_python_test, BufferOverlay, TestReport, TraceLimits};
use tokio_util::sync::CancellationToken;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

/// One fixture run at a time: they share the cache dir, and the check that no
/// shadow is left behind must not see another test's live shadow.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn run(name: &str, test_command: &str, overlays: &[BufferOverlay]) -> TestReport {
    let _serial = SERIAL.lock().await;
    common::hermetic_dirs();
    let root = fixture(name);
    let before = common::tree_hashes(&root);
    let mut config = common::default_config();
    config.sandbox.test_command = test_command.to_string();
    config.sandbox.wall_timeout_s = 300;
    let paths = WorkspacePaths::new(&root, "");
    let report = run_project_tests(&config, &paths, overlays, &CancellationToken::new()).await.expect("test run");
    assert_eq!(before, common::tree_hashes(&root), "the fixture changed");
    assert!(
        !paths.cache_dir.join("shadows").read_dir().map(|mut d| d.next().is_some()).unwrap_or(false),
        "shadow left behind"
    );
    report
}

#[tokio::test]
async fn rust_test_panic_is_located() {
    let report = run("rust-failing", "", &[]).await;
    assert!(!report.passed);
    assert_eq!(report.command, "cargo test --no-fail-fast --color never");
    expect_test::expect![[r#"
        src/lib.rs:24 [tests::adds_wrongly] assertion `left == right` failed: one plus two
          left: 3
         right: 4
    "#]]
    .assert_eq(&render(&report.failures));
}

#[tokio::test]
async fn rust_compile_error_is_located() {
    let report = run("rust-failing", "cargo test --features broken", &[]).await;
    assert!(!report.passed);
    expect_test::expect![[r#"
        src/lib.rs:9 [compile error[E0308]] mismatched types
    "#]]
    .assert_eq(&render(&report.failures));
}

#[tokio::test]
async fn unsaved_buffer_overlay_is_tested() {
    // The editor buffer fixes the test; the file on disk is unchanged.
    let text =
        std::fs::read_to_string(fixture("rust-failing/src/lib.rs")).unwrap().replace("add(1, 2), 4", "add(1, 2), 3");
    let report = run("rust-failing", "", &[BufferOverlay { rel_path: "src/lib.rs".into(), text }]).await;
    assert!(report.passed, "{}", report.output_tail);
    assert!(report.failures.is_empty());
}

#[tokio::test]
async fn pytest_failures_are_located() {
    let report = run("python-failing", "", &[]).await;
    assert!(!report.passed);
    assert!(report.command.contains("pytest"), "pytest must be installed: {}", report.command);
    expect_test::expect![[r#"
        tests/test_calc.py:9 [tests/test_calc.py::test_add_wrong] assert 3 == 4
        tests/test_calc_unittest.py:14 [tests/test_calc_unittest.py::SubTest::test_sub_error] ValueError: boom
        tests/test_calc_unittest.py:11 [tests/test_calc_unittest.py::SubTest::test_sub_wrong] AssertionError: 2 != 3
    "#]]
    .assert_eq(&render(&report.failures));
}

/// `run`, with a per-test limit of `limit_s` seconds.
async fn run_with_test_limit(name: &str, test_command: &str, limit_s: u64) -> TestReport {
    let _serial = SERIAL.lock().await;
    common::hermetic_dirs();
    let root = fixture(name);
    let mut config = common::default_config();
    config.sandbox.test_command = test_command.to_string();
    config.sandbox.wall_timeout_s = 300;
    config.sandbox.test_timeout_s = limit_s;
    config.sandbox.test_timeout_grace_s = 2;
    let paths = WorkspacePaths::new(&root, "");
    run_project_tests(&config, &paths, &[], &CancellationToken::new()).await.expect("test run")
}

/// A test that loops forever fails on its own after `sandbox.test_timeout_s`, stopped where
/// it spun, and the tests after it still run.
#[tokio::test]
async fn a_hanging_pytest_test_fails_alone_and_the_run_goes_on() {
    let report =
        run_with_test_limit("python-hanging", "python3 -m pytest -q -p no:cacheprovider test_spin.py", 2).await;
    assert!(!report.passed);
    assert_eq!(report.end, tinycoder::sandbox::RunEnd::Exited(1), "{}", report.output_tail);
    assert!(report.output_tail.contains("1 failed, 2 passed"), "{}", report.output_tail);
    let [f] = &report.failures[..] else { panic!("one failure: {:?}", report.failures) };
    assert_eq!((f.file.as_str(), f.test.as_str()), ("test_spin.py", "test_spin.py::test_spins"));
    // Stopped inside its loop (the sleep or the loop's test).
    assert!((12..=13).contains(&f.line), "{f:?}");
    assert!(f.message.contains("timed out: ran past 2 s (sandbox.test_timeout_s)"), "{f:?}");
}

/// A Rust test that never ends is stopped at its limit (libtest names it after a
/// minute), reported as timed out, and the other tests run again without it.
#[tokio::test]
async fn a_hanging_rust_test_fails_alone_and_the_run_goes_on() {
    let report = run_with_test_limit("rust-hanging", "", 61).await;
    assert!(!report.passed);
    let tail = &report.output_tail;
    assert!(tail.contains("tests::finds_the_next_number has been running for over 60 seconds"), "{tail}");
    assert!(tail.contains("ran past 61 s (sandbox.test_timeout_s) and was stopped"), "{tail}");
    assert!(tail.contains("1 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out"), "the rerun: {tail}");
    let mut names: Vec<&str> = report.failures.iter().map(|f| f.test.as_str()).collect();
    names.sort();
    assert_eq!(names, ["tests::finds_the_next_number", "tests::subtracts_wrong"], "{:?}", report.failures);
    let hung = report.failures.iter().find(|f| f.test == "tests::finds_the_next_number").unwrap();
    assert!(hung.message.starts_with("timed out: ran past 61 s (sandbox.test_timeout_s)"), "{hung:?}");
    assert!(report.duration < std::time::Duration::from_secs(240), "not the wall timeout: {:?}", report.duration);
}

/// A test that swallows its time limit is still named: the watchdog ends the run after the grace.
#[tokio::test]
async fn a_test_that_swallows_its_time_limit_is_named_by_the_watchdog() {
    let report =
        run_with_test_limit("python-hanging", "python3 -m pytest -q -p no:cacheprovider test_swallow.py", 1).await;
    assert!(!report.passed);
    assert!(report.output_tail.contains("test_swallows_everything"), "{}", report.output_tail);
    assert!(report.duration < std::time::Duration::from_secs(60), "ended by the watchdog: {:?}", report.duration);
    let f = report.failures.iter().find(|f| f.test == "test_swallow.py::test_swallows_everything");
    assert!(f.is_some_and(|f| f.message.contains("did not stop") && f.line == 9), "{:?}", report.failures);
}

#[tokio::test]
async fn unittest_failures_are_located() {
    let report = run("python-failing", "python3 -m unittest discover -v", &[]).await;
    assert!(!report.passed);
    expect_test::expect![[r#"
        tests/test_calc_unittest.py:14 [tests.test_calc_unittest.SubTest.test_sub_error] ValueError: boom
        tests/test_calc_unittest.py:11 [tests.test_calc_unittest.SubTest.test_sub_wrong] AssertionError: 2 != 3
    "#]]
    .assert_eq(&render(&report.failures));
    // The output names the workspace's own paths, not the shadow's.
    let tail = &report.output_tail;
    assert!(tail.contains("File \"tests/test_calc_unittest.py\", line 14") && !tail.contains("/shadows/"), "{tail}");
}

/// A failing pytest test runs again under the call tracer and names the calls
/// it made into the project; a cargo project is not traced and gets no shadow.
#[tokio::test]
async fn a_failing_pytest_test_is_traced_and_a_cargo_project_is_not() {
    let _serial = SERIAL.lock().await;
    common::hermetic_dirs();
    let config = common::default_config();
    let limits = TraceLimits { max_calls: 50, value_chars: 60 };
    let cancel = CancellationToken::new();
    let python = WorkspacePaths::new(&fixture("python-failing"), "");
    let trace = trace_python_test(&config, &python, &[], "tests/test_calc.py::test_add_wrong", limits, &cancel)
        .await
        .expect("the trace runs")
        .expect("a pytest project is traced");
    let add = trace.calls.iter().find(|c| c.name == "add").unwrap_or_else(|| panic!("{trace:#?}"));
    assert_eq!((add.depth, add.args.as_str(), add.result.as_deref()), (0, "a=1, b=2", Some("3")), "{add:#?}");
    let rust = WorkspacePaths::new(&fixture("rust-failing"), "");
    let none = trace_python_test(&config, &rust, &[], "tests::adds_wrongly", limits, &cancel).await.expect("no error");
    assert!(none.is_none(), "{none:?}");
    assert!(
        !rust.cache_dir.join("shadows").exists() || rust.cache_dir.join("shadows").read_dir().unwrap().next().is_none(),
        "no shadow is left behind"
    );
}
