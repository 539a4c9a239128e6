//! Flows that answer and never write: `tinycoder.explain` (the selection or the
//! symbol at the cursor) and `tinycoder.ask` (a question about the project).
//! The prompt comes from the context builder (index hits, the code around the
//! cursor, memory); the reply streams as `tinycoder/chatDelta` notifications and
//! then opens as a Markdown document (`window/showDocument`) with its sources as
//! `file:line` links, or arrives as a message where the client cannot show documents.

use super::agent_flow::Launcher;
use super::chat::{ChatDelta, ChatDeltaParams};
use super::commands::{request_failed, string_arg};
use super::edit_flows::{range_lines, target_args};
use super::progress::ProgressHandle;
use super::server::Backend;
use crate::agent::{AgentEnv, MemoryContext, SourceView};
use crate::config::{ModelRole, PromptId};
use crate::context::{
    BuiltContext, ContextBuilder, ContextExtras, ContextRequest, RequestKind, SectionKind, TokenCounter,
};
use crate::llm::{ChatMessage, ChatRequest};
use futures::StreamExt;
use serde_json::{json, Value};
use std::path::Path;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};

/// `tinycoder.explain [{uri, range}]`: explains the selection (or the symbol at the cursor).
pub async fn explain(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let (t, rel, launcher) = target_args(backend, args, "tinycoder.explain")?;
    let snapshot = launcher.snapshot();
    let text = snapshot.read(&rel).ok_or_else(|| request_failed(format!("{rel} is not a readable text file")))?;
    let (mut a, mut z) = t.range.as_ref().map(range_lines).unwrap_or((1, text.lines().count().max(1)));
    if a == z {
        if let Some(s) = crate::agent::subject_at(&rel, &text, a) {
            (a, z) = (s.start_line, s.end_line);
        }
    }
    let lines = format!("{a}-{z}");
    let request = launcher
        .prompts
        .render(PromptId::EXPLAIN_REQUEST, &[("path", &rel), ("lines", &lines)])
        .map_err(|e| request_failed(e.to_string()))?;
    let kind = RequestKind::Selection { path: rel.clone(), start_line: a, end_line: z, instruction: "explain".into() };
    let title = format!("Explanation of {rel}:{lines}");
    answer(launcher, kind, request, Some((rel, text)), title, "tinycoder: explain")
}

/// `tinycoder.ask ["question"]` or `[{question, uri?}]`: answers from the project's code.
pub async fn ask(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let question = string_arg(args, "question").filter(|q| !q.trim().is_empty()).ok_or_else(|| {
        Error::invalid_params("tinycoder.ask needs a question: [\"text\"] or [{\"question\": \"text\", \"uri\"?: ..}]")
    })?;
    let (file, launcher) = match args.first().and_then(|a| a.get("uri")) {
        Some(_) => {
            let (_, rel, launcher) = target_args(backend, args, "tinycoder.ask")?;
            (Some(rel), launcher)
        }
        None => (None, backend.launcher()?),
    };
    let primary = file.as_ref().and_then(|f| Some((f.clone(), launcher.snapshot().read(f)?)));
    let request = launcher
        .prompts
        .render(PromptId::ASK_REQUEST, &[("question", &question)])
        .map_err(|e| request_failed(e.to_string()))?;
    let title = format!("Answer: {}", question.lines().next().unwrap_or(""));
    answer(launcher, RequestKind::Question { text: question, path: file }, request, primary, title, "tinycoder: ask")
}

/// The context of an answer: the builder's sections for `kind`, with `request` last;
/// `system` replaces the builder's system prompt, `reserve` keeps tokens free for more messages.
pub async fn answer_context(
    env: &AgentEnv,
    kind: RequestKind,
    request: String,
    primary_text: Option<String>,
    system: Option<String>,
    reserve: usize,
) -> std::result::Result<BuiltContext, crate::context::ContextError> {
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Coder);
    let memory = MemoryContext::new(env);
    let builder = ContextBuilder {
        index: &env.index,
        prompts: &env.prompts,
        config: &env.config,
        memory: &memory,
        counter: &counter,
    };
    let extras = ContextExtras {
        system,
        request: Some(request),
        request_last: true,
        primary_text,
        reserve_tokens: reserve,
        ..Default::default()
    };
    builder.build_with(&ContextRequest { kind, role: ModelRole::Coder }, &extras).await
}

/// The code the context showed, as `(path, first line, title)`.
pub fn sources(ctx: &BuiltContext) -> Vec<(String, usize, String)> {
    ctx.sections
        .iter()
        .filter(|s| matches!(s.kind, SectionKind::Code | SectionKind::Related))
        .filter_map(|s| {
            let place = s.title.split(" (").next().unwrap_or(&s.title).trim_end_matches(':');
            let (path, lines) = place.rsplit_once(':')?;
            let first = lines.split('-').next()?.parse().ok()?;
            Some((path.to_string(), first, s.title.trim_end_matches(':').to_string()))
        })
        .collect()
}

/// The answer as a Markdown document: title, reply, and its sources as `file:line` links.
pub fn render_answer(root: &Path, title: &str, reply: &str, sources: &[(String, usize, String)]) -> String {
    let mut out = format!("# {title}\n\n{}\n", reply.trim());
    if !sources.is_empty() {
        out.push_str("\n## Sources\n\n");
        for (path, line, what) in sources {
            let uri = Uri::from_file_path(root.join(path)).map(|u| u.as_str().to_string()).unwrap_or_default();
            out.push_str(&format!("- [{what}]({uri}#L{line})\n"));
        }
    }
    out
}

/// Runs one answer in the background; answers at once with its job, session and request ids.
fn answer(
    launcher: Launcher,
    kind: RequestKind,
    request: String,
    primary: Option<(String, String)>,
    title: String,
    progress_title: &str,
) -> Result<Option<Value>> {
    launcher.model()?;
    let h = launcher.handles.clone();
    let progress = ProgressHandle::start(&h.client, &h.jobs, progress_title, h.progress);
    let session_id = format!("answer-{}", uuid::Uuid::new_v4());
    let request_id = progress.id().to_string();
    let ids = json!({"jobId": progress.id(), "sessionId": session_id, "requestId": request_id});
    tokio::spawn(async move {
        let cancel = progress.cancel_token();
        let result = async {
            let env = launcher.env(launcher.snapshot()).await?;
            progress.report("gathering the code the answer needs", None);
            let ctx = answer_context(&env, kind, request, primary.map(|(_, t)| t), None, 0)
                .await
                .map_err(|e| e.to_string())?;
            let messages = vec![ChatMessage::system(ctx.system()), ChatMessage::user(ctx.user_message())];
            let req = ChatRequest::new(ModelRole::Coder, messages);
            let mut stream = env.model.chat_stream(req, cancel.clone()).await.map_err(|e| e.to_string())?;
            let mut reply = String::new();
            while let Some(delta) = stream.next().await {
                let delta = delta.map_err(|e| e.to_string())?;
                if delta.is_empty() {
                    continue;
                }
                reply.push_str(&delta);
                progress.report(format!("{} characters", reply.chars().count()), None);
                let params = ChatDeltaParams { session_id: session_id.clone(), request_id: request_id.clone(), delta };
                h.client.send_notification::<ChatDelta>(params).await;
            }
            Ok::<_, String>((env, render_answer(&launcher.paths.root, &title, &reply, &sources(&ctx))))
        }
        .await;
        drop(progress);
        match result {
            Ok((env, markdown)) => show_answer(&h, &env, &markdown).await,
            Err(_) if cancel.is_cancelled() => {}
            Err(e) => h.client.show_message(MessageType::ERROR, format!("tinycoder: no answer: {e}")).await,
        }
    });
    Ok(Some(ids))
}

/// Opens the answer as a Markdown document, or shows it as a message when the client cannot.
async fn show_answer(h: &super::agent_flow::FlowHandles, env: &AgentEnv, markdown: &str) {
    let dir = env.paths.cache_dir.join("answers");
    let file = dir.join(format!("{}.md", uuid::Uuid::new_v4()));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, markdown));
    match (written, Uri::from_file_path(&file)) {
        (Ok(()), Some(uri)) if h.edits.show_document => {
            let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: None };
            if let Err(e) = h.client.show_document(params).await {
                tracing::debug!("showDocument failed: {e}");
            }
        }
        _ => h.client.show_message(MessageType::INFO, markdown.to_string()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{BudgetBreakdown, ContextSection};

    #[test]
    fn sources_become_links() {
        let s = |kind, title: &str| ContextSection { kind, title: title.into(), text: String::new(), tokens: 0 };
        let ctx = BuiltContext {
            sections: vec![
                s(SectionKind::Code, "shop/cart.py:1-40"),
                s(SectionKind::Related, "shop/prices.py:10-15 (function total_price)"),
                s(SectionKind::Memory, "Remembered:"),
            ],
            budget: BudgetBreakdown::default(),
        };
        let found = sources(&ctx);
        assert_eq!(
            found.iter().map(|(p, l, _)| (p.as_str(), *l)).collect::<Vec<_>>(),
            vec![("shop/cart.py", 1), ("shop/prices.py", 10)]
        );
        let md = render_answer(Path::new("/w"), "Answer: why?", "Because.\n", &found);
        assert!(md.starts_with("# Answer: why?\n\nBecause.\n"), "{md}");
        assert!(md.contains("- [shop/prices.py:10-15 (function total_price)](file:///w/shop/prices.py#L10)"), "{md}");
    }
}
