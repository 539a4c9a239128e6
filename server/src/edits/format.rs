//! The edit formats a coder may be asked to reply in, and turning a reply into new text.

use super::fence::reply_code;
use super::symbol_edit::apply_symbol_edits_across;
use super::symbol_edit::touched_tests;
use super::{apply_search_replace, apply_whole_file, check_syntax, parse_search_replace};
use super::{changed_symbols as changed_symbols_of, EditError, SymbolEdit};
use serde::{Deserialize, Serialize};

/// How the coder writes its edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditFormat {
    /// The changed definitions, whole, in a code block; matched by name.
    WholeSymbol,
    /// `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks.
    SearchReplace,
    /// The whole new file in a code block.
    WholeFile,
    /// A JSON object `{"code": "…"}` holding the changed definitions (schema-constrained).
    JsonSymbol,
    /// The wrong line(s) of one definition quoted, then corrected (`Wrong line:` / `Fixed line:`).
    LineFix,
}

impl EditFormat {
    /// Every format.
    pub const ALL: [EditFormat; 5] =
        [Self::WholeSymbol, Self::SearchReplace, Self::WholeFile, Self::JsonSymbol, Self::LineFix];

    /// The snake_case name (as in config).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WholeSymbol => "whole_symbol",
            Self::SearchReplace => "search_replace",
            Self::WholeFile => "whole_file",
            Self::JsonSymbol => "json_symbol",
            Self::LineFix => "line_fix",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// The JSON reply of [`EditFormat::JsonSymbol`].
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
pub struct JsonSymbolReply {
    /// The complete new definitions (functions, methods or classes) that change.
    pub code: String,
}

/// A reply turned into checked new file texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutcome {
    /// The changed files and their new text (the primary file first when it changed).
    pub changes: Vec<(String, String)>,
    /// Definitions whose text changed.
    pub changed_symbols: Vec<String>,
    /// Lines of comments and docstrings the reply deleted that were put back.
    pub kept_documentation_lines: usize,
}

/// Turns `reply` (in `format`) into new texts of `files` (path, current text;
/// the first is the file the request is about; the others may be changed by
/// name in the symbol formats), checks that each parses with no new syntax
/// errors and, when `opts.protect_tests`, that no test changed.
pub fn apply_reply(
    format: EditFormat,
    files: &[(String, String)],
    reply: &str,
    opts: &SymbolEdit,
    checks: &super::ReplyChecks,
) -> Result<EditOutcome, EditError> {
    let Some((path, before)) = files.first() else {
        return Err(EditError::NoCode);
    };
    let changes = match format {
        EditFormat::WholeSymbol => {
            let code = reply_code(reply).ok_or(EditError::NoCode)?;
            apply_symbol_edits_across(files, &code, opts)?
        }
        EditFormat::JsonSymbol => {
            let parsed: JsonSymbolReply = crate::llm::parse_reply(reply).map_err(|e| EditError::Json(e.to_string()))?;
            let code = reply_code(&parsed.code).unwrap_or(parsed.code);
            apply_symbol_edits_across(files, &code, opts)?
        }
        EditFormat::SearchReplace => {
            vec![(path.clone(), apply_search_replace(path, before, &parse_search_replace(reply))?)]
        }
        EditFormat::LineFix => {
            let fixed = super::parse_line_fix(reply)
                .ok_or(EditError::NoLineFix)
                .and_then(|fix| super::apply_line_fix(files, opts.region.as_ref(), &fix));
            match fixed {
                Ok(change) => vec![change],
                // A whole corrected definition instead of two lines is still a fix.
                Err(e) => {
                    reply_code(reply).and_then(|code| apply_symbol_edits_across(files, &code, opts).ok()).ok_or(e)?
                }
            }
        }
        EditFormat::WholeFile => match apply_whole_file(path, before, reply, checks) {
            Ok(after) => vec![(path.clone(), after)],
            // A short file's reply that holds only the changed definitions is a
            // whole-symbol edit: small models often answer that way.
            Err(elided @ EditError::Elided { .. }) => {
                reply_code(reply).and_then(|code| apply_symbol_edits_across(files, &code, opts).ok()).ok_or(elided)?
            }
            Err(e) => return Err(e),
        },
    };
    let mut changed_symbols = Vec::new();
    for (p, after) in &changes {
        let old = files.iter().find(|(fp, _)| fp == p).map(|(_, t)| t.as_str()).unwrap_or("");
        check_syntax(p, old, after, checks.syntax_errors_shown)?;
        if opts.protect_tests {
            if let Some(name) = touched_tests(p, old, after).into_iter().next() {
                return Err(EditError::EditsTest { name });
            }
        }
        changed_symbols.extend(changed_symbols_of(p, old, after));
    }
    Ok(EditOutcome { changes, changed_symbols, kept_documentation_lines: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICES: &str = "\"\"\"Totals.\"\"\"\n\n\ndef item(p, q):\n    return p * q\n\n\ndef total(items):\n    t = 0\n    for p, q in items:\n        t = item(p, q)\n    return t\n";

    #[test]
    fn a_whole_file_reply_with_only_the_changed_function_is_applied_as_one() {
        let files = vec![("shop.py".to_string(), PRICES.to_string())];
        let opts = SymbolEdit { focus_line: None, protect_tests: true, region: None };
        let reply = "```python\ndef total(items):\n    t = 0\n    for p, q in items:\n        t += item(p, q)\n    return t\n```";
        let out = apply_reply(EditFormat::WholeFile, &files, reply, &opts, &crate::edits::default_checks())
            .expect("applied as a whole-symbol edit");
        assert_eq!(out.changes.len(), 1);
        assert!(out.changes[0].1.contains("t += item(p, q)") && out.changes[0].1.contains("def item(p, q)"));
        // A part of the file that names no definition of it is still refused as elided.
        let partial = "```python\nx = 1\n```";
        let err =
            apply_reply(EditFormat::WholeFile, &files, partial, &opts, &crate::edits::default_checks()).unwrap_err();
        assert!(matches!(err, EditError::Elided { .. }), "{err}");
    }

    #[test]
    fn format_names_round_trip() {
        for f in EditFormat::ALL {
            assert_eq!(EditFormat::parse(f.as_str()), Some(f));
        }
        assert_eq!(EditFormat::WholeFile.as_str(), "whole_file");
        assert_eq!(EditFormat::parse("search_replace"), Some(EditFormat::SearchReplace));
        assert_eq!(EditFormat::parse("diff"), None);
    }

    #[test]
    fn only_the_definitions_that_changed_are_reported() {
        let files = vec![("shop.py".to_string(), PRICES.to_string())];
        let opts = SymbolEdit { focus_line: None, protect_tests: true, region: None };
        let reply = "```python\ndef total(items):\n    t = 0\n    for p, q in items:\n        t += item(p, q)\n    return t\n```";
        let out = apply_reply(EditFormat::WholeSymbol, &files, reply, &opts, &crate::edits::default_checks())
            .expect("applied");
        assert_eq!(out.changed_symbols, vec!["total".to_string()]);
    }
}
