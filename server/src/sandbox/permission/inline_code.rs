//! Inline Python (`python3 -c CODE`) proven harmless: the code is parsed with tree-sitter and
//! accepted only when it holds expressions and imports made of what `[permissions.allow.python]`
//! lists. Which modules, names, methods and keywords are harmless is config; what is read here
//! is Python syntax (calls, attributes, imports, string literals).

use crate::config::PythonRules;
use regex::Regex;
use std::collections::BTreeSet;
use tree_sitter::{Node, Parser};

/// Node kinds inline code may hold: expressions and imports. Anything else (assignments,
/// definitions, lambdas, loops, comprehensions, `:=`, `**` splats, `print` statements) asks.
const NODE_KINDS: &[&str] = &[
    "module",
    "expression_statement",
    "expression_list",
    "import_statement",
    "dotted_name",
    "identifier",
    "attribute",
    "call",
    "argument_list",
    "keyword_argument",
    "list_splat",
    "string",
    "string_start",
    "string_content",
    "string_end",
    "escape_sequence",
    "escape_interpolation",
    "interpolation",
    "format_specifier",
    "format_expression",
    "type_conversion",
    "concatenated_string",
    "integer",
    "float",
    "true",
    "false",
    "none",
    "binary_operator",
    "unary_operator",
    "comparison_operator",
    "boolean_operator",
    "not_operator",
    "conditional_expression",
    "parenthesized_expression",
    "list",
    "tuple",
    "set",
    "dictionary",
    "pair",
    "subscript",
    "slice",
    "comment",
    "line_continuation",
];

/// The compiled `python` lists of one allow entry.
pub(in crate::sandbox) struct PythonCheck {
    modules: BTreeSet<String>,
    names: BTreeSet<String>,
    methods: BTreeSet<String>,
    keywords: BTreeSet<String>,
    openers: BTreeSet<String>,
    read_mode: Regex,
}

struct Walk<'a> {
    rules: &'a PythonCheck,
    src: &'a [u8],
    /// Modules the code imported (their first name is bound).
    imported: BTreeSet<String>,
}

impl PythonCheck {
    pub(in crate::sandbox) fn new(rules: &PythonRules) -> Result<Self, regex::Error> {
        let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
        Ok(Self {
            modules: set(&rules.modules),
            names: set(&rules.names),
            methods: set(&rules.methods),
            keywords: set(&rules.keywords),
            openers: set(&rules.openers),
            read_mode: Regex::new(&rules.read_mode)?,
        })
    }

    /// Ok when `code` is proven harmless; else why not.
    pub(in crate::sandbox) fn check(&self, code: &str) -> Result<(), String> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .map_err(|e| format!("cannot load the Python grammar: {e}"))?;
        let tree = parser.parse(code, None).ok_or("cannot be parsed as Python")?;
        let root = tree.root_node();
        if root.has_error() {
            return Err("is not valid Python (as the gate reads it)".into());
        }
        let mut walk = Walk { rules: self, src: code.as_bytes(), imported: BTreeSet::new() };
        // Imports first: `import json; print(json.dumps(1))` names json after importing it.
        walk.imports(root)?;
        walk.node(root)
    }
}

impl Walk<'_> {
    fn text(&self, n: Node) -> &str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn imports(&mut self, n: Node) -> Result<(), String> {
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            if child.kind() != "import_statement" {
                continue;
            }
            let mut c = child.walk();
            for name in child.named_children(&mut c) {
                let module = self.text(name).to_string();
                if name.kind() != "dotted_name" || !self.rules.modules.contains(&module) {
                    return Err(format!("imports `{module}`, which is not a module known to be harmless"));
                }
                let first = module.split('.').next().unwrap_or_default().to_string();
                self.imported.insert(first);
            }
        }
        Ok(())
    }

    fn node(&self, n: Node) -> Result<(), String> {
        if !n.is_named() {
            return Ok(());
        }
        if !NODE_KINDS.contains(&n.kind()) {
            return Err(format!("uses `{}` ({}), which is not known to be harmless", self.short(n), n.kind()));
        }
        match n.kind() {
            "import_statement" => return Ok(()),
            "identifier" => return self.identifier(n),
            "attribute" => return self.attribute(n),
            "keyword_argument" => {
                let name = n.child_by_field_name("name").map(|k| self.text(k)).unwrap_or_default();
                if !self.rules.keywords.contains(name) {
                    return Err(format!("passes `{name}=`, which is not a keyword known to be harmless"));
                }
                return match n.child_by_field_name("value") {
                    Some(v) => self.node(v),
                    None => Ok(()),
                };
            }
            "call" => {
                if let Some(f) = n.child_by_field_name("function") {
                    let direct = matches!(f.kind(), "identifier" | "attribute");
                    if direct && self.rules.openers.contains(self.text(f)) {
                        self.opener(n)?;
                        return match n.child_by_field_name("arguments") {
                            Some(args) => self.node(args),
                            None => Ok(()),
                        };
                    }
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            self.node(child)?;
        }
        Ok(())
    }

    fn short(&self, n: Node) -> String {
        let t = self.text(n);
        if t.chars().count() > 40 {
            format!("{}…", t.chars().take(40).collect::<String>())
        } else {
            t.to_string()
        }
    }

    /// A bare name: an imported module or a listed builtin.
    fn identifier(&self, n: Node) -> Result<(), String> {
        let name = self.text(n);
        if self.rules.openers.contains(name) {
            return Err(format!("uses `{name}` other than by calling it with a read-only mode"));
        }
        if self.imported.contains(name) || self.rules.names.contains(name) {
            Ok(())
        } else {
            Err(format!("names `{name}`, which is not known to be harmless"))
        }
    }

    /// `module.attr` (listed in names) or `value.method` (listed in methods); never `_…`.
    fn attribute(&self, n: Node) -> Result<(), String> {
        let attr = n.child_by_field_name("attribute").map(|a| self.text(a)).unwrap_or_default();
        let Some(object) = n.child_by_field_name("object") else {
            return Err("an attribute without its object".into());
        };
        if attr.starts_with('_') {
            return Err(format!("reaches `{attr}`, a private or special attribute"));
        }
        if object.kind() == "identifier" && self.imported.contains(self.text(object)) {
            let module = self.text(object);
            let qualified = format!("{module}.{attr}");
            let all = format!("{module}.*");
            if self.rules.openers.contains(&qualified) {
                return Err(format!("uses `{qualified}` other than by calling it with a read-only mode"));
            }
            return if self.rules.names.contains(&qualified) || self.rules.names.contains(&all) {
                Ok(())
            } else {
                Err(format!("uses `{qualified}`, which is not known to be harmless"))
            };
        }
        if !self.rules.methods.contains(attr) {
            return Err(format!("uses `.{attr}`, which is not a method known to be harmless"));
        }
        self.node(object)
    }

    /// `open(path[, mode], …)`: at most two positional arguments, no splat, and a literal read mode.
    fn opener(&self, call: Node) -> Result<(), String> {
        let name = call.child_by_field_name("function").map(|f| self.text(f)).unwrap_or_default();
        let Some(args) = call.child_by_field_name("arguments") else {
            return Err(format!("`{name}` without an argument list"));
        };
        let mut cursor = args.walk();
        let mut positional = 0;
        for a in args.named_children(&mut cursor) {
            match a.kind() {
                "comment" => {}
                "keyword_argument" => {
                    let key = a.child_by_field_name("name").map(|k| self.text(k)).unwrap_or_default();
                    if key == "mode" {
                        self.read_mode(name, a.child_by_field_name("value"))?;
                    }
                }
                "list_splat" | "dictionary_splat" => {
                    return Err(format!("`{name}` with arguments only known at run time"));
                }
                _ => {
                    positional += 1;
                    if positional == 2 {
                        self.read_mode(name, Some(a))?;
                    } else if positional > 2 {
                        return Err(format!("`{name}` with more than a path and a mode"));
                    }
                }
            }
        }
        Ok(())
    }

    fn read_mode(&self, opener: &str, value: Option<Node>) -> Result<(), String> {
        let literal = value.filter(|v| v.kind() == "string").and_then(|v| {
            let mut cursor = v.walk();
            let parts: Vec<Node> = v.named_children(&mut cursor).collect();
            let plain = parts.iter().all(|p| matches!(p.kind(), "string_start" | "string_content" | "string_end"));
            let start = parts.first().map(|p| self.text(*p)).unwrap_or_default();
            (plain && (start == "'" || start == "\"")).then(|| {
                parts.iter().filter(|p| p.kind() == "string_content").map(|p| self.text(*p)).collect::<String>()
            })
        });
        match literal {
            Some(mode) if self.rules.read_mode.is_match(&mode) => Ok(()),
            _ => Err(format!("`{opener}` with a mode that is not a literal read-only mode")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check() -> PythonCheck {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        PythonCheck::new(&PythonRules {
            modules: s(&["sys", "json", "math"]),
            names: s(&[
                "print",
                "len",
                "sorted",
                "open",
                "str",
                "sys.version",
                "sys.argv",
                "json.load",
                "json.dumps",
                "math.*",
            ]),
            methods: s(&["read", "items", "upper", "keys"]),
            keywords: s(&["sep", "end", "indent", "mode", "encoding", "key"]),
            openers: s(&["open"]),
            read_mode: "^r[bt]?$".into(),
        })
        .unwrap()
    }

    #[test]
    fn harmless_forms_pass() {
        let c = check();
        for code in [
            "print(1 + 1)",
            "import sys; print(sys.version)",
            "import json; print(json.load(open('data.json')))",
            "import json\nprint(json.dumps(json.load(open('a.json', 'r')), indent=2))",
            "print(open('x', mode='rb').read())",
            "print(len(sys.argv)) if 1 else None",
            "import math; print(math.sqrt(2), sep=',')",
            "print(f'{1+2!r:>4}')",
            "print(sorted({'a': 1}.items(), key=len))",
            "print('a'.upper(), *[1, 2])",
        ] {
            let code = if code.contains("sys.argv") { format!("import sys; {code}") } else { code.to_string() };
            assert_eq!(c.check(&code), Ok(()), "{code}");
        }
    }

    #[test]
    fn attack_forms_ask() {
        let c = check();
        for code in [
            "import os; os.system('rm -rf x')",
            "import os as json",
            "from os import system",
            "__import__('os').system('x')",
            "getattr(__import__('shu'+'til'), 'rmtree')('x')",
            "print.__self__",
            "().__class__.__base__.__subclasses__()",
            "open('x', 'w').write('')",
            "open('x', 'r+')",
            "open('x', 'w' if 1 else 'r')",
            "open('x', *['w'])",
            "open('x', **{'mode': 'w'})",
            "open('x', 'r', -1, None, None, None, True, print)",
            "open('x', f'w')",
            "open('x', 'r' 'w')",
            "(open)('x', 'w')",
            "print(open)",
            "list(map(open, ['x'], ['w']))",
            "print(open('x', mode='a'))",
            "print(f'{open(\"x\", \"w\")}')",
            "exec('import os')",
            "eval('1')",
            "x = 1",
            "(print := exec)",
            "lambda: 0",
            "[print(x) for x in (1,)]",
            "import sys; sys.modules['os'].system('x')",
            "import json; json.decoder.scanstring",
            "json.load(open('x'), object_hook=print)",
            "print 1",
            "print(1",
            "import subprocess",
            "open('x').__enter__()",
            "'{0.__class__}'.format(1)",
            "del x",
            "import sys; sys.stdout.write('x')",
        ] {
            assert!(c.check(code).is_err(), "proven harmless: {code}");
        }
    }
}
