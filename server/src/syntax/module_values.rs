//! Values defined at the top of a module (Python assignments, Rust `const` and
//! `static` items): the data a test passes to the code under test.

use super::{parse, LanguageSpec};

/// A module-level value: its name and 1-based first and last lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleValue {
    pub name: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// The module-level values of `text`, in file order; empty when it does not
/// parse or the language has none.
pub fn module_values(lang: &'static LanguageSpec, text: &str) -> Vec<ModuleValue> {
    let Some(tree) = parse(lang, text) else { return Vec::new() };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut out = Vec::new();
    for node in root.named_children(&mut cursor) {
        let name = match node.kind() {
            // `NAME = value` (and `NAME: T = value`) as a statement of its own.
            "expression_statement" => node
                .named_child(0)
                .filter(|a| a.kind() == "assignment")
                .and_then(|a| a.child_by_field_name("left"))
                .filter(|l| l.kind() == "identifier"),
            "const_item" | "static_item" => node.child_by_field_name("name"),
            _ => None,
        };
        if let Some(name) = name {
            out.push(ModuleValue {
                name: text[name.byte_range()].to_string(),
                start_line: node.start_position().row + 1,
                end_line: node.end_position().row + 1,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::language_by_name;

    #[test]
    fn python_assignments_and_rust_consts() {
        let py = language_by_name("python").expect("python");
        let text = "import x\n\nLOG = [\n    'a',\n    'b',\n]\nlimit: int = 3\n\ndef f():\n    y = 1\n";
        let got = module_values(py, text);
        let names: Vec<(&str, usize, usize)> =
            got.iter().map(|v| (v.name.as_str(), v.start_line, v.end_line)).collect();
        assert_eq!(names, vec![("LOG", 3, 6), ("limit", 7, 7)], "not the function's own `y`");
        let rs = language_by_name("rust").expect("rust");
        let text = "const MAX: u32 = 3;\nstatic NAMES: [&str; 2] = [\"a\", \"b\"];\nfn f() { let z = 1; }\n";
        let names: Vec<String> = module_values(rs, text).into_iter().map(|v| v.name).collect();
        assert_eq!(names, vec!["MAX", "NAMES"]);
        assert!(module_values(py, "def (:\n").iter().all(|v| v.name != "("));
    }
}
