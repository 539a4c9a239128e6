//! From a model's reply to a checked new file text and a patch.
//!
//! Small models are bad at reproducing text exactly, so every format here is
//! forgiving where it can be and precise where it cannot: fences and chatter are
//! stripped ([`fence`]), whole symbols are matched by their tree-sitter name
//! ([`symbol_edit`]), search/replace blocks match with whitespace and indentation
//! tolerance and say "did you mean" on a miss ([`search_replace`]), and so do
//! the quoted wrong lines of a line fix ([`line_fix`]). Every result
//! must parse with no new syntax errors ([`check`]) before anything runs it, and
//! diffs come from `similar` ([`patch`]).
//!
//! Start reading at [`apply_reply`]. Architecture Invariant: pure functions of
//! text, no I/O, no model calls; the agent decides what to do with an
//! [`EditError`] (its message is written to be fed back to the model).

mod check;
mod error;
pub mod fence;
mod format;
mod kept_documentation;
mod line_fix;
mod operator_change;
mod patch;
mod reply_filter;
mod search_replace;
mod symbol_edit;
mod whole_file;

pub use check::{check_comments_only, check_syntax, new_syntax_errors};

/// Thresholds of the checks a reply's edit passes (`[runtime]` in the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyChecks {
    /// Below this share of an old file's lines (of 10 or more), a whole-file reply counts as cut short.
    pub min_line_share: f32,
    /// Comments models write instead of code they leave out.
    pub elision_markers: Vec<String>,
    /// How many new syntax errors an error message lists.
    pub syntax_errors_shown: usize,
    /// Put back the comments and docstrings a fix deleted whole.
    pub keep_documentation: bool,
}

impl ReplyChecks {
    /// The checks as configured.
    pub fn from_config(runtime: &crate::config::RuntimeConfig) -> Self {
        Self {
            min_line_share: runtime.whole_file_min_line_share,
            elision_markers: runtime.whole_file_elision_markers.clone(),
            syntax_errors_shown: runtime.syntax_errors_shown as usize,
            keep_documentation: runtime.fix_keeps_documentation,
        }
    }
}

/// The shipped configuration's checks, for unit tests.
#[cfg(test)]
pub(crate) fn default_checks() -> ReplyChecks {
    let inputs = crate::config::ConfigInputs::default();
    ReplyChecks::from_config(&crate::config::LoadedConfig::load(&inputs).expect("defaults load").config.runtime)
}
pub use error::EditError;
pub use format::{apply_reply, EditFormat, EditOutcome, JsonSymbolReply};
pub use kept_documentation::{keep_deleted_documentation, KeptDocumentation};
pub use line_fix::{apply_line_fix, parse_line_fix, LineFix, LineRegion};
pub use operator_change::{questioned_operators, OperatorQuestion};
pub use patch::{unified_diff, FileChange, Patch};
pub use reply_filter::{filter_reply_definitions, KeepDefinitions};
pub use search_replace::{apply_search_replace, parse_search_replace, SearchReplace};
pub use symbol_edit::{apply_symbol_edits, apply_symbol_edits_across, changed_symbols, is_test_path, SymbolEdit};
pub use whole_file::apply_whole_file;
