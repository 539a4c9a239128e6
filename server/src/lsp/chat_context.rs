//! A chat turn that knows the project: the prompt comes from the context
//! builder (the index's hits for the question, the code around the cursor or
//! the selection, memory), then the session's summary and as many recent turns
//! as fit; the reply's reserve is the coder's `max_output_tokens`. The code the
//! prompt showed comes back as sources, cited as `file:line` links under the reply.

use super::answer_flow::{answer_context, sources};
use crate::agent::AgentEnv;
use crate::config::PromptId;
use crate::context::{ContextError, RequestKind};
use crate::llm::{ChatMessage, ChatRole, TokenEstimator};
use std::path::Path;
use tower_lsp_server::ls_types::Uri;

/// Where the user is: a workspace-relative file, the 1-based lines of the selection
/// (or the cursor's line twice), and the buffer's text.
#[derive(Debug, Clone)]
pub struct ChatFocus {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
}

/// The messages of one turn and what they showed.
#[derive(Debug, Clone)]
pub struct ChatTurn {
    pub messages: Vec<ChatMessage>,
    /// The code shown: (path, first line, title).
    pub sources: Vec<(String, usize, String)>,
    /// Whether turns or code were left out to fit.
    pub trimmed: bool,
}

/// Drops the oldest turns (never the summary, a leading system message) until the
/// turns take at most `max_tokens`; returns the kept history and whether any were dropped.
pub fn trim_history(history: &[ChatMessage], max_tokens: usize, est: &TokenEstimator) -> (Vec<ChatMessage>, bool) {
    let summary_len = history.iter().take_while(|m| m.role == ChatRole::System).count();
    let (summary, turns) = history.split_at(summary_len);
    let mut start = 0;
    let tokens = |ms: &[ChatMessage]| ms.iter().map(|m| est.estimate(&m.content)).sum::<usize>();
    while start < turns.len() && tokens(&turns[start..]) > max_tokens {
        start += 1;
    }
    (summary.iter().chain(&turns[start..]).cloned().collect(), start > 0)
}

/// Builds the turn for `message` within the coder's window (see the module doc).
pub async fn build_turn(
    env: &AgentEnv,
    history: &[ChatMessage],
    focus: Option<ChatFocus>,
    message: &str,
) -> Result<ChatTurn, ContextError> {
    let est = TokenEstimator::new(&env.config.budget);
    let (mut kept, mut trimmed) = trim_history(history, env.config.store.session_history_tokens as usize, &est);
    let coder = &env.config.models.coder;
    // The context builder reserves budget.reserved_output_tokens; the chat's reply may take max_output_tokens.
    let reply_extra =
        (coder.max_output_tokens as usize).saturating_sub(env.config.budget.reserved_output_tokens as usize);
    let system = env.prompts.render(PromptId::CHAT_SYSTEM, &[])?;
    loop {
        let history_tokens: usize = kept.iter().map(|m| est.estimate(&m.content)).sum();
        let (kind, primary) = match &focus {
            Some(f) => (
                RequestKind::Selection {
                    path: f.path.clone(),
                    start_line: f.start_line,
                    end_line: f.end_line,
                    instruction: message.to_string(),
                },
                Some(f.text.clone()),
            ),
            None => (RequestKind::Question { text: message.to_string(), path: None }, None),
        };
        let reserve = reply_extra + history_tokens;
        match answer_context(env, kind, message.to_string(), primary, Some(system.clone()), reserve).await {
            Ok(ctx) => {
                let mut messages = vec![ChatMessage::system(ctx.system())];
                messages.extend(kept);
                messages.push(ChatMessage::user(ctx.user_message()));
                trimmed |= !ctx.budget.dropped.is_empty();
                return Ok(ChatTurn { messages, sources: sources(&ctx), trimmed });
            }
            Err(ContextError::DoesNotFit { .. }) if kept.iter().any(|m| m.role != ChatRole::System) => {
                let first_turn = kept.iter().position(|m| m.role != ChatRole::System).unwrap_or(0);
                kept.remove(first_turn);
                trimmed = true;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The sources of a reply as one Markdown line of `file:line` links (empty when there are none).
pub fn sources_footer(root: &Path, sources: &[(String, usize, String)]) -> String {
    if sources.is_empty() {
        return String::new();
    }
    let links: Vec<String> = sources
        .iter()
        .map(|(path, line, _)| {
            let uri = Uri::from_file_path(root.join(path)).map(|u| u.as_str().to_string()).unwrap_or_default();
            format!("[{path}:{line}]({uri}#L{line})")
        })
        .collect();
    format!("\n\nSources: {}", links.join(", "))
}

impl super::server::Backend {
    /// The turn built from the project (`None` when no workspace folder is open or the
    /// index or store cannot be opened: then the chat sees only the buffer), with the workspace root for the sources' links.
    pub(super) async fn project_turn(
        &self,
        params: &super::chat::ChatParams,
        history: &[ChatMessage],
    ) -> tower_lsp_server::jsonrpc::Result<Option<(ChatTurn, std::path::PathBuf)>> {
        use super::commands::request_failed;
        // The folder of the chat's document, else the first folder.
        let document =
            params.text_document.as_ref().and_then(|td| Some((td, self.file_in_workspace(&td.uri, "the chat").ok()?)));
        let launcher = match &document {
            Some((_, (folder, _))) => self.launcher_in(folder),
            None => self.launcher(),
        };
        let Ok(launcher) = launcher else { return Ok(None) };
        let root = launcher.paths.root.clone();
        let focus = document.and_then(|(td, (_, rel))| {
            let text = self.docs.lock().ok()?.get(td.uri.as_str()).map(|o| o.doc.text())?;
            let (a, z) = match (&params.range, &params.position) {
                (Some(r), _) => super::edit_flows::range_lines(r),
                (None, Some(p)) => (p.line as usize + 1, p.line as usize + 1),
                (None, None) => (1, 1),
            };
            Some(ChatFocus { path: rel, start_line: a, end_line: z, text })
        });
        let env = match launcher.env(launcher.snapshot()).await {
            Ok(env) => env,
            Err(why) => {
                tracing::warn!("the chat sees only the buffer: {why}");
                return Ok(None);
            }
        };
        let turn =
            build_turn(&env, history, focus, &params.message).await.map_err(|e| request_failed(e.to_string()))?;
        Ok(Some((turn, root)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_keeps_the_summary_and_drops_the_oldest_turns() {
        let b = crate::config::LoadedConfig::load(&Default::default()).unwrap().config.budget;
        let est = TokenEstimator::new(&b);
        let long = "word ".repeat(200);
        let history = vec![
            ChatMessage::system("Summary: we talked about prices."),
            ChatMessage::user(format!("first {long}")),
            ChatMessage::assistant(format!("first reply {long}")),
            ChatMessage::user("second"),
            ChatMessage::assistant("second reply"),
        ];
        let one_long = est.estimate(&history[1].content);
        let (kept, trimmed) = trim_history(&history, one_long, &est);
        assert!(trimmed);
        let shown: Vec<&str> = kept.iter().map(|m| m.content.split(' ').next().unwrap()).collect();
        assert_eq!(shown, ["Summary:", "second", "second"]);
        let (all, trimmed) = trim_history(&history, usize::MAX, &est);
        assert_eq!((all.len(), trimmed), (5, false));
        let footer = sources_footer(Path::new("/w"), &[("a/b.py".into(), 3, "a/b.py:3-9".into())]);
        assert_eq!(footer, "\n\nSources: [a/b.py:3](file:///w/a/b.py#L3)");
    }
}
