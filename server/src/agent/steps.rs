//! The runtime's steps: each does one directive's work, records its events and
//! updates the task's progress. Only the runtime loop calls them.

use super::coder;
use super::env::AgentEnv;
use super::focused;
use super::locate::{enclosing_definition, locate_failure, read_target};
use super::memory_step::{self, MemoryContext};
use super::reply_edit::edit_from_reply;
use super::request::AgentRequest;
use super::runtime::Task;
use super::state::{AttemptRecord, AttemptResult, CriticOutcome, RelatedDefinition, Target, TestSummary};
use super::strategy::StrategyEffects;
use super::AgentError;
use crate::config::ModelRole;
use crate::context::TokenCounter;
use crate::contracts::EventType;
use crate::edits::{EditFormat, ReplyChecks, SymbolEdit};
use crate::llm::{schema_of, ChatRequest, LlmError};
use crate::sandbox::{run_project_tests, BufferOverlay, SandboxError};
use crate::store::NewEvent;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEnd {
    Done,
    /// The step saw its cancellation token and stopped early (nothing recorded as an outcome).
    Cancelled,
}

fn ev(t: EventType, payload: serde_json::Value) -> NewEvent {
    NewEvent::new(t, payload)
}

/// The user's buffers with `extra` files (path, text) laid over them: what a shadow run sees.
pub(super) fn overlays_with(env: &AgentEnv, extra: &[(String, String)]) -> Vec<BufferOverlay> {
    let mut overlays = env.sources.overlays();
    for (path, text) in extra {
        overlays.retain(|o| o.rel_path != Path::new(path));
        overlays.push(BufferOverlay { rel_path: PathBuf::from(path), text: text.clone() });
    }
    overlays
}

/// Runs the project's tests in a fresh shadow with `extra` files (path, text) overlaid on the user's buffers.
pub async fn run_tests(
    env: &AgentEnv,
    extra: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<TestSummary, SandboxError> {
    let overlays = overlays_with(env, extra);
    let report = run_project_tests(&env.config, &env.paths, &overlays, cancel).await?;
    Ok(TestSummary::from_report(&report, &report.why))
}

/// The tests before any change.
pub async fn baseline(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
    task.record(env, vec![ev(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "baseline"}))]).await?;
    let (summary, payload, stop) = baseline_run(env, cancel).await;
    if cancel.is_cancelled() {
        return Ok(StepEnd::Cancelled);
    }
    if stop.is_some() {
        task.progress.stop_reason = stop;
    }
    task.progress.baseline = Some(summary);
    task.save(env, vec![ev(EventType::ToolCompleted, payload)], crate::contracts::TaskStatus::Testing).await?;
    Ok(StepEnd::Done)
}

/// Runs the tests before any change: the summary, its `tool_completed` payload,
/// and why the task cannot go on when they could not run at all.
pub async fn baseline_run(
    env: &AgentEnv,
    cancel: &CancellationToken,
) -> (TestSummary, serde_json::Value, Option<String>) {
    let started = Instant::now();
    let mut stop = None;
    let summary = match run_tests(env, &[], cancel).await {
        Ok(s) => s,
        Err(SandboxError::NoTestCommand(root)) => {
            TestSummary::unavailable(&format!("no test command found in {}", root.display()))
        }
        Err(e) => {
            stop = Some(format!("the tests could not run: {e}"));
            TestSummary::unavailable(&e.to_string())
        }
    };
    let payload = json!({
        "tool": "run_tests", "purpose": "baseline", "ok": summary.available,
        "passed": summary.passed, "failing": summary.failing, "failures": summary.failures, "command": summary.command, "why": summary.why,
        "duration_ms": started.elapsed().as_millis() as u64,
    });
    (summary, payload, stop)
}

/// The failing test a fix from the tests starts from: the one at the fix's
/// location, or the first failure when the fix names none.
fn failure_to_fix(request: &AgentRequest, baseline: &TestSummary) -> Option<crate::sandbox::TestFailure> {
    match request {
        AgentRequest::Fix { target: Some(loc), .. } => {
            baseline.failures.iter().find(|f| f.file == loc.path && f.line as usize == loc.focus()).cloned()
        }
        AgentRequest::Fix { target: None, .. } => {
            baseline.failures.iter().find(|f| !f.file.is_empty()).or(baseline.failures.first()).cloned()
        }
        _ => None,
    }
}

/// The calls `failure`'s test makes into the project (`runtime.trace_calls`;
/// pytest only); empty when it cannot be traced, which never stops a fix.
async fn observe_calls(
    env: &AgentEnv,
    failure: Option<&crate::sandbox::TestFailure>,
    cancel: &CancellationToken,
) -> Vec<crate::sandbox::TracedCall> {
    let rt = &env.config.runtime;
    let Some(f) = failure.filter(|f| rt.trace_calls && f.test.contains("::")) else {
        return Vec::new();
    };
    let limits = crate::sandbox::TraceLimits { max_calls: rt.trace_max_calls, value_chars: rt.trace_value_chars };
    match crate::sandbox::trace_python_test(&env.config, &env.paths, &env.sources.overlays(), &f.test, limits, cancel)
        .await
    {
        Ok(trace) => trace.map(|t| t.calls).unwrap_or_default(),
        Err(e) => {
            tracing::info!(test = %f.test, "the failing test could not be traced: {e}");
            Vec::new()
        }
    }
}

/// The file, lines and failure the coder works on.
pub async fn locate(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
    task.record(env, vec![ev(EventType::ToolCalled, json!({"tool": "locate"}))]).await?;
    let baseline = task.progress.baseline.clone().unwrap_or_default();
    let failure = failure_to_fix(&task.request, &baseline);
    let from_tests =
        matches!(&task.request, AgentRequest::Fix { target: None, .. } | AgentRequest::Fix { from_tests: true, .. });
    let calls = if from_tests { observe_calls(env, failure.as_ref(), cancel).await } else { Vec::new() };
    if cancel.is_cancelled() {
        return Ok(StepEnd::Cancelled);
    }
    let target = match &task.request {
        AgentRequest::Edit { target, instruction, .. } => read_target(env, &target.path).map(|before| {
            let n = before.lines().count().max(1);
            let (a, z) =
                if target.start_line == 0 { (1, n) } else { (target.start_line.min(n), target.end_line.min(n)) };
            Target {
                path: target.path.clone(),
                start_line: a,
                end_line: z,
                message: instruction.clone(),
                why: "named by the request".into(),
                before,
                ..Default::default()
            }
        }),
        AgentRequest::Fix { target: Some(loc), message, from_tests, .. } => {
            if *from_tests && failure.is_some() {
                Ok(locate_failure(env, &baseline, failure.as_ref(), message.as_deref(), &calls))
                    .and_then(|t| t.ok_or_else(|| format!("could not find the code behind the failing test at {loc}")))
            } else {
                read_target(env, &loc.path).map(|before| {
                    let (a, z) = enclosing_definition(&loc.path, &before, loc.focus())
                        .map(|d| d.lines())
                        .unwrap_or((loc.focus(), loc.end_line.max(loc.focus())));
                    Target {
                        path: loc.path.clone(),
                        start_line: a,
                        end_line: z,
                        test: failure.as_ref().map(|f| f.test.clone()),
                        message: message
                            .clone()
                            .or_else(|| failure.as_ref().map(|f| f.message.clone()))
                            .unwrap_or_default(),
                        why: "named by the request".into(),
                        before,
                        protect_tests: !crate::edits::is_test_path(&loc.path),
                        ..Default::default()
                    }
                })
            }
        }
        AgentRequest::AddTests { target, test_file } => {
            super::add_tests::tests_target(env, target, test_file.as_deref())
        }
        AgentRequest::Fix { target: None, message, .. } => {
            locate_failure(env, &baseline, failure.as_ref(), message.as_deref(), &calls).ok_or_else(|| {
                format!(
                    "could not find the code behind the failing tests ({}); name the file: `tinycoder fix FILE:LINE`",
                    baseline.headline()
                )
            })
        }
    };
    if target.is_ok() && task.progress.check.is_none() {
        task.progress.check = super::diagnostic_check::reproduce(env, &task.request, cancel).await;
        if cancel.is_cancelled() {
            return Ok(StepEnd::Cancelled);
        }
        if let Some(c) = &task.progress.check {
            let payload = json!({"tool": "check", "purpose": "baseline", "checker": c.checker,
                "target": c.target.as_ref().map(|d| d.headline()), "errors": c.baseline.len(), "note": c.note});
            task.record(env, vec![ev(EventType::ToolCompleted, payload)]).await?;
        }
    }
    match target {
        Ok(t) => {
            let payload = json!({"tool": "locate", "ok": true, "path": t.path, "lines": [t.start_line, t.end_line], "test": t.test, "why": t.why,
                "traced_calls": calls.len(), "first_suspect": t.suspects.first().map(|d| format!("{} ({})", d.name, d.path))});
            task.progress.target = Some(t);
            task.save(env, vec![ev(EventType::ToolCompleted, payload)], crate::contracts::TaskStatus::Orchestrating)
                .await?;
        }
        Err(reason) => {
            task.record(
                env,
                vec![ev(EventType::ToolCompleted, json!({"tool": "locate", "ok": false, "error": reason}))],
            )
            .await?;
            task.progress.stop_reason = Some(reason);
        }
    }
    Ok(StepEnd::Done)
}

/// One coder attempt: context, model call, edit, syntax check, tests in the shadow.
pub async fn attempt(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
    let number = task.progress.attempts.len() + 1;
    let Some(target) = task.progress.target.clone() else {
        task.progress.stop_reason = Some("no file to edit was found".into());
        return Ok(StepEnd::Done);
    };
    if number == 1 {
        task.record(env, vec![ev(EventType::StatusChanged, json!({"status": "retrieving_memory"}))]).await?;
    }
    // A small model asked to find the bug among several definitions often copies them all
    // back unchanged; pointed at one, it changes that one. Retries go down the suspects,
    // and a reply about one definition needs a format that names it.
    let focus = coder::focus_of(&target, number, env.config.runtime.focus_from_attempt);
    let symbols_only = !target.related.is_empty()
        || target.subject.is_some()
        || focus.is_some()
        || matches!(task.request, AgentRequest::Edit { .. });
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Coder);
    // The narrow prompt only where the trace shows the suspect computing the wrong
    // value: on a guess, the whole prompt with a note keeps the rest in view.
    let traced = focus.filter(|s| target.computed_by.as_ref().is_some_and(|c| c.same_place(s)));
    let narrow = match (traced, EditFormat::parse(&env.config.runtime.focus_edit_format)) {
        (Some(suspect), Some(f)) => {
            let shown = env.config.runtime.observed_calls_shown as usize;
            focused::focused_messages(&env.prompts, &target, suspect, f, shown)?.map(|m| (m, f))
        }
        _ => None,
    };
    let format = match &narrow {
        Some((_, f)) => *f,
        None => coder::choose_format(&env.config.runtime, &target.path, &target.before, symbols_only),
    };
    // The file the progress names: a narrow attempt edits the suspect's.
    let edited = match (&narrow, traced) {
        (Some(_), Some(suspect)) => suspect.path.clone(),
        _ => target.path.clone(),
    };
    let messages = match narrow {
        Some((messages, _)) => {
            let suspect = focus.map(|d| format!("{}:{}-{}", d.path, d.start_line, d.end_line));
            task.record(
                env,
                vec![ev(EventType::ContextBuilt, json!({"attempt": number, "focused": suspect, "sections": []}))],
            )
            .await?;
            messages
        }
        None => match broad_messages(env, task, &target, format, focus, &counter).await? {
            Some(messages) => messages,
            None => return Ok(StepEnd::Done),
        },
    };
    let prompt_text: String = messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n\n");
    let (prompt_tokens, exact) = counter.count(&prompt_text).await;
    tracing::trace!(attempt = number, prompt = %prompt_text, "the coder's prompt");
    let mut req = ChatRequest::new(ModelRole::Coder, messages);
    if number > 1 {
        // A retry with the same sampling tends to repeat itself: sample a little hotter, with a new seed.
        let rt = &env.config.runtime;
        let coder = &env.config.models.coder;
        let hotter = coder.temperature + rt.retry_temperature_step * (number - 1) as f32;
        req.temperature = Some(hotter.min(rt.retry_temperature_max.max(coder.temperature)));
        req.seed = Some(coder.seed.wrapping_add(number as i64));
    }
    if matches!(task.request, AgentRequest::Fix { .. }) {
        let estimator = crate::llm::TokenEstimator::new(&env.config.budget);
        let cap = coder::fix_reply_cap(&env.config.runtime, &target, &estimator);
        req.max_tokens = cap.map(|c| c.min(env.config.models.coder.max_output_tokens));
    }
    if format == EditFormat::JsonSymbol {
        req.json_schema = Some(schema_of::<crate::edits::JsonSymbolReply>());
    } else if env.config.runtime.reply_grammar {
        req.grammar = coder::reply_grammar(&env.prompts, format, &edited)?;
    }
    let model = env.config.models.coder.name.clone();
    task.record(
        env,
        vec![
            ev(
                EventType::CoderCalled,
                json!({"attempt": number, "file": edited, "format": format, "mode": mode_of(&task.request),
                    "focus": focus.map(|d| format!("{} ({})", d.name, d.path))}),
            ),
            ev(
                EventType::LlmCalled,
                json!({"role": "coder", "model": model, "prompt_tokens": prompt_tokens, "exact": exact}),
            ),
        ],
    )
    .await?;
    task.progress.model_calls += 1;
    task.progress.prompt_tokens.push(prompt_tokens);
    let usage = crate::llm::PromptUsageSink::default();
    req.usage = Some(usage.clone());
    let started = Instant::now();
    let reply = coder::complete(env, req, cancel).await;
    let usage = usage.lock().ok().and_then(|u| *u);
    if let Some(u) = usage {
        task.progress.prompt_evaluated += u.evaluated;
        task.progress.prompt_cached += u.cached.unwrap_or(0);
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let reply = match reply {
        Err(LlmError::Cancelled) => return Ok(StepEnd::Cancelled),
        Err(e) => {
            let fatal =
                matches!(e, LlmError::ServerDown { .. } | LlmError::ModelMissing { .. } | LlmError::OverBudget { .. });
            task.record(
                env,
                vec![ev(
                    EventType::LlmResultReceived,
                    json!({"ok": false, "error": e.to_string(), "duration_ms": duration_ms}),
                )],
            )
            .await?;
            if fatal {
                task.progress.stop_reason = Some(e.to_string());
            }
            let record = AttemptRecord {
                number,
                format,
                reply: String::new(),
                changes: vec![],
                changed_symbols: vec![],
                result: AttemptResult::ModelError { error: e.to_string() },
                prompt_tokens,
                duration_ms,
                changes_nothing: false,
                check: None,
            };
            task.progress.attempts.push(record);
            task.save(env, vec![], crate::contracts::TaskStatus::ExecutingStep).await?;
            return Ok(StepEnd::Done);
        }
        Ok(r) => r,
    };
    task.record(
        env,
        vec![ev(
            EventType::LlmResultReceived,
            json!({"ok": true, "chars": reply.chars().count(), "duration_ms": duration_ms,
                   "prompt_evaluated": usage.map(|u| u.evaluated), "prompt_cached": usage.and_then(|u| u.cached)}),
        )],
    )
    .await?;
    tracing::debug!(attempt = number, %reply, "the coder's reply");
    let opts = SymbolEdit {
        focus_line: Some(target.start_line),
        protect_tests: target.protect_tests,
        region: focus.map(focused::region_of),
    };
    let checks = ReplyChecks::from_config(&env.config.runtime);
    // What the next attempt is shown of this one: the reply as the model wrote it.
    let shown_reply = reply.clone();
    let mut record = AttemptRecord {
        number,
        format,
        reply: shown_reply,
        changes: vec![],
        changed_symbols: vec![],
        result: AttemptResult::BadEdit { error: String::new() },
        prompt_tokens,
        duration_ms,
        changes_nothing: false,
        check: None,
    };
    let (applied, changes_nothing) = edit_from_reply(&task.request, &target, format, &reply, &opts, &checks);
    record.changes_nothing = changes_nothing;
    match applied {
        Err(e) => {
            record.result = AttemptResult::BadEdit { error: e.to_string() };
            task.record(
                env,
                vec![ev(EventType::CoderCompleted, json!({"attempt": number, "ok": false, "error": e.to_string()}))],
            )
            .await?;
        }
        Ok(outcome) => {
            let diff: String = outcome
                .changes
                .iter()
                .map(|(p, after)| crate::edits::unified_diff(p, target.before_of(p).unwrap_or(""), after))
                .collect();
            task.record(
                env,
                vec![
                    ev(EventType::CoderCompleted, json!({"attempt": number, "ok": true, "changed_symbols": outcome.changed_symbols, "kept_documentation_lines": outcome.kept_documentation_lines, "diff": diff})),
                    ev(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "check", "attempt": number})),
                ],
            )
            .await?;
            let check = match &task.progress.check {
                Some(c) => super::diagnostic_check::verify(env, c, &outcome.changes, cancel).await,
                None => None,
            };
            if cancel.is_cancelled() {
                return Ok(StepEnd::Cancelled);
            }
            record.check = check.as_ref().map(|v| v.why.clone());
            if let Some(v) = check.as_ref().filter(|v| !v.ok) {
                // The checker still objects: fed back like a failing test, the tests not run.
                task.record(
                    env,
                    vec![ev(
                        EventType::ToolCompleted,
                        json!({"tool": "check", "attempt": number, "ok": false, "why": v.why}),
                    )],
                )
                .await?;
                let tests = TestSummary {
                    available: true,
                    command: v.command.clone(),
                    why: "the diagnostic's checker".into(),
                    passed: false,
                    failing: v.remaining.clone(),
                    failures: vec![],
                    duration_ms: v.duration_ms,
                    output_tail: v.output_tail.clone(),
                };
                record.changes = outcome.changes;
                record.changed_symbols = outcome.changed_symbols;
                record.result = AttemptResult::Tested { tests, success: false, why: v.why.clone() };
                task.progress.attempts.push(record);
                task.save(env, vec![], crate::contracts::TaskStatus::Testing).await?;
                return Ok(StepEnd::Done);
            }
            let tests = match run_tests(env, &outcome.changes, cancel).await {
                Ok(s) => s,
                Err(SandboxError::NoTestCommand(_)) => TestSummary::unavailable("no test command"),
                Err(e) => {
                    task.progress.stop_reason = Some(format!("the tests could not run: {e}"));
                    TestSummary::unavailable(&e.to_string())
                }
            };
            if cancel.is_cancelled() {
                return Ok(StepEnd::Cancelled);
            }
            let baseline = task.progress.baseline.clone().unwrap_or_else(|| TestSummary::unavailable("no baseline"));
            let (mut success, mut why) = super::state::judge(&baseline, &tests, target.test.as_deref());
            // The proposal says how the diagnostic itself was checked, or that it was not.
            let checked = check.map(|v| v.why).or_else(|| task.progress.check.as_ref().and_then(|c| c.note.clone()));
            if let Some(c) = checked {
                why = format!("{c}; {why}");
            }
            let (mut changes, mut tests, mut left_out) = (outcome.changes, tests, Vec::new());
            if !success && matches!(task.request, AgentRequest::AddTests { .. }) {
                let pruned = super::add_tests::passing_without_failing_new_tests(
                    env, &changes, &target, &baseline, &tests, cancel,
                )
                .await;
                if cancel.is_cancelled() {
                    return Ok(StepEnd::Cancelled);
                }
                if let Some(p) = pruned {
                    (success, why, changes, tests, left_out) = (true, p.why, p.changes, p.tests, p.left_out);
                }
            }
            task.record(
                env,
                vec![ev(
                    EventType::ToolCompleted,
                    json!({"tool": "run_tests", "purpose": "check", "attempt": number, "passed": tests.passed, "success": success, "why": why, "failing": tests.failing, "failures": tests.failures}),
                )],
            )
            .await?;
            record.changes = changes;
            record.changed_symbols = outcome.changed_symbols.into_iter().filter(|n| !left_out.contains(n)).collect();
            record.result = AttemptResult::Tested { tests, success, why };
        }
    }
    task.progress.attempts.push(record);
    task.save(env, vec![], crate::contracts::TaskStatus::Testing).await?;
    Ok(StepEnd::Done)
}

/// The messages of an attempt with the whole context (the target file, what
/// it calls, the test and its output, memory), the previous attempt's feedback
/// and, when one is chosen, a note naming the suspect; `None` when the context
/// could not be built (the task's stop reason says why).
async fn broad_messages(
    env: &AgentEnv,
    task: &mut Task,
    target: &Target,
    format: EditFormat,
    focus: Option<&RelatedDefinition>,
    counter: &TokenCounter,
) -> Result<Option<Vec<crate::llm::ChatMessage>>, AgentError> {
    let number = task.progress.attempts.len() + 1;
    let memory = MemoryContext::new(env);
    let effects = StrategyEffects::of(&task.progress.strategies);
    let widened = AgentEnv { config: effects.widen(&env.config), ..env.clone() };
    let ctx = match coder::build_context(&widened, &task.request, &task.progress, format, &memory, counter).await {
        Ok(c) => c,
        Err(e) => {
            task.progress.stop_reason = Some(format!("the coder's context could not be built: {e}"));
            return Ok(None);
        }
    };
    let sections: Vec<serde_json::Value> =
        ctx.sections.iter().map(|s| json!({"kind": s.kind, "title": s.title, "tokens": s.tokens})).collect();
    task.record(
        env,
        vec![ev(EventType::ContextBuilt, json!({"attempt": number, "sections": sections, "budget": ctx.budget}))],
    )
    .await?;
    let retry = match task.progress.attempts.last() {
        // "Another approach": a fresh try, the failed attempts named in the request instead.
        Some(_) if effects.other_approach => None,
        Some(last) => Some(coder::feedback(
            &env.prompts,
            last,
            target,
            coder::FeedbackLimits {
                failure_lines: env.config.runtime.failure_output_lines as usize,
                budget_tokens: env.config.runtime.feedback_tokens as usize,
                whole_file_lines: env.config.budget.large_file_lines as usize,
            },
            &counter.estimator(),
        )?),
        None => None,
    };
    // A reply that repeated the code tells the model nothing new, and shown as its own
    // turn it is copied back again: after one, the retry is a fresh try. So is one
    // after a narrow attempt, whose reply answered another prompt in another format.
    let show_previous = env.config.runtime.retry_shows_previous_reply
        && !task.progress.attempts.last().is_some_and(|a| a.changes_nothing || a.format == EditFormat::LineFix);
    let mut messages = coder::messages(&ctx, retry, show_previous);
    if let (Some(suspect), Some(last)) = (focus, messages.last_mut()) {
        last.content = format!("{}\n\n{}", last.content, coder::focus_text(&env.prompts, suspect)?);
    }
    Ok(Some(messages))
}

fn mode_of(request: &AgentRequest) -> &'static str {
    match request {
        AgentRequest::Fix { .. } => "fix",
        AgentRequest::Edit { .. } => "refactor",
        AgentRequest::AddTests { .. } => "test",
    }
}

/// The critic's score of the passing patch, or the configured fallback.
pub async fn critic(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
    task.progress.questions = super::critic::patch_questions(env, &task.progress);
    let messages = super::critic::critic_messages(env, &task.request, &task.progress)?;
    let model = env.config.models.critic.name.clone();
    task.record(
        env,
        vec![
            ev(EventType::CriticCalled, json!({"model": model})),
            ev(EventType::LlmCalled, json!({"role": "critic", "model": model})),
        ],
    )
    .await?;
    task.progress.model_calls += 1;
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Critic);
    let text: String = messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n\n");
    task.progress.prompt_tokens.push(counter.count(&text).await.0);
    let outcome = match super::critic::judge(env, messages, cancel).await {
        Err(LlmError::Cancelled) => return Ok(StepEnd::Cancelled),
        Ok(score) => CriticOutcome::Scored { score },
        Err(e) => {
            let fallback = env.config.runtime.critic_fallback.clone();
            if fallback == "reject" {
                task.progress.stop_reason =
                    Some(format!("the critic is unavailable ({e}) and runtime.critic_fallback is \"reject\""));
            }
            CriticOutcome::Unavailable { error: e.to_string(), fallback }
        }
    };
    let payload = serde_json::to_value(&outcome).unwrap_or_default();
    task.progress.critic = Some(outcome);
    task.save(env, vec![ev(EventType::CriticCompleted, payload)], crate::contracts::TaskStatus::CriticEvaluating)
        .await?;
    Ok(StepEnd::Done)
}

/// The memory write policy for the error and its fix (fixes only).
pub async fn remember(env: &AgentEnv, task: &mut Task) -> Result<StepEnd, AgentError> {
    let text = match (&task.request, memory_step::candidate_text(env, &task.progress)) {
        (AgentRequest::Fix { .. }, Some(t)) => t,
        _ => {
            task.progress.memory_done = true;
            task.save(env, vec![], crate::contracts::TaskStatus::StoringMemory).await?;
            return Ok(StepEnd::Done);
        }
    };
    task.record(env, vec![ev(EventType::MemoryWriteSuggested, json!({"kind": "error_fix", "text": text}))]).await?;
    let written = memory_step::write(env, &task.id, &task.progress, text).await?;
    let mut events =
        vec![ev(EventType::MemoryWriteDecided, serde_json::to_value(&written.decision).unwrap_or_default())];
    if let Some(id) = &written.id {
        events.push(ev(EventType::MemoryWritten, json!({"id": id})));
    }
    task.progress.memory_done = true;
    task.save(env, events, crate::contracts::TaskStatus::StoringMemory).await?;
    Ok(StepEnd::Done)
}
