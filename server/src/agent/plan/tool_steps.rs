//! The steps that call a tool instead of the coder: a query step (`search`)
//! and a command step (`shell_exec`), both through the tool registry. What
//! they find or print becomes notes for the steps that depend on them; neither
//! writes, not even the plan's pending changes.

use super::log::TaskLog;
use super::run::Run;
use crate::agent::tools::ToolContext;
use crate::agent::TaskReport;
use crate::config::PromptId;
use crate::contracts::{PlanStep, ToolCall};
use serde_json::json;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

impl Run<'_> {
    /// A query step: searches the index; what it finds is shown to the steps after it.
    pub(super) async fn query(
        &self,
        i: usize,
        step: &PlanStep,
        log: &tokio::sync::Mutex<TaskLog>,
        cancel: &CancellationToken,
    ) -> (bool, String, Option<TaskReport>) {
        let call = ToolCall {
            tool: "search".into(),
            arguments: json!({"query": format!("{} {}", step.file, step.description)}),
        };
        let ctx = ToolContext { log, layer: None, step_id: Some(&step.id) };
        let result = self.tools.call(&call, &ctx, cancel).await;
        if !result.ok {
            return (false, result.error.unwrap_or_else(|| "the search failed".into()), None);
        }
        let found = result.output.lines().filter(|l| !l.trim().is_empty()).count();
        self.shared().notes.insert(i, result.output);
        (true, format!("found {found} place(s)"), None)
    }

    /// A command step: runs its command (permission gate, sandbox) in a fresh shadow
    /// holding the earlier steps' changes; the last lines of its output become notes.
    /// The step is done once the command ran to its end, whatever its exit code (a
    /// failing test or lint run is what the steps after it are to act on); a denied,
    /// killed or timed-out command fails it.
    pub(super) async fn command(
        &self,
        i: usize,
        step: &PlanStep,
        log: &tokio::sync::Mutex<TaskLog>,
        cancel: &CancellationToken,
    ) -> (bool, String, Option<TaskReport>) {
        let command = step.command.clone().unwrap_or_default();
        // A copy: the command sees the changes so far, and nothing it does goes back.
        let layer = Mutex::new(self.shared().changed.clone());
        let ctx = ToolContext { log, layer: Some(&layer), step_id: Some(&step.id) };
        let call = ToolCall { tool: "shell_exec".into(), arguments: json!({"command": command}) };
        let result = self.tools.call(&call, &ctx, cancel).await;
        let Some(code) = result.exit_code else {
            return (false, result.error.unwrap_or_else(|| format!("`{command}` did not run")), None);
        };
        let lines = self.env.config.runtime.command_output_lines as usize;
        let output = last_lines(&result.output, lines);
        let note = self.env.prompts.render(
            PromptId::PLAN_COMMAND_OUTPUT,
            &[("command", &command), ("exit_code", &code.to_string()), ("output", &output)],
        );
        match note {
            Ok(note) => {
                self.shared().notes.insert(i, note);
                (true, format!("`{command}` exited with code {code}"), None)
            }
            Err(e) => (false, e.to_string(), None),
        }
    }
}

/// The last `n` lines of `text`.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_last_lines_are_kept() {
        assert_eq!(super::last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(super::last_lines("a\n", 5), "a");
        assert_eq!(super::last_lines("", 3), "");
    }
}
