//! Code actions, commands and the outline through a real client.

mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

fn titles(actions: &Value) -> Vec<String> {
    actions.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap().to_string()).collect()
}

#[test]
fn code_actions_offer_the_quickfix_and_rewrites() {
    let mut client = LspClient::spawn();
    client.initialize(&["utf-8"], json!({}));
    let uri = file_uri(client.root(), "calc.py");
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "python", "version": 3, "text": "def f(a):\n    return a + b\n"}}));
    let diag = json!({"range": {"start": {"line": 1, "character": 15}, "end": {"line": 1, "character": 16}},
                      "severity": 1, "source": "pyright", "message": "\"b\" is not defined"});
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 16}},
                "context": {"diagnostics": [diag]}
            }),
        )
        .unwrap();
    expect_test::expect![[r#"
        [
            "tinycoder: fix \"b\" is not defined",
            "tinycoder: edit selection…",
            "tinycoder: document",
            "tinycoder: write tests",
            "tinycoder: explain",
            "tinycoder: fix all checker errors in this file",
        ]
    "#]]
    .assert_debug_eq(&titles(&actions));
    let fix = &actions[0];
    assert_eq!(fix["kind"], json!("quickfix"));
    assert_eq!(fix["isPreferred"], json!(true));
    assert_eq!(fix["diagnostics"], json!([diag]));
    assert_eq!(fix["command"]["command"], json!("tinycoder.fix"));
    assert_eq!(
        fix["data"],
        json!({"action": "fix", "uri": uri, "version": 3, "range": diag["range"], "diagnostic": diag})
    );
    assert_eq!(actions[1]["kind"], json!("refactor.rewrite"));

    // Every action carries its command already: resolve is not offered. only= filters kinds.
    let err = client.request("codeAction/resolve", fix.clone()).unwrap_err();
    assert_eq!(err["code"], json!(-32601), "{err}");
    let only = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri},
            "range": diag["range"], "context": {"diagnostics": [diag], "only": ["refactor"]}}),
        )
        .unwrap();
    assert_eq!(only.as_array().unwrap().len(), 4);

    // A command with nothing to work on: a clear error, not a fake result.
    let err = client.request("workspace/executeCommand", json!({"command": "tinycoder.commit"})).unwrap_err();
    assert_eq!(err["code"], json!(-32803));
    assert!(err["message"].as_str().unwrap().contains("nothing to commit"), "{err}");
    let err = client.request("workspace/executeCommand", json!({"command": "tinycoder.nope"})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("unknown command"), "{err}");
    let cancel = client
        .request("workspace/executeCommand", json!({"command": "tinycoder.cancel", "arguments": ["no-such-job"]}))
        .unwrap();
    assert_eq!(cancel["cancelled"], json!(false));
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn capabilities_list_every_command_and_the_outline_nests() {
    let mut client = LspClient::spawn();
    let init = client.initialize(&[], json!({}));
    let caps = &init["capabilities"];
    expect_test::expect![[r#"
        [
            "tinycoder.fix",
            "tinycoder.fixAll",
            "tinycoder.edit",
            "tinycoder.ask",
            "tinycoder.explain",
            "tinycoder.document",
            "tinycoder.generateTests",
            "tinycoder.runTests",
            "tinycoder.index",
            "tinycoder.memory.search",
            "tinycoder.memory.delete",
            "tinycoder.cancel",
            "tinycoder.tasks",
            "tinycoder.commit",
            "tinycoder.undo",
            "tinycoder.run",
        ]
    "#]]
    .assert_debug_eq(
        &caps["executeCommandProvider"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect::<Vec<_>>(),
    );
    assert_eq!(caps["codeActionProvider"]["resolveProvider"], json!(false));
    assert_eq!(caps["positionEncoding"], json!("utf-16"));
    assert_eq!(caps["workspace"]["workspaceFolders"]["supported"], json!(true));
    let uri = file_uri(client.root(), "lib.rs");
    let src = "mod geo {\n    pub struct P { x: i32 }\n    impl P {\n        pub fn new() -> Self { P { x: 0 } }\n    }\n}\nfn main() {}\n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": src}}),
    );
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).unwrap();
    fn tree(v: &Value, depth: usize, out: &mut Vec<String>) {
        for s in v.as_array().into_iter().flatten() {
            out.push(format!(
                "{}{} kind={} line={}",
                "  ".repeat(depth),
                s["name"].as_str().unwrap(),
                s["kind"],
                s["range"]["start"]["line"]
            ));
            tree(&s["children"], depth + 1, out);
        }
    }
    let mut out = Vec::new();
    tree(&symbols, 0, &mut out);
    expect_test::expect![[r#"
        [
            "geo kind=2 line=0",
            "  P kind=23 line=1",
            "  impl P kind=19 line=2",
            "    new kind=6 line=3",
            "main kind=12 line=6",
        ]
    "#]]
    .assert_debug_eq(&out);
    assert!(client.shutdown_and_exit().success());
}
