//! Neovim headless runs the editors/nvim plugin's diff preview without a server:
//! Accept refuses a patch whose buffer changed since the preview opened (the
//! user's typing is kept and the message says why), and applies it otherwise.
//! Needs `nvim` (Debian's `neovim`); runs on each Neovim of `TINYCODER_NVIMS`.

mod common;

use common::line;
use std::time::Duration;

#[test]
fn neovim_refuses_a_stale_patch_on_accept_and_applies_a_fresh_one() {
    for nvim in common::nvim::neovims() {
        refuses_a_stale_patch(&nvim);
    }
}

fn refuses_a_stale_patch(nvim: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    std::fs::write(&file, "def add(a, b):\n    return a - b\n").unwrap();
    let env = vec![("TINYCODER_FILE", file.into())];
    let text = common::nvim::run_script(nvim, "preview.lua", dir.path(), dir.path(), env, Duration::from_secs(60));
    assert!(!text.contains("ERROR\t"), "{text}");
    assert_eq!(line(&text, "PREVIEW_OPEN"), Some("true"), "{text}");
    let typed = "def add(a, b):  # typed\\n    return a - b";
    assert_eq!(line(&text, "STALE_TEXT"), Some(typed), "the user's typing is kept, the patch not applied: {text}");
    let said = line(&text, "STALE_MSG").unwrap_or_default();
    assert!(said.contains("changed since the preview") && said.contains("not applied"), "{said}");
    assert!(!said.contains("patch applied"), "{said}");
    assert_eq!(line(&text, "STALE_PENDING"), Some("false"), "the stale preview is closed: {text}");
    assert_eq!(line(&text, "STALE_UNDO"), Some("false"), "nothing to undo: {text}");
    let fresh = "def add(a, b):  # typed\\n    return a + b";
    assert_eq!(line(&text, "FRESH_TEXT"), Some(fresh), "an unchanged buffer gets the patch: {text}");
    assert!(line(&text, "FRESH_MSG").is_some_and(|m| m.contains("patch applied")), "{text}");
    assert!(text.trim_end().ends_with("DONE"), "{text}");
}
