//! Dropping definitions from a reply before it is applied: what a request
//! cannot want (the tests a test-writing reply repeats, the new functions a
//! documentation reply invents) is left out instead of failing the attempt.

use crate::syntax::{extract_symbols, language_for_path, parse};
use std::path::Path;

/// Which of a reply's top-level definitions to keep, by whether `before` has one of that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepDefinitions {
    /// Only the names `before` already defines (a change of existing code).
    Existing,
    /// Only the names `before` lacks (new code added).
    New,
}

/// `reply` with only the top-level definitions `keep` wants, as one fenced
/// block; the reply unchanged when it has no code to parse, no grammar, or
/// nothing would be left.
pub fn filter_reply_definitions(path: &str, before: &str, reply: &str, keep: KeepDefinitions) -> String {
    let Some(lang) = language_for_path(Path::new(path)) else { return reply.to_string() };
    let Some(code) = super::fence::reply_code(reply) else { return reply.to_string() };
    let top_level = |text: &str| {
        parse(lang, text)
            .map(|t| extract_symbols(lang, &t, text.as_bytes()))
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.parent.is_none())
    };
    let old: Vec<String> = top_level(before).map(|s| s.name).collect();
    let dropped = |name: &String| match keep {
        KeepDefinitions::Existing => !old.contains(name),
        KeepDefinitions::New => old.contains(name),
    };
    let mut kept = String::new();
    let mut at = 0;
    for s in top_level(&code).filter(|s| dropped(&s.name)) {
        // Cut from the start of the definition's first line (decorators included by the range).
        let start = code[..s.byte_range.start].rfind('\n').map_or(0, |i| i + 1).max(at);
        kept.push_str(&code[at..start]);
        at = s.byte_range.end.max(at);
    }
    kept.push_str(&code[at..]);
    if kept.trim().is_empty() {
        return reply.to_string();
    }
    format!("```{}\n{}\n```", lang.name, kept.trim_matches('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_definitions_asked_for() {
        let before = "def f():\n    return 1\n";
        let reply = "Here:\n```python\ndef h():\n    return 0\n\n\ndef f():\n    \"\"\"One.\"\"\"\n    return 1\n```\n";
        let existing = filter_reply_definitions("a.py", before, reply, KeepDefinitions::Existing);
        assert!(existing.contains("def f()") && !existing.contains("def h()"), "{existing}");
        let new = filter_reply_definitions("a.py", before, reply, KeepDefinitions::New);
        assert!(new.contains("def h()") && !new.contains("def f()"), "{new}");
        let only_new = "```python\ndef h():\n    return 0\n```";
        assert_eq!(
            filter_reply_definitions("a.py", before, only_new, KeepDefinitions::Existing),
            only_new,
            "nothing left"
        );
        assert_eq!(filter_reply_definitions("a.txt", before, reply, KeepDefinitions::Existing), reply);
    }
}
