//! Code action listing: cheap, from the request's range and diagnostics only
//! (no model call). Each action's `data` lets its work be redone from scratch.

use super::commands::CommandId;
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Command, Diagnostic, Range, Uri};

/// Longest diagnostic excerpt shown in a quick-fix title, in chars (a UI limit, not a model setting).
const TITLE_MESSAGE_CHARS: usize = 60;

/// The kind of "fix all in this file" (a `source.fixAll` action, as editors run on save or on request).
pub const FIX_ALL_KIND: &str = "source.fixAll.tinycoder";

/// What an action's `data` (and its command's argument) carries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ActionData {
    pub action: String,
    pub uri: Uri,
    /// The document version the action was listed for (`None` if the document is not open).
    pub version: Option<i32>,
    pub range: Range,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<Diagnostic>,
}

/// The first line of `message`, shortened for a title.
fn short_message(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").trim();
    if first.chars().count() > TITLE_MESSAGE_CHARS {
        first.chars().take(TITLE_MESSAGE_CHARS).collect::<String>() + "…"
    } else {
        first.to_string()
    }
}

fn action(
    title: String,
    kind: CodeActionKind,
    cmd: CommandId,
    data: ActionData,
    diagnostics: Option<Vec<Diagnostic>>,
) -> CodeAction {
    let value = serde_json::to_value(&data).unwrap_or(serde_json::Value::Null);
    CodeAction {
        title: title.clone(),
        kind: Some(kind),
        diagnostics,
        command: Some(Command { title, command: cmd.name().to_string(), arguments: Some(vec![value.clone()]) }),
        data: Some(value),
        ..Default::default()
    }
}

/// The tinycoder actions for `range` with `diagnostics`, filtered by the client's `only` kinds.
pub fn list_actions(
    uri: &Uri,
    version: Option<i32>,
    range: Range,
    diagnostics: &[Diagnostic],
    only: Option<&[CodeActionKind]>,
) -> Vec<CodeActionOrCommand> {
    let wanted = |kind: &CodeActionKind| match only {
        None => true,
        Some(kinds) => {
            kinds.iter().any(|k| kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str())))
        }
    };
    let data = |action: &str, range: Range, diagnostic: Option<Diagnostic>| ActionData {
        action: action.to_string(),
        uri: uri.clone(),
        version,
        range,
        diagnostic,
    };
    let mut out = Vec::new();
    if wanted(&CodeActionKind::QUICKFIX) {
        for (i, d) in diagnostics.iter().enumerate() {
            let mut a = action(
                format!("tinycoder: fix {}", short_message(&d.message)),
                CodeActionKind::QUICKFIX,
                CommandId::Fix,
                data("fix", d.range, Some(d.clone())),
                Some(vec![d.clone()]),
            );
            a.is_preferred = Some(i == 0);
            out.push(CodeActionOrCommand::CodeAction(a));
        }
    }
    if wanted(&CodeActionKind::REFACTOR_REWRITE) {
        for (title, cmd, name) in [
            ("tinycoder: edit selection…", CommandId::Edit, "edit"),
            ("tinycoder: document", CommandId::Document, "document"),
            ("tinycoder: write tests", CommandId::GenerateTests, "generateTests"),
            ("tinycoder: explain", CommandId::Explain, "explain"),
        ] {
            out.push(CodeActionOrCommand::CodeAction(action(
                title.to_string(),
                CodeActionKind::REFACTOR_REWRITE,
                cmd,
                data(name, range, None),
                None,
            )));
        }
    }
    let fix_all = CodeActionKind::from(FIX_ALL_KIND);
    if wanted(&fix_all) {
        // Listed from the request alone; which checkers apply is found when it runs.
        out.push(CodeActionOrCommand::CodeAction(action(
            "tinycoder: fix all checker errors in this file".to_string(),
            fix_all,
            CommandId::FixAll,
            data("fixAll", range, None),
            None,
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use tower_lsp_server::ls_types::Position;

    #[test]
    fn one_preferred_quickfix_per_diagnostic_and_only_filters() {
        let uri = Uri::from_str("file:///tmp/a.py").unwrap();
        let r = Range::new(Position::new(1, 0), Position::new(1, 4));
        let d = |m: &str| Diagnostic { range: r, message: m.into(), ..Default::default() };
        let all = list_actions(&uri, Some(3), r, &[d("undefined name `x`\nmore"), d("unused import")], None);
        let titles: Vec<String> = all
            .iter()
            .map(|a| match a {
                CodeActionOrCommand::CodeAction(a) => format!("{} {:?}", a.title, a.is_preferred),
                CodeActionOrCommand::Command(c) => c.title.clone(),
            })
            .collect();
        expect_test::expect![[r#"
            [
                "tinycoder: fix undefined name `x` Some(true)",
                "tinycoder: fix unused import Some(false)",
                "tinycoder: edit selection… None",
                "tinycoder: document None",
                "tinycoder: write tests None",
                "tinycoder: explain None",
                "tinycoder: fix all checker errors in this file None",
            ]
        "#]]
        .assert_debug_eq(&titles);
        let only = [CodeActionKind::QUICKFIX];
        assert_eq!(list_actions(&uri, Some(3), r, &[d("x")], Some(&only)).len(), 1);
        let only = [CodeActionKind::REFACTOR];
        assert_eq!(list_actions(&uri, Some(3), r, &[d("x")], Some(&only)).len(), 4);
        for kind in ["source", "source.fixAll", FIX_ALL_KIND] {
            let only = [CodeActionKind::from(kind.to_string())];
            let listed = list_actions(&uri, Some(3), r, &[d("x")], Some(&only));
            let kinds: Vec<String> = listed
                .iter()
                .filter_map(|a| match a {
                    CodeActionOrCommand::CodeAction(a) => a.kind.as_ref().map(|k| k.as_str().to_string()),
                    CodeActionOrCommand::Command(_) => None,
                })
                .collect();
            assert_eq!(kinds, [FIX_ALL_KIND], "only = {kind}");
        }
        let only = [CodeActionKind::SOURCE_ORGANIZE_IMPORTS];
        assert!(list_actions(&uri, Some(3), r, &[d("x")], Some(&only)).is_empty());
    }
}
