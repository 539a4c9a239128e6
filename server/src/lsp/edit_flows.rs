//! The agent flows that change code, besides the fix: `tinycoder.edit` (the
//! selection and an instruction, passed or asked for), `tinycoder.document`
//! (docstrings and doc comments for the symbol at the cursor) and
//! `tinycoder.generateTests` (tests for that symbol, which must pass in the
//! shadow). Each becomes an `AgentRequest` started through the [`Launcher`](super::agent_flow::Launcher),
//! so it runs under cancellable progress and its patch is reviewed like a fix.

use super::agent_flow::Launcher;
use super::commands::request_failed;
use super::review::ask;
use super::server::Backend;
use crate::agent::{AgentRequest, Location};
use crate::config::PromptId;
use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, Range, Uri};

/// Arguments of the code-changing commands: a code action's `data`, or a
/// hand-written `{uri, range?, instruction?, testFile?}` (extra keys are ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetArgs {
    pub uri: Uri,
    /// The selection (or the cursor, as an empty range); the whole file when absent.
    pub range: Option<Range>,
    /// `tinycoder.edit`: what to do; asked for when absent.
    pub instruction: Option<String>,
    /// `tinycoder.generateTests`: the test file to add the tests to.
    pub test_file: Option<String>,
}

/// 1-based first and last line of an LSP range (an end at column 0 of a later line is not in it).
pub fn range_lines(r: &Range) -> (usize, usize) {
    let start = r.start.line as usize + 1;
    let end = if r.end.character == 0 && r.end.line > r.start.line { r.end.line } else { r.end.line + 1 };
    (start, (end as usize).max(start))
}

/// The arguments of `cmd`, the path they name relative to its workspace folder,
/// and a launcher for that folder.
pub fn target_args(backend: &Backend, args: &[Value], cmd: &str) -> Result<(TargetArgs, String, Launcher)> {
    let t: TargetArgs = args.first().cloned().and_then(|v| serde_json::from_value(v).ok()).ok_or_else(|| {
        Error::invalid_params(format!("{cmd} needs [{{\"uri\": .., \"range\": ..}}] (a code action's data)"))
    })?;
    let (folder, rel) = backend.file_in_workspace(&t.uri, cmd)?;
    Ok((t, rel, backend.launcher_in(&folder)?))
}

fn location(rel: &str, range: Option<&Range>) -> Location {
    match range.map(range_lines) {
        Some((a, z)) => Location { path: rel.to_string(), start_line: a, end_line: z },
        None => Location::file(rel),
    }
}

/// `tinycoder.edit [{uri, range, instruction?}]`: with no instruction, offers the
/// presets of `prompts/edit_presets.md` (`window/showMessageRequest`) and starts
/// the edit the user picks; answers at once.
pub async fn edit(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let (t, rel, launcher) = target_args(backend, args, "tinycoder.edit")?;
    let target = location(&rel, t.range.as_ref());
    if let Some(instruction) = t.instruction.filter(|i| !i.trim().is_empty()) {
        return launcher
            .start(AgentRequest::Edit { target, instruction, comments_only: false }, "tinycoder: edit")
            .map(Some);
    }
    launcher.model()?;
    let presets = launcher.prompts.render(PromptId::EDIT_PRESETS, &[]).map_err(|e| request_failed(e.to_string()))?;
    let presets: Vec<String> = presets.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
    tokio::spawn(async move {
        let titles: Vec<&str> = presets.iter().map(String::as_str).collect();
        let message = format!("tinycoder: how should {target} change?");
        let Some(instruction) = ask(&launcher.handles, MessageType::INFO, message, &titles).await else { return };
        if let Err(e) =
            launcher.start(AgentRequest::Edit { target, instruction, comments_only: false }, "tinycoder: edit")
        {
            launcher.handles.client.show_message(MessageType::ERROR, format!("tinycoder: {}", e.message)).await;
        }
    });
    Ok(Some(json!({ "asking": "instruction" })))
}

/// `tinycoder.document [{uri, range}]`: doc comments for the symbol at the range's start.
pub async fn document(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let (t, rel, launcher) = target_args(backend, args, "tinycoder.document")?;
    let line = t.range.as_ref().map(|r| r.start.line as usize + 1).unwrap_or(1);
    let request = crate::agent::document_request(&launcher.prompts, &*launcher.snapshot(), &rel, line)
        .map_err(|e| request_failed(e.to_string()))?;
    launcher.start(request, "tinycoder: document").map(Some)
}

/// `tinycoder.generateTests [{uri, range, testFile?}]`: tests for the symbol at the range's start.
pub async fn generate_tests(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let (t, rel, launcher) = target_args(backend, args, "tinycoder.generateTests")?;
    let line = t.range.as_ref().map(|r| r.start.line as usize + 1).unwrap_or(1);
    let request = AgentRequest::AddTests { target: Location::line(rel, line), test_file: t.test_file };
    launcher.start(request, "tinycoder: write tests").map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    #[test]
    fn lsp_ranges_become_line_ranges() {
        let r = |a: u32, b: u32, c: u32, d: u32| Range::new(Position::new(a, b), Position::new(c, d));
        assert_eq!(range_lines(&r(3, 0, 3, 0)), (4, 4), "a cursor");
        assert_eq!(range_lines(&r(3, 2, 5, 7)), (4, 6));
        assert_eq!(range_lines(&r(3, 0, 6, 0)), (4, 6), "whole lines selected up to the next line's start");
    }
}
