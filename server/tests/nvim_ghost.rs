//! Neovim headless, ghost text: the editors/nvim plugin asks the built server
//! for an inline completion on a half-typed line, the test bed's REAL model
//! (Qwen2.5-Coder 0.5B on llama-server) answers, the suggestion shows as an
//! extmark at the cursor, accepting it writes it into the buffer (the file then
//! runs), and `:TinycoderCompletion off python` stops the requests. Runs on each
//! Neovim of `TINYCODER_NVIMS` (0.7.2 and a current release).

mod common;

use common::line;
use std::time::Duration;

/// A hang guard on a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(600);

#[test]
fn neovim_shows_the_suggestion_as_ghost_text_and_accepts_it() {
    let url = common::require_openai_server();
    for nvim in common::nvim::neovims() {
        shows_and_accepts(&nvim, &url);
    }
}

fn shows_and_accepts(nvim: &std::path::Path, url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    let text = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return \n\n\nprint(add(2, 3))\n";
    std::fs::write(&file, text).unwrap();
    let mut env = common::nvim::server_env(dir.path());
    env.extend([
        ("TINYCODER_FILE", file.clone().into()),
        ("TINYCODER_URL", url.into()),
        ("TINYCODER_MODEL", common::AGENT_MODEL.into()),
    ]);
    let out = common::nvim::run_script(nvim, "ghost.lua", dir.path(), dir.path(), env, DEADLINE);
    assert!(!out.contains("ERROR\t"), "{out}");
    assert_eq!(line(&out, "ATTACHED"), Some("true"), "{out}");
    assert_eq!(line(&out, "PROVIDER"), Some("true"), "the server offers inline completion: {out}");
    assert_eq!(line(&out, "SHOWN"), Some("true"), "a suggestion is shown: {out}");
    let suggestion = line(&out, "SUGGESTION").unwrap_or_default().to_string();
    assert!(!suggestion.trim().is_empty() && !suggestion.contains("\\n"), "one line: {out}");
    // One extmark on line 3 at the end of `    return `, showing the suggestion.
    let ghost = line(&out, "GHOST").unwrap_or_default();
    assert!(ghost.starts_with("2\t11\t"), "at the cursor: {ghost}");
    assert!(ghost.ends_with(&suggestion), "the extmark shows the suggestion: {ghost}");
    assert_eq!(line(&out, "ACCEPTED"), Some("true"), "{out}");
    assert_eq!(line(&out, "LINE"), Some(format!("    return {suggestion}").as_str()), "{out}");
    assert_eq!(line(&out, "MARKS_AFTER"), Some("0"), "accepting hides it: {out}");
    // The accepted file, as written by Neovim, runs and prints the sum.
    let run = std::process::Command::new("python3").arg(&file).output().expect("python3");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "5", "{written}\n{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(line(&out, "OFF_ASKED"), Some("false"), "switched off for python: {out}");
    assert_eq!(line(&out, "ON_ASKED"), Some("true"), "{out}");
    assert!(out.trim_end().ends_with("DONE"), "{out}");
}
