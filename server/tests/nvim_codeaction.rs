//! Neovim headless runs the editors/nvim plugin against the built server and
//! lists code actions for a Python diagnostic. Needs `nvim` (Debian's `neovim`).

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn neovim_lists_the_tinycoder_quickfix() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    std::fs::write(&file, "def f(a):\n    return a + b\n").unwrap();
    let out = dir.path().join("nvim-out.txt");
    let mut child = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", repo.join("server/tests/nvim/codeaction.lua").display()))
        .env("TINYCODER_BIN", env!("CARGO_BIN_EXE_tinycoder"))
        .env("TINYCODER_FILE", &file)
        .env("TINYCODER_PLUGIN", repo.join("editors/nvim"))
        .env("TINYCODER_OUT", &out)
        .env("TINYCODER_CACHE_DIR", dir.path().join("cache"))
        .env("TINYCODER_DATA_DIR", dir.path().join("data"))
        .env("TINYCODER_CONFIG", dir.path().join("none.toml"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CACHE_HOME", dir.path().join("xdgcache"))
        .current_dir(dir.path())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run nvim ({e}); install Neovim (Debian: apt-get install -y neovim)"));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish; output so far:\n{}", std::fs::read_to_string(&out).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    eprintln!("{text}");
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
