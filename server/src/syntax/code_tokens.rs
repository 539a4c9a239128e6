//! The code of a file without its comments and docstrings, as a token list:
//! two texts with equal lists differ only in comments, docstrings and layout.

use super::{parse, LanguageSpec};
use std::ops::Range;
use tree_sitter::Node;

/// The leaf tokens of `text` outside comments and docstrings (a statement that
/// is a string literal alone); `None` when `text` does not parse.
pub fn code_tokens(lang: &'static LanguageSpec, text: &str) -> Option<Vec<String>> {
    Some(code_token_spans(lang, text)?.into_iter().map(|r| text[r].to_string()).collect())
}

/// The byte ranges of [`code_tokens`], in order.
pub fn code_token_spans(lang: &'static LanguageSpec, text: &str) -> Option<Vec<Range<usize>>> {
    let tree = parse(lang, text)?;
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if is_commentary(&node) {
            continue;
        }
        if node.child_count() == 0 {
            out.push(node.byte_range());
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    Some(out)
}

/// The lines (0-based, first and last inclusive) of every comment and docstring
/// of `text` that has its lines to itself (no code before or after it on them);
/// `None` when `text` does not parse.
pub fn commentary_lines(lang: &'static LanguageSpec, text: &str) -> Option<Vec<(usize, usize)>> {
    let tree = parse(lang, text)?;
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if is_commentary(&node) {
            // Some grammars (Rust's line comments) end a comment after its newline.
            let end = node.end_byte() - usize::from(text[..node.end_byte()].ends_with('\n'));
            let line_start = text[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
            let alone = text[line_start..node.start_byte()].trim().is_empty() && text[end..line_end].trim().is_empty();
            if alone {
                let last = node.end_position().row - usize::from(end < node.end_byte());
                out.push((node.start_position().row, last));
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort_unstable();
    Some(out)
}

fn is_commentary(node: &Node) -> bool {
    if node.kind().ends_with("comment") {
        return true;
    }
    // A string alone as a statement does nothing but document (Python docstrings).
    node.kind() == "expression_statement"
        && node.named_child_count() == 1
        && node.named_child(0).is_some_and(|c| c.kind() == "string")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::language_by_name;

    fn tokens(lang: &str, text: &str) -> Vec<String> {
        code_tokens(language_by_name(lang).unwrap(), text).unwrap()
    }

    #[test]
    fn docstrings_and_comments_do_not_count() {
        let plain = "def f(x):\n    return x + 1\n";
        let documented =
            "def f(x):\n    \"\"\"Adds one.\n\n    Returns x + 1.\"\"\"\n    # the sum\n    return x + 1  # done\n";
        assert_eq!(tokens("python", plain), tokens("python", documented));
        assert_ne!(tokens("python", plain), tokens("python", "def f(x):\n    return x + 2\n"));
        assert_ne!(tokens("python", plain), tokens("python", "def f(x):\n    y = 'a'\n    return x + 1\n"));
        let rust = "fn f(x: u32) -> u32 {\n    x + 1\n}\n";
        let rust_doc = "/// Adds one.\n/// Never overflows here.\nfn f(x: u32) -> u32 {\n    // the sum\n    x + 1 /* done */\n}\n";
        assert_eq!(tokens("rust", rust), tokens("rust", rust_doc));
        assert_ne!(tokens("rust", rust), tokens("rust", "fn f(x: u32) -> u32 {\n    x + 2\n}\n"));
    }
}
