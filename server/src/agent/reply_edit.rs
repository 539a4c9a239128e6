//! From a coder's reply to the edit it makes: the reply applied in the
//! request's way (new tests appended, documentation without invented code),
//! then the request's own check of the result.

use super::request::AgentRequest;
use super::state::Target;
use crate::edits::{apply_reply, EditFormat, EditOutcome, ReplyChecks, SymbolEdit};

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
