//! A real LSP client drives the built server through thousands of incremental
//! edits; the server's text, version and outline must match the client's mirror.

mod lsp_client;

use lsp_client::{file_uri, LspClient, MirrorDoc, Rng};
use serde_json::{json, Value};

const INITIAL: &str = "# header é\nclass Shape:\r\n    # in the class 😀\r\n    def area(self):\r\n        return 0\r\n\r\ndef top(x):\n    # inner e\u{301}\n    return x\n";
const PIECES: &[&str] = &["é", "e\u{301}", "😀", "中", "a", "𝕏", " ", "ß"];

/// One structure-keeping random edit (so an incremental parse must equal a fresh one).
fn random_edit(doc: &mut MirrorDoc, rng: &mut Rng, n: usize) -> Value {
    let chars: Vec<char> = doc.text.chars().collect();
    let lines = doc.lines();
    let starts_with = |(s, l): (usize, usize), p: &str| {
        let p: Vec<char> = p.chars().collect();
        l >= p.len() && chars[s..s + p.len()] == p[..]
    };
    let first_non_space = |(s, l): (usize, usize)| chars[s..s + l].iter().position(|c| *c != ' ').map(|i| s + i);
    let comment_lines: Vec<(usize, usize)> =
        lines.iter().copied().filter(|l| first_non_space(*l).is_some_and(|i| chars[i] == '#')).collect();
    let top_starts: Vec<usize> = lines
        .iter()
        .copied()
        .filter(|l| {
            starts_with(*l, "def ")
                || starts_with(*l, "class ")
                || starts_with(*l, "#")
                || (l.1 == 0 && l.0 == chars.len())
        })
        .map(|(s, _)| s)
        .collect();
    let nl = if rng.below(2) == 0 { "\n" } else { "\r\n" };
    let kind = rng.below(100);
    if kind < 55 && !comment_lines.is_empty() {
        let (s, l) = *rng.pick(&comment_lines);
        let lo = first_non_space((s, l)).unwrap_or(s) + 1;
        let hi = s + l;
        let a = lo + rng.below(hi - lo + 1);
        let b = a + rng.below(hi - a + 1).min(3);
        let insert: String = (0..rng.below(4)).map(|_| *rng.pick(PIECES)).collect();
        return doc.edit(a, b, &insert);
    }
    // Keep the file small: past 120 lines, remove a whole top-level block instead of adding one.
    if lines.len() > 120 && top_starts.len() > 2 {
        let i = 1 + rng.below(top_starts.len() - 2);
        return doc.edit(top_starts[i], top_starts[i + 1], "");
    }
    let at = *rng.pick(&top_starts);
    if kind < 70 {
        doc.edit(at, at, &format!("def f{n}(a):{nl}    # ünï 😀{nl}    return a{nl}"))
    } else if kind < 80 {
        doc.edit(at, at, &format!("class K{n}:{nl}    def m{n}(self):{nl}        return 1{nl}"))
    } else if kind < 90 {
        doc.edit(at, at, &format!("# 中😀 {n}{nl}"))
    } else {
        let tops: Vec<(usize, usize)> = lines.iter().copied().filter(|l| starts_with(*l, "#")).collect();
        if tops.is_empty() {
            return doc.edit(at, at, "# x\n");
        }
        let (s, l) = tops[rng.below(tops.len())];
        let next = lines.iter().map(|x| x.0).find(|x| *x > s).unwrap_or(s + l);
        doc.edit(s, next, "")
    }
}

/// The client's own outline: a fresh tree-sitter parse of the mirror, ranges converted naively.
fn client_symbols(doc: &MirrorDoc) -> Vec<Value> {
    let lang = tinycoder::syntax::language_by_name("python").unwrap();
    let tree = tinycoder::syntax::parse(lang, &doc.text).unwrap();
    let pos = |b: usize| {
        let (l, c) = doc.position_of_byte(b);
        json!({"line": l, "character": c})
    };
    tinycoder::syntax::extract_symbols(lang, &tree, doc.text.as_bytes())
        .iter()
        .map(|s| {
            json!([s.name, {"start": pos(s.byte_range.start), "end": pos(s.byte_range.end)},
                   {"start": pos(s.name_range.start), "end": pos(s.name_range.end)}])
        })
        .collect()
}

fn flatten(symbols: &Value, out: &mut Vec<Value>) {
    for s in symbols.as_array().into_iter().flatten() {
        out.push(json!([s["name"], s["range"], s["selectionRange"]]));
        flatten(&s["children"], out);
    }
}

fn check(client: &mut LspClient, uri: &str, doc: &MirrorDoc, version: i32) {
    let got = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": uri}})).expect("debugDocument");
    assert_eq!(got["version"], json!(version));
    assert_eq!(got["encoding"], json!(doc.encoding));
    assert!(got["text"] == json!(doc.text), "server text differs from the client's at version {version}");
    let symbols =
        client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).expect("symbols");
    let mut flat = Vec::new();
    flatten(&symbols, &mut flat);
    assert_eq!(flat, client_symbols(doc), "outline differs at version {version}");
}

fn run_edits(offered: &[&str], expected: &str, edits: usize, seed: u64) {
    let mut client = LspClient::spawn();
    let init = client.initialize(offered, json!({}));
    assert_eq!(init["capabilities"]["positionEncoding"], json!(expected));
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], json!(2));
    let uri = file_uri(client.root(), "shapes.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": INITIAL}}),
    );
    let mut doc = MirrorDoc { text: INITIAL.to_string(), encoding: expected.to_string() };
    let mut rng = Rng(seed);
    let (mut version, mut done) = (0, 0);
    while done < edits {
        let batch = 1 + rng.below(3);
        let changes: Vec<Value> = (0..batch).map(|i| random_edit(&mut doc, &mut rng, done + i)).collect();
        done += batch;
        version += 1;
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
        if version % 500 == 0 {
            check(&mut client, &uri, &doc, version);
        }
    }
    check(&mut client, &uri, &doc, version);
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn ten_thousand_random_edits_utf16() {
    run_edits(&[], "utf-16", 10_000, 0x9E3779B97F4A7C15);
}

#[test]
fn random_edits_utf8_preferred_when_offered() {
    run_edits(&["utf-16", "utf-8"], "utf-8", 2_000, 42);
}

#[test]
fn random_edits_utf32() {
    run_edits(&["utf-32", "utf-16"], "utf-32", 2_000, 7);
}

#[test]
fn burst_of_1000_changes_without_waiting() {
    let mut client = LspClient::spawn();
    client.initialize(&["utf-16"], json!({}));
    let uri = file_uri(client.root(), "notes.txt");
    let initial = "line one\r\nzwei 😀\rdrei\n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": initial}}),
    );
    let mut doc = MirrorDoc { text: initial.to_string(), encoding: "utf-16".into() };
    let mut rng = Rng(12345);
    let inserts = ["a", "é", "😀", "\r\n", "\r", "\n", "中e\u{301}", ""];
    for v in 2..1002 {
        let n = doc.text.chars().count();
        let chars: Vec<char> = doc.text.chars().collect();
        // An editor cannot put a position between the \r and \n of a CRLF.
        let outside_crlf = |i: usize| {
            if i > 0 && i < n && chars[i - 1] == '\r' && chars[i] == '\n' {
                i - 1
            } else {
                i
            }
        };
        let a = outside_crlf(rng.below(n + 1));
        let b = outside_crlf((a + rng.below(4)).min(n)).max(a);
        let insert = *rng.pick(&inserts);
        let change = doc.edit(a, b, insert);
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]}),
        );
    }
    let got = client.request("tinycoder/debugDocument", json!({"textDocument": {"uri": uri}})).unwrap();
    assert_eq!(got["version"], json!(1001));
    assert_eq!(got["text"], json!(doc.text));
    assert!(client.shutdown_and_exit().success());
}
