//! Neovim headless, end to end: the editors/nvim plugin, the built server and
//! the test bed's REAL coder model (Qwen2.5-Coder 0.5B on llama-server). The
//! Python fixture's failing test becomes a diagnostic, its quick-fix comes back
//! as a diff preview, accepting it patches the buffer and the diagnostic clears;
//! then a chat question about a file that is not open gets a streamed reply that
//! cites it. Needs `nvim` (Debian's `neovim`, 0.7.2 or later).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

/// A hang guard for the whole run on a busy 2-core machine, not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(3600);

const SHIPPING: &str = "\
\"\"\"Shipping costs of an order.\"\"\"


def shipping_cost(weight_kg, express=False):
    \"\"\"Cost in cents: 500 base plus 120 per started kilogram; express doubles it.\"\"\"
    kilos = int(weight_kg) + (0 if weight_kg == int(weight_kg) else 1)
    cost = 500 + 120 * kilos
    return cost * 2 if express else cost
";

fn line<'a>(out: &'a str, key: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(&format!("{key}\t")))
}

#[test]
fn neovim_fixes_a_failing_test_through_the_preview_and_chats_about_the_project() {
    let url = common::openai_url();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(common::require_server(&url, "/health"));
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    common::copy_fixture("agent-python", &root);
    std::fs::write(root.join("shop/shipping.py"), SHIPPING).unwrap();
    let original = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
    let out = dir.path().join("nvim-out.txt");
    let mut child = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", repo.join("server/tests/nvim/e2e.lua").display()))
        .env("TINYCODER_BIN", env!("CARGO_BIN_EXE_tinycoder"))
        .env("TINYCODER_PLUGIN", repo.join("editors/nvim"))
        .env("TINYCODER_ROOT", &root)
        // A headless Neovim cannot answer the strategy question (lsp_strategy.rs covers it).
        .env("TINYCODER_RUNTIME__STRATEGY_ROUNDS", "0")
        // The whole prompt evaluated every time: greedy replies then do not depend on
        // what earlier tests left in llama-server's cache (a reused prefix changes the
        // batch split, and with it the last bits of the logits).
        .env("TINYCODER_BACKEND__PROMPT_CACHE", "false")
        .env("TINYCODER_URL", &url)
        .env("TINYCODER_MODEL", common::AGENT_MODEL)
        .env("TINYCODER_OUT", &out)
        .env("TINYCODER_CACHE_DIR", dir.path().join("cache"))
        .env("TINYCODER_DATA_DIR", dir.path().join("data"))
        .env("TINYCODER_CONFIG", dir.path().join("none.toml"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CACHE_HOME", dir.path().join("xdgcache"))
        .current_dir(&root)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run nvim ({e}); install Neovim (Debian: apt-get install -y neovim)"));
    let deadline = Instant::now() + DEADLINE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish; output so far:\n{}", std::fs::read_to_string(&out).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    eprintln!("{text}");
    assert!(!text.contains("ERROR\t"), "{text}");
    assert_eq!(line(&text, "ATTACHED"), Some("true"), "{text}");
    assert!(line(&text, "DIAGNOSTICS").is_some_and(|d| !d.starts_with('0')), "{text}");
    assert!(line(&text, "PREVIEW").is_some_and(|p| p.starts_with("true\t1\ttrue")), "a diff preview: {text}");
    assert_eq!(line(&text, "PREVIEW_FILE"), Some("shop/prices.py"), "{text}");
    assert_eq!(line(&text, "CLEARED"), Some("true"), "the test diagnostic clears: {text}");
    // The buffer was written: the project's tests pass on disk now.
    assert!(common::pytest_passes(&root), "the accepted patch turns the tests green:\n{text}");
    // What the buffer held right after Accept is the patched file (and `:wall` wrote that).
    let patched = line(&text, "PATCHED").unwrap_or_default().replace("\\n", "\n");
    let on_disk = std::fs::read_to_string(root.join("shop/prices.py")).unwrap();
    assert_eq!(patched.trim_end(), on_disk.trim_end(), "the buffer after Accept is the file the tests passed on");
    assert_ne!(on_disk.trim_end(), original.trim_end(), "Accept changed the buffer");
    assert_eq!(line(&text, "CHAT_DONE"), Some("true"), "{text}");
    let reply = line(&text, "REPLY").unwrap_or_default();
    assert!(reply.contains("shop/shipping.py"), "the chat reply cites the unopened file: {reply}");
    let loaded = line(&text, "LOADED").unwrap_or_default();
    assert!(!loaded.contains("shipping.py"), "shipping.py was never opened: {loaded}");
    assert!(text.trim_end().ends_with("DONE"), "{text}");
}
