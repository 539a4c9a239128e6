//! Neovim headless runs the editors/nvim plugin's chat buffer without a server:
//! a reply whose response overtakes its last streamed delta (the server's
//! notifications and responses are separate queues) is completed from the
//! response, and the late delta is not shown twice. Needs `nvim` (Debian's
//! `neovim`); runs on each Neovim of `TINYCODER_NVIMS`.

mod common;

use common::line;
use std::time::Duration;

#[test]
fn neovim_chat_completes_a_reply_whose_response_overtakes_its_last_delta() {
    for nvim in common::nvim::neovims() {
        completes_the_reply(&nvim);
    }
}

fn completes_the_reply(nvim: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    let text =
        common::nvim::run_script(nvim, "chat_order.lua", dir.path(), dir.path(), vec![], Duration::from_secs(60));
    assert!(!text.contains("ERROR\t"), "{text}");
    let footer = "\\n\\nSources: [shop/shipping.py:4](file:///p/shop/shipping.py#L4)";
    let whole = format!("Shipping is doubled.{footer}");
    assert_eq!(line(&text, "LATE_REPLY"), Some(whole.as_str()), "{text}");
    let late = line(&text, "LATE_BUFFER").unwrap_or_default();
    assert!(late.ends_with(&whole), "the buffer shows the whole reply: {text}");
    assert_eq!(late.matches("Sources:").count(), 1, "the late delta is not shown twice: {text}");
    assert_eq!(line(&text, "ORDERED_REPLY"), Some("Two."), "{text}");
    let ordered = line(&text, "ORDERED_BUFFER").unwrap_or_default();
    assert!(ordered.ends_with(&format!("{whole}Two.")), "nothing added in the usual order: {text}");
    assert!(text.trim_end().ends_with("DONE"), "{text}");
}
