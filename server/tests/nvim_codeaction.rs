//! Neovim headless runs the editors/nvim plugin against the built server and
//! lists code actions for a Python diagnostic. Needs `nvim` (Debian's `neovim`);
//! runs on each Neovim of `TINYCODER_NVIMS`.

mod common;

use std::time::Duration;

#[test]
fn neovim_lists_the_tinycoder_quickfix() {
    for nvim in common::nvim::neovims() {
        lists_the_quickfix(&nvim);
    }
}

fn lists_the_quickfix(nvim: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    std::fs::write(&file, "def f(a):\n    return a + b\n").unwrap();
    let mut env = common::nvim::server_env(dir.path());
    env.push(("TINYCODER_FILE", file.into()));
    let text = common::nvim::run_script(nvim, "codeaction.lua", dir.path(), dir.path(), env, Duration::from_secs(120));
    assert!(text.contains("FILETYPE\tpython"), "{text}");
    assert!(text.contains("ATTACHED\ttrue"), "{text}");
    assert!(!text.contains("ERROR"), "{text}");
    assert!(
        text.contains("ACTION\ttinycoder: fix \"b\" is not defined\tquickfix\ttrue\ttinycoder.fix"),
        "no tinycoder quick-fix in:\n{text}"
    );
    assert!(text.contains("ACTION\ttinycoder: explain\trefactor.rewrite"), "{text}");
    assert!(text.trim_end().ends_with("DONE"), "{text}");
}
