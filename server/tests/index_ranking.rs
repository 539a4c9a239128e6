//! The search ranking on small real workspaces (real tree-sitter and tantivy):
//! test code below the code it tests, error output resolved to the definition it
//! points at, docstrings matched as English.
//! Run: cargo test --release --test index_ranking

use tinycoder::config::{ConfigInputs, LoadedConfig};
use tinycoder::index::WorkspaceIndex;
use tokio_util::sync::CancellationToken;

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, WorkspaceIndex) {
    let ws = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = ws.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let mut cfg = LoadedConfig::load(&ConfigInputs::default()).unwrap().config.index;
    cfg.watch = false;
    let idx = WorkspaceIndex::open(ws.path(), cache.path(), &cfg).unwrap();
    idx.index_all(|_| {}, &CancellationToken::new()).unwrap();
    (ws, cache, idx)
}

fn top(idx: &WorkspaceIndex, query: &str) -> Vec<String> {
    idx.search(query, 5).unwrap().into_iter().map(|h| format!("{}::{}", h.path, h.symbol)).collect()
}

const MONEY: &str = r#"
def round_cents(amount):
    """Round an amount of money to whole cents, ties to the even cent."""
    return round(amount, 2)
"#;
const MONEY_TEST: &str = r#"
from money import round_cents

def test_round_cents_ties_to_even():
    # rounding an amount of money to cents: ties go to the even cent
    assert round_cents(2.345) == 2.34
    assert round_cents(2.355) == 2.36
"#;
const PARSER_RS: &str = r#"
/// Reads a decimal number of cents from text such as `12.34`.
pub fn parse_cents(text: &str) -> Option<u64> {
    let (whole, cents) = text.split_once('.')?;
    Some(whole.parse::<u64>().ok()? * 100 + cents.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_cents_reads_a_decimal_number_of_cents() {
        assert_eq!(parse_cents("12.34"), Some(1234));
        assert_eq!(parse_cents("decimal number of cents"), None);
    }
}
"#;

#[test]
fn test_code_ranks_below_the_code_it_tests_unless_asked_for() {
    let (_ws, _cache, idx) =
        workspace(&[("money.py", MONEY), ("tests/test_money.py", MONEY_TEST), ("src/parser.rs", PARSER_RS)]);
    let hits = idx.search("round an amount of money to cents, ties to even", 5).unwrap();
    assert_eq!(hits[0].symbol, "round_cents", "{:?}", top(&idx, "round an amount of money to cents"));
    assert!(!hits[0].is_test);
    let test_rank = hits.iter().position(|h| h.symbol == "test_round_cents_ties_to_even");
    assert!(test_rank.is_none_or(|r| r > 0) && hits.iter().any(|h| h.is_test), "{hits:?}");
    // The Rust test sits in the same file, marked by #[cfg(test)] and #[test].
    let hits = idx.search("read a decimal number of cents", 5).unwrap();
    assert_eq!(hits[0].symbol, "parse_cents", "{hits:?}");
    let t = hits.iter().find(|h| h.symbol == "parse_cents_reads_a_decimal_number_of_cents").expect("the test is found");
    assert!(t.is_test);
    // Asking about tests: the test comes first.
    let hits = idx.search("tests of rounding money to even cents", 5).unwrap();
    assert_eq!(hits[0].symbol, "test_round_cents_ties_to_even", "{hits:?}");
}

#[test]
fn a_traceback_finds_the_function_that_raised() {
    let lib = r#"
def load(text):
    return decode(text)

def decode(text):
    if not text:
        raise ValueError("Expecting value")
    return text

def encode(value):
    raise ValueError("Expecting value to encode")
"#;
    let (_ws, _cache, idx) = workspace(&[("pkg/codec.py", lib), ("pkg/other.py", "def decode():\n    pass\n")]);
    // The installed copy's absolute path, and a line number of another version: the name decides.
    let tb = r#"Traceback (most recent call last):
  File "/home/me/app.py", line 3, in <module>
    codec.load("")
  File "/usr/lib/python3/site-packages/pkg/codec.py", line 3, in load
    return decode(text)
  File "/usr/lib/python3/site-packages/pkg/codec.py", line 99, in decode
    raise ValueError("Expecting value")
ValueError: Expecting value
"#;
    assert_eq!(top(&idx, tb)[..2], ["pkg/codec.py::decode", "pkg/codec.py::load"]);
    // The exception line alone: the message decides.
    assert_eq!(top(&idx, "ValueError: Expecting value to encode")[0], "pkg/codec.py::encode");
}

#[test]
fn a_rust_compiler_note_finds_the_definition_it_points_at() {
    let (_ws, _cache, idx) = workspace(&[("src/parser.rs", PARSER_RS), ("src/lib.rs", "pub mod parser;\n")]);
    let out = "error[E0308]: mismatched types
 --> src/main.rs:4:28
  |
4 |     let c = parse_cents(String::from(\"1.5\"));
  |             ----------- ^^^^^^^^^^^^^^^^^^^ expected `&str`, found `String`
  |
note: function defined here
 --> /home/me/.cargo/registry/src/index/cents-0.1.0/src/parser.rs:3:8
";
    assert_eq!(top(&idx, out)[0], "src/parser.rs::parse_cents");
}

#[test]
fn docstrings_and_comments_match_other_forms_of_a_word() {
    let lib = r#"
def purge(folder):
    """Removes the folder and every file inside it."""
    ...

def keep(folder):
    # folders listed here are never touched
    ...
"#;
    let (_ws, _cache, idx) = workspace(&[("tools.py", lib)]);
    assert_eq!(top(&idx, "remove a folder with all its files")[0], "tools.py::purge");
    assert_eq!(top(&idx, "which folder is never touched")[0], "tools.py::keep");
}
