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
}

impl EditFormat {
    /// Every format.
    pub const ALL: [EditFormat; 4] = [Self::WholeSymbol, Self::SearchReplace, Self::WholeFile, Self::JsonSymbol];

    /// The snake_case name (as in config).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WholeSymbol => "whole_symbol",
            Self::SearchReplace => "search_replace",
            Self::WholeFile => "whole_file",
            Self::JsonSymbol => "json_symbol",
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
        EditFormat::WholeFile => vec![(path.clone(), apply_whole_file(path, before, reply)?)],
    };
    let mut changed_symbols = Vec::new();
    for (p, after) in &changes {
        let old = files.iter().find(|(fp, _)| fp == p).map(|(_, t)| t.as_str()).unwrap_or("");
        check_syntax(p, old, after)?;
        if opts.protect_tests {
            if let Some(name) = touched_tests(p, old, after).into_iter().next() {
                return Err(EditError::EditsTest { name });
            }
        }
        changed_symbols.extend(changed_symbols_of(p, old, after));
    }
    Ok(EditOutcome { changes, changed_symbols })
}
