//! The coder's call: its prompt (one file, one request, the failing test and
//! its output, memory, the previous attempt's feedback), within the budget.

use super::env::AgentEnv;
use super::memory_step::MemoryContext;
use super::request::AgentRequest;
use super::state::{AttemptRecord, RelatedDefinition, Target, TaskProgress, TestSummary};
use super::strategy::StrategyEffects;
use super::test_output::{failure_excerpt, without_repeats};
use crate::config::{ModelRole, PromptError, PromptId, PromptLibrary, RuntimeConfig};
use crate::context::{
    BuiltContext, ContextBuilder, ContextError, ContextExtras, ContextRequest, ContextSection, RequestKind,
    SectionKind, TokenCounter,
};
use crate::edits::EditFormat;
use crate::llm::{ChatMessage, ChatRequest, LlmError, TokenEstimator};
use futures::StreamExt;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// The edit format for `path` under `runtime.edit_format`; `symbols_only` says
/// the reply must name what it changes: the coder may also change definitions
/// in other files, or the request is about a selection and the rest of the
/// file stays exactly as the user has it (a whole-file reply can drop lines).
pub fn choose_format(config: &RuntimeConfig, path: &str, before: &str, symbols_only: bool) -> EditFormat {
    if let Some(f) = EditFormat::parse(&config.edit_format) {
        return f;
    }
    let has_grammar = crate::syntax::language_for_path(Path::new(path)).is_some();
    if !symbols_only && before.lines().count() <= config.whole_file_max_lines as usize {
        EditFormat::WholeFile
    } else if has_grammar {
        EditFormat::WholeSymbol
    } else {
        EditFormat::SearchReplace
    }
}

pub fn language_of(path: &str) -> &'static str {
    crate::syntax::language_for_path(Path::new(path)).map(|l| l.name).unwrap_or("")
}

/// How the reply must look, in words for the model.
pub fn format_rules(prompts: &PromptLibrary, format: EditFormat, path: &str) -> Result<String, PromptError> {
    let language = language_of(path);
    match format {
        EditFormat::WholeSymbol => prompts.render(PromptId::EDIT_FORMAT_WHOLE_SYMBOL, &[("language", language)]),
        EditFormat::WholeFile => {
            prompts.render(PromptId::EDIT_FORMAT_WHOLE_FILE, &[("path", path), ("language", language)])
        }
        EditFormat::SearchReplace => prompts.render(PromptId::EDIT_FORMAT_SEARCH_REPLACE, &[("path", path)]),
        EditFormat::JsonSymbol => prompts.render(PromptId::EDIT_FORMAT_JSON_SYMBOL, &[("language", language)]),
        EditFormat::LineFix => prompts.render(PromptId::EDIT_FORMAT_LINE_FIX, &[("language", language)]),
    }
}

/// The grammar a reply in `format` must follow (`prompts/reply_grammar_*.md`), where the
/// format has one: one fenced code block and nothing else, or the line-fix form.
pub fn reply_grammar(prompts: &PromptLibrary, format: EditFormat, path: &str) -> Result<Option<String>, PromptError> {
    let language = [("language", language_of(path))];
    Ok(match format {
        EditFormat::WholeSymbol | EditFormat::WholeFile => {
            Some(prompts.render(PromptId::REPLY_GRAMMAR_CODE_BLOCK, &language)?)
        }
        EditFormat::LineFix => Some(prompts.render(PromptId::REPLY_GRAMMAR_LINE_FIX, &language)?),
        // Search/replace blocks carry their own markers; JSON replies have their schema.
        EditFormat::SearchReplace | EditFormat::JsonSymbol => None,
    })
}

/// The request as the coder reads it (last in the prompt).
pub fn request_text(
    prompts: &PromptLibrary,
    request: &AgentRequest,
    target: &Target,
    format: EditFormat,
) -> Result<String, PromptError> {
    let rules = format_rules(prompts, format, &target.path)?;
    match request {
        AgentRequest::Edit { instruction, .. } => {
            let lines = format!("{}-{}", target.start_line, target.end_line);
            prompts.render(
                PromptId::CODER_REQUEST_EDIT,
                &[("path", &target.path), ("lines", &lines), ("instruction", instruction), ("format_rules", &rules)],
            )
        }
        AgentRequest::AddTests { .. } => prompts.render(
            PromptId::CODER_REQUEST_TESTS,
            &[("path", &target.path), ("subject", &target.message), ("format_rules", &rules)],
        ),
        AgentRequest::Fix { .. } => {
            let problem = problem_text(prompts, target)?;
            // Code the failing code calls in other files is shown and may be changed by name; say so,
            // or the model takes the target file's own definition as the only place a fix can go.
            let callees: Vec<String> = target
                .related
                .iter()
                .filter(|r| r.path != target.path)
                .map(|r| format!("`{}` in {}", r.name, r.path))
                .collect();
            if callees.is_empty() {
                prompts.render(
                    PromptId::CODER_REQUEST_FIX,
                    &[("problem", &problem), ("path", &target.path), ("format_rules", &rules)],
                )
            } else {
                prompts.render(
                    PromptId::CODER_REQUEST_FIX_CALLEES,
                    &[
                        ("problem", &problem),
                        ("path", &target.path),
                        ("callees", &callees.join(", ")),
                        ("format_rules", &rules),
                    ],
                )
            }
        }
    }
}

/// What is wrong, for a fix: the failing test and its message (or the
/// diagnostic), then the user's own words about it.
pub fn problem_text(prompts: &PromptLibrary, target: &Target) -> Result<String, PromptError> {
    let problem = match &target.test {
        Some(test) => prompts.render(PromptId::CODER_PROBLEM_TEST, &[("test", test), ("message", &target.message)])?,
        None => {
            let line = target.start_line.to_string();
            prompts.render(
                PromptId::CODER_PROBLEM_DIAGNOSTIC,
                &[("path", &target.path), ("line", &line), ("message", &target.message)],
            )?
        }
    };
    match &target.reported {
        Some(report) => {
            Ok(format!("{problem}\n{}", prompts.render(PromptId::CODER_USER_REPORT, &[("report", report)])?))
        }
        None => Ok(problem),
    }
}

/// The failing test's source, the code it calls in other files, and the test
/// output, shown after the code (dropped in reverse order when over budget).
pub fn evidence(
    prompts: &PromptLibrary,
    target: &Target,
    baseline: Option<&TestSummary>,
    max_lines: usize,
    whole_file_lines: usize,
) -> Result<Vec<ContextSection>, PromptError> {
    let section = |title: String, lang: &str, code: &str| ContextSection {
        kind: SectionKind::Evidence,
        title,
        text: format!("```{lang}\n{}\n```", code.trim_end()),
        tokens: 0,
    };
    let mut out = Vec::new();
    if let Some((location, code)) = &target.subject {
        let title = prompts.render(PromptId::CODER_SECTION_SUBJECT, &[("location", location)])?;
        out.push(section(title, language_of(location.split(':').next().unwrap_or("")), code));
    }
    if let Some((location, code)) = &target.test_source {
        let title = prompts.render(PromptId::CODER_SECTION_TEST, &[("location", location)])?;
        out.push(section(title, language_of(location.split(':').next().unwrap_or("")), code));
    }
    for d in &target.related {
        let Some(text) = target.related_files.get(&d.path) else { continue };
        let location = format!("{}:{}-{}", d.path, d.start_line, d.end_line);
        let id = if d.raises { PromptId::CODER_SECTION_RAISES } else { PromptId::CODER_SECTION_CALLEE };
        let title = prompts.render(id, &[("location", &location), ("name", &d.name)])?;
        out.push(section(title, language_of(&d.path), &d.lines_in(text)));
    }
    if let (Some(_), Some(b)) = (&target.test, baseline) {
        let excerpt = shown_excerpt(target, &b.output_tail, max_lines, whole_file_lines);
        if !excerpt.is_empty() {
            let title = prompts.render(PromptId::CODER_SECTION_OUTPUT, &[("command", &b.command)])?;
            out.push(section(title, "", &excerpt));
        }
    }
    Ok(out)
}

/// The part of a test run's output about the target's failing test, without
/// what the target's prompts already show.
fn shown_excerpt(target: &Target, output: &str, max_lines: usize, whole_file_lines: usize) -> String {
    let excerpt = failure_excerpt(output, target.test.as_deref(), max_lines);
    let shown = target.shown_code(whole_file_lines);
    without_repeats(&excerpt, &shown.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The reply cap of a fix: `runtime.fix_reply_file_factor` tokens per token of
/// the code it may edit (the target file and the files of related definitions),
/// at least `runtime.fix_reply_min_tokens`; `None` leaves the role's cap. No edit
/// format needs much more than the code it rewrites, and a small model caught
/// repeating itself would otherwise write until the role's cap.
pub fn fix_reply_cap(config: &RuntimeConfig, target: &Target, estimator: &TokenEstimator) -> Option<u32> {
    if config.fix_reply_file_factor <= 0.0 {
        return None;
    }
    let editable: usize = std::iter::once(target.before.as_str())
        .chain(target.related_files.values().map(String::as_str))
        .map(|t| estimator.estimate(t))
        .sum();
    let cap = (editable as f32 * config.fix_reply_file_factor).ceil() as u32;
    Some(cap.max(config.fix_reply_min_tokens))
}

/// `text` cut to about `max_tokens` by the estimator, at a line end. Nothing
/// marks the cut inside the text: a small model copies such markers into code.
pub fn trim_to_tokens(text: &str, max_tokens: usize, estimator: &TokenEstimator) -> (String, bool) {
    if estimator.estimate(text) <= max_tokens {
        return (text.to_string(), false);
    }
    let mut out = String::new();
    for line in text.lines() {
        if estimator.estimate(&out) + estimator.estimate(line) + 2 > max_tokens {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, true)
}

/// How much of a failed attempt a retry's prompt shows.
#[derive(Debug, Clone, Copy)]
pub struct FeedbackLimits {
    /// Lines of the test output at most (`runtime.failure_output_lines`).
    pub failure_lines: usize,
    /// Tokens for the previous reply and its error together (`runtime.feedback_tokens`).
    pub budget_tokens: usize,
    /// Files up to this many lines are shown whole (`budget.large_file_lines`).
    pub whole_file_lines: usize,
}

/// The previous attempt, shown back to the model, and what went wrong with it.
pub fn feedback(
    prompts: &PromptLibrary,
    last: &AttemptRecord,
    target: &Target,
    limits: FeedbackLimits,
    estimator: &TokenEstimator,
) -> Result<(String, String), PromptError> {
    let FeedbackLimits { failure_lines, budget_tokens, whole_file_lines } = limits;
    let error = match &last.result {
        super::state::AttemptResult::BadEdit { error } => error.clone(),
        super::state::AttemptResult::ModelError { error } => format!("the model call failed: {error}"),
        super::state::AttemptResult::Tested { tests, why, .. } => {
            let excerpt = shown_excerpt(target, &tests.output_tail, failure_lines, whole_file_lines);
            format!("{why}.\n```\n{excerpt}\n```")
        }
    };
    // The previous reply matters most (the model sees what it wrote); the error gets the rest.
    let (previous, _) = trim_to_tokens(&last.reply, budget_tokens * 2 / 3, estimator);
    let (error, cut) = trim_to_tokens(&error, budget_tokens / 3, estimator);
    let error = if cut { format!("{error}{}", prompts.render(PromptId::CODER_OUTPUT_CUT, &[])?) } else { error };
    let number = last.number.to_string();
    let text = prompts.render(PromptId::CODER_FEEDBACK, &[("attempt", &number), ("error", &error)])?;
    Ok((previous, text))
}

/// The suspect attempt `number` is pointed at: none before attempt `from`
/// (0: never), then one per attempt, most likely first, until none is left.
pub fn focus_of(target: &Target, number: usize, from: u32) -> Option<&RelatedDefinition> {
    if from == 0 || number < from as usize {
        return None;
    }
    target.suspects.get(number - from as usize)
}

/// The words that point the coder at `suspect`.
pub fn focus_text(prompts: &PromptLibrary, suspect: &RelatedDefinition) -> Result<String, PromptError> {
    let lines = format!("{}-{}", suspect.start_line, suspect.end_line);
    prompts.render(PromptId::CODER_FOCUS, &[("name", &suspect.name), ("path", &suspect.path), ("lines", &lines)])
}

/// The coder's context for the next attempt of `p`.
pub async fn build_context(
    env: &AgentEnv,
    request: &AgentRequest,
    p: &TaskProgress,
    format: EditFormat,
    memory: &MemoryContext,
    counter: &TokenCounter,
) -> Result<BuiltContext, ContextError> {
    let target = p.target.as_ref().ok_or_else(|| ContextError::NoSuchFile { path: "(no target)".into() })?;
    let rt = &env.config.runtime;
    let system = env.prompts.render(PromptId::CODER_SYSTEM, &[])?;
    let mut req_text = request_text(&env.prompts, request, target, format)?;
    let failed: Vec<String> = p.attempts.iter().map(super::router::describe).collect();
    let chosen = StrategyEffects::of(&p.strategies).instruction(&env.prompts, &failed)?;
    if !chosen.is_empty() {
        req_text = format!("{req_text}\n\n{chosen}");
    }
    let test_file = target.test_source.as_ref().map(|(t, _)| t.split(':').next().unwrap_or("").to_string());
    let extras = ContextExtras {
        system: Some(system),
        request: Some(req_text),
        evidence: evidence(
            &env.prompts,
            target,
            p.baseline.as_ref(),
            rt.failure_output_lines as usize,
            env.config.budget.large_file_lines as usize,
        )?,
        primary_text: Some(target.before.clone()),
        reserve_tokens: if p.attempts.is_empty() { 0 } else { rt.feedback_tokens as usize * 2 },
        without_repo_map: true,
        request_last: true,
        exclude_related: test_file.into_iter().collect(),
        shown: target.related.iter().map(|d| (d.path.clone(), d.start_line)).collect(),
    };
    let kind = RequestKind::Diagnostic {
        path: target.path.clone(),
        line: target.start_line.max(1),
        message: target.message.clone(),
    };
    let builder = ContextBuilder { index: &env.index, prompts: &env.prompts, config: &env.config, memory, counter };
    builder.build_with(&ContextRequest { kind, role: ModelRole::Coder }, &extras).await
}

/// The messages of a coder call: the context, then (on a retry) what went
/// wrong, after the previous reply as the model's own turn when `show_previous`,
/// else in the same user message (a fresh try of the same request).
pub fn messages(ctx: &BuiltContext, retry: Option<(String, String)>, show_previous: bool) -> Vec<ChatMessage> {
    let system = ChatMessage::system(ctx.system());
    match retry {
        Some((previous, feedback)) if show_previous => vec![
            system,
            ChatMessage::user(ctx.user_message()),
            ChatMessage::assistant(previous),
            ChatMessage::user(feedback),
        ],
        Some((_, feedback)) => vec![system, ChatMessage::user(format!("{}\n\n{feedback}", ctx.user_message()))],
        None => vec![system, ChatMessage::user(ctx.user_message())],
    }
}

/// Sends one call and collects the whole reply (cancellable at every chunk).
pub async fn complete(env: &AgentEnv, req: ChatRequest, cancel: &CancellationToken) -> Result<String, LlmError> {
    let mut stream = env.model.chat_stream(req, cancel.clone()).await?;
    let mut text = String::new();
    while let Some(delta) = stream.next().await {
        text.push_str(&delta?);
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_formats_get_a_fenced_block_grammar_in_the_files_language() {
        let prompts = PromptLibrary::load(None).unwrap();
        let g = reply_grammar(&prompts, EditFormat::WholeSymbol, "shop/cart.py").unwrap().unwrap();
        assert!(g.starts_with("root ::= \"```python\\n\""), "{g}");
        let g = reply_grammar(&prompts, EditFormat::LineFix, "src/lib.rs").unwrap().unwrap();
        assert!(g.contains("Wrong line:\\n```rust") && g.contains("Fixed line:"), "{g}");
        assert_eq!(reply_grammar(&prompts, EditFormat::SearchReplace, "a.py").unwrap(), None);
        assert_eq!(reply_grammar(&prompts, EditFormat::JsonSymbol, "a.py").unwrap(), None);
    }

    #[test]
    fn auto_format_by_size_and_grammar() {
        let mut rt = crate::config::LoadedConfig::load(&Default::default()).unwrap().config.runtime;
        rt.edit_format = "auto".into();
        rt.whole_file_max_lines = 3;
        assert_eq!(choose_format(&rt, "a.py", "x\n", false), EditFormat::WholeFile);
        assert_eq!(choose_format(&rt, "a.py", "x\n", true), EditFormat::WholeSymbol, "other files need names");
        assert_eq!(choose_format(&rt, "a.py", "a\nb\nc\nd\n", false), EditFormat::WholeSymbol);
        assert_eq!(choose_format(&rt, "a.js", "a\nb\nc\nd\n", false), EditFormat::SearchReplace);
        rt.edit_format = "search_replace".into();
        assert_eq!(choose_format(&rt, "a.py", "x\n", false), EditFormat::SearchReplace);
    }

    #[test]
    fn a_fix_reply_is_capped_by_the_code_it_may_edit() {
        let loaded = crate::config::LoadedConfig::load(&Default::default()).unwrap().config;
        let mut rt = loaded.runtime;
        let est = TokenEstimator::new(&loaded.budget);
        rt.fix_reply_file_factor = 2.0;
        rt.fix_reply_min_tokens = 100;
        let small = Target { before: "x = 1\n".into(), ..Default::default() };
        assert_eq!(fix_reply_cap(&rt, &small, &est), Some(100), "a tiny file gets the floor");
        let body = "def f(a, b):\n    return a + b\n".repeat(40);
        let big = Target { before: body.clone(), ..Default::default() };
        let cap = fix_reply_cap(&rt, &big, &est).unwrap();
        assert_eq!(cap as usize, 2 * est.estimate(&body));
        let mut with_related = big.clone();
        with_related.related_files.insert("other.py".into(), body.clone());
        assert_eq!(fix_reply_cap(&rt, &with_related, &est).unwrap(), 2 * cap, "related files can be edited too");
        rt.fix_reply_file_factor = 0.0;
        assert_eq!(fix_reply_cap(&rt, &big, &est), None, "0 leaves the role's cap");
    }
}
