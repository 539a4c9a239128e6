//! The Helix snippets in editors/helix read as TOML, start tinycoder the way
//! Helix will, and name only commands the server advertises.

mod lsp_client;

use lsp_client::LspClient;
use serde_json::json;

fn read(name: &str) -> toml::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/helix").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()))
}

/// Every `tinycoder.*` command named in a string of `v`.
fn commands_in(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::String(s) => {
            out.extend(s.split_whitespace().filter(|w| w.starts_with("tinycoder.")).map(String::from))
        }
        toml::Value::Array(a) => a.iter().for_each(|x| commands_in(x, out)),
        toml::Value::Table(t) => t.values().for_each(|x| commands_in(x, out)),
        _ => {}
    }
}

#[test]
fn the_helix_snippets_name_only_advertised_commands() {
    let languages = read("languages.toml");
    let server = &languages["language-server"]["tinycoder"];
    assert_eq!(server["command"].as_str(), Some("tinycoder"));
    assert_eq!(server["args"].as_array().map(|a| a.len()), Some(1));
    assert_eq!(server["args"][0].as_str(), Some("lsp"));
    for (lang, beside) in [("rust", "rust-analyzer"), ("python", "pyright")] {
        let entry = languages["language"].as_array().unwrap().iter().find(|l| l["name"].as_str() == Some(lang));
        let servers: Vec<&str> = entry.unwrap_or_else(|| panic!("no [[language]] {lang}"))["language-servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s.as_str())
            .collect();
        assert_eq!(servers, [beside, "tinycoder"], "{lang}");
    }

    // The server starts with the snippet's `config` as initializationOptions and advertises its commands.
    let options: serde_json::Value = serde_json::to_value(&server["config"]).unwrap();
    let mut client = LspClient::spawn();
    let init = client.initialize(&["utf-16"], options);
    let advertised: Vec<String> =
        serde_json::from_value(init["capabilities"]["executeCommandProvider"]["commands"].clone()).unwrap();
    let mut named = Vec::new();
    commands_in(&languages, &mut named);
    commands_in(&read("config.toml"), &mut named);
    assert!(named.len() >= 3, "the key snippet names the commands it runs: {named:?}");
    for c in &named {
        assert!(advertised.contains(c), "{c} is named in editors/helix but not advertised ({advertised:?})");
    }
    // No error message about the configuration.
    for m in client.inbox.iter() {
        assert!(m["method"] != "window/showMessage" || m["params"]["type"] != json!(1), "{m:#}");
    }
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}
