//! Neovim headless runs the editors/nvim plugin's diff preview without a server:
//! Accept refuses a patch whose buffer changed since the preview opened (the
//! user's typing is kept and the message says why), and applies it otherwise.
//! Needs `nvim` (Debian's `neovim`).

use std::process::Command;
use std::time::{Duration, Instant};

fn line<'a>(out: &'a str, key: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(&format!("{key}\t")))
}

#[test]
fn neovim_refuses_a_stale_patch_on_accept_and_applies_a_fresh_one() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    std::fs::write(&file, "def add(a, b):\n    return a - b\n").unwrap();
    let out = dir.path().join("nvim-out.txt");
    let mut child = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", repo.join("server/tests/nvim/preview.lua").display()))
        .env("TINYCODER_FILE", &file)
        .env("TINYCODER_PLUGIN", repo.join("editors/nvim"))
        .env("TINYCODER_OUT", &out)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CACHE_HOME", dir.path().join("xdgcache"))
        .current_dir(dir.path())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run nvim ({e}); install Neovim (Debian: apt-get install -y neovim)"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish; output so far:\n{}", std::fs::read_to_string(&out).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    eprintln!("{text}");
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
