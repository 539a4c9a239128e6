//! The VS Code extension in a real VS Code, end to end: code-server 4.99.4 (VS
//! Code 1.99 in a browser) with the built `.vsix` installed, headless Chromium
//! driven by Playwright (`editors/vscode/scripts/code-server-e2e.js`), the built
//! server, and the test bed's REAL coder model (Qwen2.5-Coder 0.5B on
//! llama-server), on a copy of the small Python shop project. The failing test
//! becomes an error after "Run Tests", "Fix at Cursor" brings the patch into VS
//! Code's refactor preview, Apply writes it and the error clears; then a chat
//! question about a file that is not open gets a reply whose citation opens it;
//! last, typing on a half-written line shows the model's ghost text and Tab
//! accepts it.
//!
//! Needs `TINYCODER_CODE_SERVER` (a folder whose `node_modules` hold code-server
//! and playwright-core: `scripts/test.sh` installs them) and Chromium
//! (`TINYCODER_CHROMIUM`, default `/usr/bin/chromium`). Without them the test
//! fails under `TINYCODER_REQUIRE_TESTBED` (as `scripts/test.sh` runs it) and
//! otherwise says it did not run.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A hang guard for the whole browser run on a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(2400);

/// code-server and everything it started (the extension host, `tinycoder lsp`), stopped on drop.
struct CodeServer(Child);

impl Drop for CodeServer {
    fn drop(&mut self) {
        // Its own process group: the extension host and the language server go with it.
        let group = -(self.0.id() as i32);
        // SAFETY: kill(2) with a negative pid signals that process group only; no memory is shared.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

#[test]
fn vscode_fixes_a_failing_test_through_the_refactor_preview_and_chats_about_the_project() {
    let Some(code_server) = std::env::var_os("TINYCODER_CODE_SERVER").map(PathBuf::from) else {
        let why = "TINYCODER_CODE_SERVER is not set (scripts/test.sh installs code-server and sets it)";
        assert!(std::env::var_os("TINYCODER_REQUIRE_TESTBED").is_none(), "{why}");
        eprintln!("not run: {why}");
        return;
    };
    let chromium = std::env::var_os("TINYCODER_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into());
    let vsix = common::repo().join("editors/vscode/tinycoder.vsix");
    assert!(vsix.is_file(), "no {} (run `npm ci && npm run ci` in editors/vscode)", vsix.display());
    let url = common::require_openai_server();

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    let original = common::shop_project(&root);
    // Written by the browser script after the fix and the chat, so they see the project as it was.
    let ghost_file = root.join("shop/area.py");
    let ghost_text = "def area(width, height):\n    \"\"\"Area of a width by height rectangle.\"\"\"\n    return \n\n\nprint(area(2, 3))\n";
    let server_log = dir.path().join("lsp.log");
    let user = dir.path().join("user");
    let extensions = dir.path().join("extensions");
    write_settings(&user, &logged_server(dir.path(), &server_log), &url);

    let bin = code_server.join("node_modules/.bin/code-server");
    let installed = Command::new(&bin)
        .arg("--user-data-dir")
        .arg(&user)
        .arg("--extensions-dir")
        .arg(&extensions)
        .arg("--install-extension")
        .arg(&vsix)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e})", bin.display()));
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));

    let port = free_port();
    let mut serve = Command::new(&bin);
    serve
        .args(["--auth", "none", "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust"])
        .arg("--bind-addr")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--config")
        .arg(dir.path().join("code-server.yaml"))
        .arg("--user-data-dir")
        .arg(&user)
        .arg("--extensions-dir")
        .arg(&extensions)
        .arg(&root)
        .envs(common::nvim::server_env(dir.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut serve, 0);
    let _server = CodeServer(serve.spawn().expect("start code-server"));
    wait_for_port(port, Duration::from_secs(180));

    let shots =
        std::env::var_os("TINYCODER_SCREENSHOTS").map(PathBuf::from).unwrap_or_else(|| dir.path().join("shots"));
    std::fs::create_dir_all(&shots).unwrap();
    let env: Vec<(&str, OsString)> = vec![
        ("NODE_PATH", code_server.join("node_modules").into()),
        ("URL", format!("http://127.0.0.1:{port}").into()),
        ("FOLDER", root.clone().into()),
        ("TEST_FILE", "tests/test_prices.py".into()),
        ("QUESTION", "How is the shipping cost of an order computed?".into()),
        ("CITED", "shipping.py".into()),
        ("GHOST_FILE", "shop/area.py".into()),
        ("GHOST_TEXT", ghost_text.into()),
        ("GHOST_LINE", "3".into()),
        ("GHOST_TYPE", "w".into()),
        ("OUT", shots.clone().into()),
        ("CHROMIUM", chromium),
    ];
    let text = run_browser(&env, dir.path());
    let log = std::fs::read_to_string(&server_log).unwrap_or_default();
    let context = format!("{text}\n--- tinycoder lsp's log ---\n{log}\n(screenshots in {})", shots.display());
    let line = |key| common::line(&text, key).unwrap_or_default();

    assert!(!text.contains("ERROR\t"), "{context}");
    assert!(
        line("STATUS").contains("openai · qwen2.5-coder:0.5b"),
        "the status bar names backend and model: {context}"
    );
    assert_eq!(line("DIAGNOSTIC_LINE"), "10", "the failing assertion is an error at its line: {context}");
    assert!(line("PREVIEW").contains("prices.py"), "the patch is in the refactor preview: {context}");
    assert_eq!(line("TICKED_BEFORE"), "0", "the patch needs confirming before it applies: {context}");
    assert!(line("DIFF_OPEN").contains("Refactor Preview"), "{context}");
    assert!(line("APPLY_MESSAGE").contains("tests pass"), "{context}");
    assert_eq!(line("CLEARED"), "true", "the error clears once the patch is in: {context}");
    let on_disk = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
    assert_ne!(on_disk, original, "Apply changed shop/prices.py: {context}");
    assert!(common::pytest_passes(&root), "the applied patch turns the tests green: {context}");
    assert!(!line("REPLY").is_empty(), "{context}");
    assert!(line("CITATIONS").contains("shop/shipping.py"), "the reply cites the unopened file: {context}");
    assert_eq!(line("CITATION_OPENED"), "shipping.py", "the citation opens the file: {context}");
    // Ghost text: typing `w` on `    return ` shows a suggestion; Tab accepts it and the file runs.
    assert_eq!(line("GHOST_SHOWN"), "true", "ghost text appears as the user types: {context}");
    assert_eq!(line("GHOST_ACCEPTED"), "true", "{context}");
    let accepted = std::fs::read_to_string(&ghost_file).unwrap();
    let returned = accepted.lines().nth(2).unwrap_or_default();
    assert!(
        returned.starts_with("    return w") && returned.len() > "    return w".len(),
        "Tab inserted it: {accepted}"
    );
    let run = Command::new("python3").arg(&ghost_file).output().expect("python3");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "6",
        "{accepted}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(text.trim_end().ends_with("DONE"), "{context}");
}

/// A wrapper that runs the built server with its log (stderr) kept in `log`.
fn logged_server(dir: &Path, log: &Path) -> PathBuf {
    let wrapper = dir.join("tinycoder-logged");
    let script = format!("#!/bin/sh\nexec '{}' \"$@\" 2>>'{}'\n", env!("CARGO_BIN_EXE_tinycoder"), log.display());
    std::fs::write(&wrapper, script).unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    wrapper
}

/// The user settings: the server, every role on the test bed's model, saving on its own.
fn write_settings(user: &Path, server: &Path, url: &str) {
    let role = serde_json::json!({ "name": common::AGENT_MODEL });
    let settings = serde_json::json!({
        "tinycoder.serverPath": server,
        "tinycoder.settings": {
            // The whole prompt evaluated every time: greedy replies then do not depend on
            // what earlier tests left in llama-server's cache.
            "backend": { "kind": "openai", "url": url, "prompt_cache": false },
            "models": { "planner": role, "coder": role, "critic": role, "summarizer": role },
            // A scripted browser does not answer the strategy question (lsp_strategy.rs covers it).
            "runtime": { "strategy_rounds": 0 },
            // A hang guard for a suggestion on a busy 2-core machine, not a latency target.
            "completion": { "timeout_ms": 120000 },
        },
        "files.autoSave": "afterDelay",
        // No word-based suggestion list: Tab then accepts the ghost text, not the list's first word.
        "editor.quickSuggestions": { "other": "off", "comments": "off", "strings": "off" },
        "editor.suggestOnTriggerCharacters": false,
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": false,
        "telemetry.telemetryLevel": "off",
    });
    std::fs::create_dir_all(user.join("User")).unwrap();
    std::fs::write(user.join("User/settings.json"), serde_json::to_string_pretty(&settings).unwrap()).unwrap();
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something accepts connections on `port` (a hang guard of `limit`).
fn wait_for_port(port: u16, limit: Duration) {
    let deadline = Instant::now() + limit;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "code-server did not listen on {port}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs the Playwright script and returns its `KEY\tvalue` lines (its progress goes to stderr).
fn run_browser(env: &[(&str, OsString)], dir: &Path) -> String {
    let out = dir.join("browser-out.txt");
    let script = common::repo().join("editors/vscode/scripts/code-server-e2e.js");
    let child = Command::new("node")
        .arg(&script)
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .expect("run node");
    common::output_of(child, &out, "the browser run", DEADLINE)
}
