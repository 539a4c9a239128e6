//! Headless Neovim runs of a Lua script under `server/tests/nvim/`: the
//! editors/nvim plugin on the runtime path, a private state and cache, and
//! the script's `KEY\tvalue` lines read back from `TINYCODER_OUT`. Each test
//! runs on every Neovim of `TINYCODER_NVIMS` (`scripts/test.sh` lists Debian's
//! 0.7.2 and a current release), else on the `nvim` on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The repository root (the parent of `server/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The Neovim binaries to test with: `TINYCODER_NVIMS` (`:`-separated), else `nvim`.
pub fn neovims() -> Vec<PathBuf> {
    match std::env::var_os("TINYCODER_NVIMS") {
        Some(list) if !list.is_empty() => std::env::split_paths(&list).collect(),
        _ => vec![PathBuf::from("nvim")],
    }
}

/// Runs `nvim --headless` on `script` in `cwd` with `env`, its state and output
/// in `scratch`; kills it after `limit` (a hang guard, not a timing assertion),
/// and returns what the script wrote. Fails when the run called a function this
/// Neovim deprecates (the plugin must keep up with the releases it supports).
pub fn run_script(
    nvim: &Path,
    script: &str,
    scratch: &Path,
    cwd: &Path,
    env: Vec<(&str, OsString)>,
    limit: Duration,
) -> String {
    let out = scratch.join("nvim-out.txt");
    let scripts = repo().join("server/tests/nvim");
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", scripts.join(script).display()))
        .env("TINYCODER_NVIM_LIB", scripts.join("lib.lua"))
        .env("TINYCODER_PLUGIN", repo().join("editors/nvim"))
        .env("TINYCODER_OUT", &out)
        .env("XDG_STATE_HOME", scratch.join("state"))
        .env("XDG_CACHE_HOME", scratch.join("xdgcache"))
        .envs(env)
        .current_dir(cwd)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run {} ({e}); install Neovim (Debian: apt-get install -y neovim)", nvim.display())
        });
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "{} did not finish; output so far:\n{}",
                nvim.display(),
                std::fs::read_to_string(&out).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    eprintln!("{text}");
    assert!(line(&text, "NVIM").is_some(), "{} did not run {script}:\n{text}", nvim.display());
    assert!(line(&text, "DEPRECATED").is_none(), "a deprecated Neovim function was called:\n{text}");
    text
}

/// The built server and its private cache, data and (absent) user config under `dir`.
pub fn server_env(dir: &Path) -> Vec<(&'static str, OsString)> {
    vec![
        ("TINYCODER_BIN", env!("CARGO_BIN_EXE_tinycoder").into()),
        ("TINYCODER_CACHE_DIR", dir.join("cache").into()),
        ("TINYCODER_DATA_DIR", dir.join("data").into()),
        ("TINYCODER_CONFIG", dir.join("none.toml").into()),
    ]
}

/// The value of the script's first `key\tvalue` line.
pub fn line<'a>(out: &'a str, key: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(&format!("{key}\t")))
}
