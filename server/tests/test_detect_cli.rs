//! `tinycoder test` on project layouts as they come (real pytest and cargo in
//! the sandbox): it finds the test command and says why it chose it.

use std::path::Path;
use std::process::Command;

fn corpus(task: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bench/fix").join(task).join("project")
}

fn tinycoder_test(project: &Path) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("p");
    copy(project, &work);
    let out = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .args(["test"])
        .current_dir(&work)
        .env("TINYCODER_CACHE_DIR", home.path().join("cache"))
        .env("TINYCODER_DATA_DIR", home.path().join("data"))
        .env("TINYCODER_CONFIG", home.path().join("none.toml"))
        .output()
        .expect("run tinycoder test");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn copy(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let to = dest.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

#[test]
fn a_root_conftest_with_tests_in_a_folder_not_named_tests() {
    // conftest.py at the root, the tests in checks/, no pyproject.toml.
    let (code, out) = tinycoder_test(&corpus("py-event-attendees"));
    assert_eq!(code, 1, "the task's test fails:\n{out}");
    assert!(out.contains("pytest") && out.contains("chosen because: conftest.py at the root"), "{out}");
    assert!(out.contains("checks/"), "the failure is located in checks/:\n{out}");
}

#[test]
fn test_files_anywhere_and_cargo() {
    let (_, out) = tinycoder_test(&corpus("py-calendar-range-end"));
    assert!(out.contains("chosen because:"), "{out}");
    let (code, out) = tinycoder_test(&corpus("rs-wallet-overdraw"));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cargo test") && out.contains("chosen because: Cargo.toml at the root"), "{out}");
}
