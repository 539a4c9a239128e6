//! References (calls, imports, type uses) of a parsed file, for ranking files
//! in the repo map. Comes from the grammar's tags query plus the language's
//! `references_query`; both are compiled once per language, as one query (one
//! walk of the tree).

use super::{LanguageSpec, LANGUAGES};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Query, QueryCursor, Tree};

/// What kind of use a reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    Call,
    Type,
    Import,
    Implementation,
    Use,
}

/// One use of a name in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The name used (an import keeps its dotted/`::` path, e.g. `email.utils`).
    pub name: String,
    pub kind: ReferenceKind,
    /// 0-based line of the use.
    pub line: usize,
}

struct Compiled {
    name: &'static str,
    query: Option<Query>,
}

fn compiled() -> &'static [Compiled] {
    static CACHE: OnceLock<Vec<Compiled>> = OnceLock::new();
    CACHE.get_or_init(|| {
        LANGUAGES
            .iter()
            .map(|l| {
                let grammar = (l.grammar)();
                // One query of both sources: each query is a walk of the whole tree.
                let source = format!("{}\n{}", l.tags_query, l.references_query);
                let query = match Query::new(&grammar, &source) {
                    Ok(q) => Some(only_references(q)),
                    // A bad built-in query is a bug; ranking degrades instead of failing.
                    Err(e) => {
                        tracing::error!("reference query of {} does not compile: {e}", l.name);
                        None
                    }
                };
                Compiled { name: l.name, query }
            })
            .collect()
    })
}

/// `query` with every pattern that captures no `reference.*` disabled: the
/// tags query is mostly definitions (with doc-comment predicates), which
/// cost match time here and are read from the symbol walk instead.
fn only_references(mut query: Query) -> Query {
    let names: Vec<bool> = query.capture_names().iter().map(|n| kind_of(n).is_some()).collect();
    for pattern in 0..query.pattern_count() {
        let captures = query.capture_quantifiers(pattern);
        let has_reference =
            captures.iter().zip(&names).any(|(q, &is_ref)| is_ref && *q != tree_sitter::CaptureQuantifier::Zero);
        if !has_reference {
            query.disable_pattern(pattern);
        }
    }
    query
}

fn kind_of(capture: &str) -> Option<ReferenceKind> {
    Some(match capture.strip_prefix("reference.")? {
        "call" => ReferenceKind::Call,
        "type" | "class" => ReferenceKind::Type,
        "import" => ReferenceKind::Import,
        "implementation" => ReferenceKind::Implementation,
        _ => ReferenceKind::Use,
    })
}

/// Every reference of `tree`, deduplicated by (name, kind, line), in document order.
pub fn extract_references(lang: &LanguageSpec, tree: &Tree, src: &[u8]) -> Vec<Reference> {
    let Some(query) = compiled().iter().find(|c| c.name == lang.name).and_then(|c| c.query.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        let kind = m.captures.iter().find_map(|cap| kind_of(names[cap.index as usize]));
        let Some(kind) = kind else { continue };
        for cap in m.captures.iter().filter(|cap| names[cap.index as usize] == "name") {
            let text = String::from_utf8_lossy(&src[cap.node.byte_range()]);
            let line = cap.node.start_position().row;
            if kind == ReferenceKind::Import {
                push_import(&text, line, &mut out);
            } else {
                out.push(Reference { name: text.into_owned(), kind, line });
            }
        }
    }
    out.sort_by(|a, b| (a.line, &a.name).cmp(&(b.line, &b.name)));
    out.dedup_by(|a, b| a.line == b.line && a.name == b.name && a.kind == b.kind);
    out
}

/// An import keeps its whole path (to find the imported module) and each of its names.
fn push_import(text: &str, line: usize, out: &mut Vec<Reference>) {
    let path: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if path.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == ':') {
        out.push(Reference { name: path.trim_start_matches('.').to_string(), kind: ReferenceKind::Import, line });
    }
    for part in path.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|p| !p.is_empty()) {
        if !matches!(part, "crate" | "self" | "super" | "as") {
            out.push(Reference { name: part.to_string(), kind: ReferenceKind::Import, line });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{language_by_name, parse};

    fn refs(lang: &str, src: &str) -> Vec<(String, ReferenceKind)> {
        let l = language_by_name(lang).unwrap();
        let tree = parse(l, src).unwrap();
        extract_references(l, &tree, src.as_bytes()).into_iter().map(|r| (r.name, r.kind)).collect()
    }

    #[test]
    fn rust_calls_types_imports() {
        let got = refs(
            "rust",
            "use crate::config::LoadedConfig;\nfn f(c: Config) { let x = Parser::new(); helper(); x.run(); }\n",
        );
        for want in [
            ("crate::config::LoadedConfig".to_string(), ReferenceKind::Import),
            ("LoadedConfig".into(), ReferenceKind::Import),
            ("Config".into(), ReferenceKind::Type),
            ("new".into(), ReferenceKind::Call),
            ("helper".into(), ReferenceKind::Call),
            ("run".into(), ReferenceKind::Call),
        ] {
            assert!(got.contains(&want), "{want:?} missing from {got:?}");
        }
    }

    #[test]
    fn python_calls_imports_bases() {
        let got = refs("python", "import os.path\nfrom email.utils import parseaddr\nclass A(Base):\n    def f(self) -> Thing:\n        return parseaddr(os.sep)\n");
        for want in [
            ("os.path".to_string(), ReferenceKind::Import),
            ("email.utils".into(), ReferenceKind::Import),
            ("parseaddr".into(), ReferenceKind::Import),
            ("Base".into(), ReferenceKind::Type),
            ("Thing".into(), ReferenceKind::Type),
            ("parseaddr".into(), ReferenceKind::Call),
        ] {
            assert!(got.contains(&want), "{want:?} missing from {got:?}");
        }
    }
}
