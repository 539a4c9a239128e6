//! The index on real code: this project's source and the machine's Python
//! standard library (real tree-sitter, real tantivy), checked against Python's
//! own `ast` (`tests/python/ast_symbols.py`).
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

/// What Python's own `ast` says about definitions of a file (`tests/python/ast_symbols.py`).
#[derive(Debug, serde::Deserialize)]
struct AstSymbol {
    qualname: String,
    kind: String,
    first_line: usize,
    last_line: usize,
    doc: Option<String>,
    decorated: bool,
    is_async: bool,
    nested_class: bool,
    nested_in_function: bool,
}

fn ast_symbols(file: &Path, qualnames: &[&str]) -> Vec<AstSymbol> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/ast_symbols.py");
    let out = std::process::Command::new("python3").arg(&script).arg(file).args(qualnames).output().expect("python3");
    assert!(out.status.success(), "{script:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{file:?}: {e}: {l}"));
            assert!(v.get("missing").is_none(), "{file:?}: Python's ast finds no {}", v["missing"]);
            serde_json::from_value(v).unwrap_or_else(|e| panic!("{file:?}: {e}: {l}"))
        })
        .collect()
}

/// The dotted names of a symbol's enclosing symbols and its own (`Outer.Inner.method`).
fn qualname(symbols: &[tinycoder::index::SymbolEntry], i: usize) -> String {
    let mut names = vec![symbols[i].name.as_str()];
    let mut p = symbols[i].parent;
    while let Some(j) = p {
        names.push(symbols[j].name.as_str());
        p = symbols[j].parent;
    }
    names.reverse();
    names.join(".")
}

/// Kind, first and last line and docstring of definitions of varied shape in the
/// installed Python's standard library, checked against Python's own parser, so
/// the expected values hold for any Python 3.8+ and a drift of tinycoder's
/// tree-sitter extraction (a decorator counted in, a nested definition given the
/// wrong kind, an `async def` missed, a docstring cut) fails.
///
/// Both sides start a decorated definition at its `def` line: tinycoder's symbol
/// is the `function_definition` node inside tree-sitter's `decorated_definition`,
/// as `ast`'s `lineno` is the `def` line; the decorator lines are outside the
/// symbol's range.
#[test]
fn stdlib_symbols_match_pythons_own_ast() {
    let lib = stdlib();
    let cfg = index_cfg();
    // Names present in every Python 3.8+ standard library.
    let cases: [(&str, &[&str]); 9] = [
        ("json/decoder.py", &["py_scanstring", "JSONDecoder", "JSONDecoder.raw_decode"]),
        (
            "collections/__init__.py",
            &["OrderedDict", "namedtuple", "namedtuple._make", "Counter.fromkeys", "Counter.most_common"],
        ),
        (
            "argparse.py",
            &["HelpFormatter._Section", "HelpFormatter._Section.format_help", "_SubParsersAction._ChoicesPseudoAction"],
        ),
        ("asyncio/tasks.py", &["__sleep0", "sleep"]),
        ("asyncio/locks.py", &["Lock.acquire"]),
        ("fractions.py", &["Fraction.numerator"]),
        ("textwrap.py", &["TextWrapper", "TextWrapper._wrap_chunks", "dedent"]),
        ("email/utils.py", &["parseaddr"]),
        ("functools.py", &["partial.__repr__"]),
    ];
    let mut checked = Vec::new();
    for (file, names) in cases {
        let path = lib.join(file);
        let a = analyse(file, &read(&path), &cfg);
        for want in ast_symbols(&path, names) {
            let i = (0..a.symbols.len())
                .find(|&i| qualname(&a.symbols, i) == want.qualname)
                .unwrap_or_else(|| panic!("{file}: tinycoder has no symbol {}", want.qualname));
            let s = &a.symbols[i];
            assert_eq!(
                (s.kind.as_str(), s.start_line, s.end_line),
                (want.kind.as_str(), want.first_line, want.last_line),
                "{file} {}: tinycoder (kind, first, last) vs Python's ast",
                want.qualname
            );
            // Every chunk of the definition (a large one is split in windows) carries its docstring.
            let container = want.qualname.rsplit_once('.').map_or("", |(c, _)| c);
            let chunks: Vec<_> = a.chunks.iter().filter(|c| c.symbol == s.name && c.container == container).collect();
            assert!(!chunks.is_empty(), "{file} {}: no chunk", want.qualname);
            for c in &chunks {
                assert_eq!(c.doc, want.doc.clone().unwrap_or_default(), "{file} {}: docstring", want.qualname);
                assert!(c.start_line >= want.first_line && c.end_line <= want.last_line, "{file} {}", want.qualname);
            }
            checked.push(want);
        }
    }
    // The cases cover every shape, whatever this Python's library looks like.
    let covers = |what: &str, f: fn(&AstSymbol) -> bool| assert!(checked.iter().any(f), "no {what} among {checked:#?}");
    covers("decorated function", |s| s.decorated && s.kind == "function" && !s.nested_in_function);
    covers("decorated method", |s| s.decorated && s.kind == "method");
    covers("async function", |s| s.is_async && s.kind == "function");
    covers("async method", |s| s.is_async && s.kind == "method");
    covers("nested class", |s| s.nested_class);
    covers("method of a nested class", |s| s.kind == "method" && s.qualname.matches('.').count() == 2);
    covers("function nested in a function", |s| s.nested_in_function);
    covers("docstring", |s| s.doc.is_some());
    covers("definition without a docstring", |s| s.doc.is_none());
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
