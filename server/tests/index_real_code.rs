//! The index on real code: this project's source and the machine's Python
//! standard library (real tree-sitter, real tantivy).
//! Run: cargo test --test index_real_code

use std::path::{Path, PathBuf};
use tinycoder::config::{ConfigInputs, IndexConfig, LoadedConfig};
use tinycoder::index::{analyse, WorkspaceIndex};
use tokio_util::sync::CancellationToken;

fn index_cfg() -> IndexConfig {
    let mut c = LoadedConfig::load(&ConfigInputs::default()).unwrap().config.index;
    c.watch = false;
    c
}

/// The Python 3 standard library of the machine.
fn stdlib() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3 must be installed for these tests");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn stdlib_symbols_match_hand_checked_lines() {
    let lib = stdlib();
    let cfg = index_cfg();
    // (file, symbol, kind, first line, last line, doc starts with), checked against Python's `ast`.
    let cases = [
        ("json/decoder.py", "py_scanstring", "function", 69, 126, "Scan the string s for a JSON string."),
        ("json/decoder.py", "JSONDecoder", "class", 254, 356, "Simple JSON <https://json.org> decoder"),
        ("json/decoder.py", "raw_decode", "method", 343, 356, "Decode a JSON document from ``s``"),
        ("email/utils.py", "parseaddr", "function", 208, 218, "Parse addr into its constituent realname"),
        ("collections/__init__.py", "OrderedDict", "class", 78, 331, "Dictionary that remembers insertion order"),
        ("collections/__init__.py", "namedtuple", "function", 350, 518, "Returns a new subclass of tuple"),
        ("collections/__init__.py", "most_common", "method", 610, 624, "List the n most common elements"),
        ("textwrap.py", "TextWrapper", "class", 17, 368, "Object for wrapping/filling text."),
        ("textwrap.py", "_wrap_chunks", "method", 238, 339, "_wrap_chunks(chunks : [string])"),
        ("textwrap.py", "dedent", "function", 419, 467, "Remove any common leading whitespace"),
    ];
    for (file, name, kind, first, last, doc) in cases {
        let a = analyse(file, &read(&lib.join(file)), &cfg);
        let s = a.symbols.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{file}: no symbol {name}"));
        assert_eq!((s.kind.as_str(), s.start_line, s.end_line), (kind, first, last), "{file} {name}");
        let chunk = a.chunks.iter().find(|c| c.symbol == name).unwrap();
        assert!(chunk.doc.trim_start().starts_with(doc), "{file} {name}: doc {:?}", chunk.doc);
    }
    let a = analyse("json/decoder.py", &read(&lib.join("json/decoder.py")), &cfg);
    let raw = a.chunks.iter().find(|c| c.symbol == "raw_decode").unwrap();
    assert_eq!(raw.container, "JSONDecoder");
    assert_eq!(raw.signature, "def raw_decode(self, s, idx=0)");
}

#[test]
fn own_source_symbols_match_hand_checked_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/sections/core.rs");
    let text = read(&src);
    let a = analyse("src/config/sections/core.rs", &text, &index_cfg());
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    for (name, kind, needle) in [
        ("parse_keep_alive", "function", "pub fn parse_keep_alive"),
        ("BudgetConfig", "struct", "pub struct BudgetConfig"),
        ("ModelRole", "enum", "pub enum ModelRole"),
    ] {
        let s = a.symbols.iter().find(|s| s.name == name).unwrap();
        assert_eq!((s.kind.as_str(), s.start_line), (kind, line_of(needle)), "{name}");
    }
    let f = a.symbols.iter().find(|s| s.name == "parse_keep_alive").unwrap();
    assert_eq!(f.signature, "pub fn parse_keep_alive(s: &str) -> Result<i64, String>");
}

#[test]
fn own_source_indexes_and_warm_start_reindexes_nothing() {
    let cache = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let cfg = index_cfg();
    let cancel = CancellationToken::new();
    let first = {
        let idx = WorkspaceIndex::open(&root, cache.path(), &cfg).unwrap();
        let s = idx.index_all(|_| {}, &cancel).unwrap();
        let hits = idx.search("parse_keep_alive", 3).unwrap();
        assert_eq!(hits[0].symbol, "parse_keep_alive", "{hits:?}");
        s
    };
    assert!(first.indexed > 40 && first.symbols > 300, "{first:?}");
    let idx = WorkspaceIndex::open(&root, cache.path(), &cfg).unwrap();
    let warm = idx.index_all(|_| {}, &cancel).unwrap();
    assert_eq!((warm.indexed, warm.removed, warm.unchanged), (0, 0, first.files), "{warm:?}");
    assert_eq!(warm.chunks, first.chunks);
    assert_eq!(idx.store().num_chunks() as usize, first.chunks);
}
