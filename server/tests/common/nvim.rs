//! Headless Neovim runs of a Lua script under `server/tests/nvim/`: the
//! editors/nvim plugin on the runtime path, a private state and cache, and
//! the script's `KEY\tvalue` lines read back from `TINYCODER_OUT`. Each test
//! runs on every Neovim of `TINYCODER_NVIMS` (`scripts/test.sh` lists Debian's
//! 0.7.2 and a current release), else on the `nvim` on `PATH`.

use super::{line, output_of, repo};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
    let child = Command::new(nvim)
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
    let text = output_of(child, &out, &nvim.display().to_string(), limit);
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
