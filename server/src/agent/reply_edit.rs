//! From a coder's reply to the edit it makes: the reply applied in the
//! request's way (new tests appended, documentation without invented code),
//! then the request's own check of the result.

use super::request::AgentRequest;
use super::state::Target;
use crate::edits::{apply_reply, EditError, EditFormat, EditOutcome, ReplyChecks, SymbolEdit};

/// The edit `reply` makes to `target` for `request`, or why it cannot be used;
/// and whether the reply changed nothing (it repeated the code).
pub fn edit_from_reply(
    request: &AgentRequest,
    target: &Target,
    format: EditFormat,
    reply: &str,
    opts: &SymbolEdit,
    checks: &ReplyChecks,
) -> (Result<EditOutcome, String>, bool) {
    let applied = match request {
        // New tests go at the end of the test file; what the reply repeats of it is dropped.
        AgentRequest::AddTests { .. } => {
            let usable = super::add_tests::without_existing_definitions(&target.path, &target.before, reply);
            super::add_tests::append_new_tests(&target.path, &target.before, &usable)
                .map_or_else(|| apply_reply(format, &target.files(), &usable, opts, checks), Ok)
        }
        // Documentation: functions the model invents around the documented one are left out.
        AgentRequest::Edit { comments_only: true, .. } => {
            let usable = crate::edits::filter_reply_definitions(
                &target.path,
                &target.before,
                reply,
                crate::edits::KeepDefinitions::Existing,
            );
            apply_reply(format, &target.files(), &usable, opts, checks)
        }
        AgentRequest::Fix { .. } if checks.keep_documentation => {
            apply_reply(format, &target.files(), reply, opts, checks).and_then(|o| keep_documentation(target, o))
        }
        _ => apply_reply(format, &target.files(), reply, opts, checks),
    };
    let changes_nothing = matches!(&applied, Err(e) if e.is_unchanged());
    let checked = applied.map_err(|e| e.to_string()).and_then(|o| {
        let before = |p: &str| target.before_of(p).unwrap_or("").to_string();
        match request {
            AgentRequest::AddTests { .. } => o
                .changes
                .iter()
                .try_for_each(|(p, after)| super::add_tests::check_added_tests(p, &before(p), after).map(|_| ())),
            AgentRequest::Edit { comments_only: true, .. } => o.changes.iter().try_for_each(|(p, after)| {
                crate::edits::check_comments_only(p, &before(p), after).map_err(|e| e.to_string())
            }),
            _ => Ok(()),
        }
        .map(|_| o)
    });
    (checked, changes_nothing)
}

/// `outcome` with the comments and docstrings it deleted whole put back; a
/// change that only deleted them is no change, and a reply of nothing else
/// changes nothing.
fn keep_documentation(target: &Target, outcome: EditOutcome) -> Result<EditOutcome, EditError> {
    let mut kept_lines = 0;
    let mut changes = Vec::new();
    let mut only_documentation = None;
    for (path, after) in outcome.changes {
        let before = target.before_of(&path).unwrap_or("");
        let Some(kept) = crate::edits::keep_deleted_documentation(&path, before, &after) else {
            changes.push((path, after));
            continue;
        };
        kept_lines += kept.lines;
        if kept.text == before {
            only_documentation.get_or_insert(path);
        } else {
            changes.push((path, kept.text));
        }
    }
    if changes.is_empty() {
        let path = only_documentation.unwrap_or_else(|| target.path.clone());
        return Err(EditError::OnlyDocumentationDeleted { path });
    }
    if kept_lines > 0 {
        tracing::info!(kept_lines, "put back comments and docstrings the reply deleted");
    }
    let changed_symbols = changes
        .iter()
        .flat_map(|(p, after)| crate::edits::changed_symbols(p, target.before_of(p).unwrap_or(""), after))
        .collect();
    Ok(EditOutcome { changes, changed_symbols, kept_documentation_lines: kept_lines })
}
