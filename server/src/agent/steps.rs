//! The runtime's steps: each does one directive's work, records its events and
//! updates the task's progress. Only the runtime loop calls them.

use super::coder;
use super::env::AgentEnv;
use super::memory_step::{self, MemoryContext};
use super::request::AgentRequest;
use super::runtime::Task;
use super::state::{AttemptRecord, AttemptResult, CriticOutcome, RelatedDefinition, Target, TestSummary};
use super::strategy::StrategyEffects;
use super::target::{called_names, frames_in, rank_candidates, Frame};
use super::AgentError;
use crate::config::ModelRole;
use crate::context::TokenCounter;
use crate::contracts::EventType;
use crate::edits::{apply_reply, EditFormat, ReplyChecks, SymbolEdit};
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

/// Runs the project's tests in a fresh shadow with `extra` files (path, text) overlaid on the user's buffers.
pub async fn run_tests(
    env: &AgentEnv,
    extra: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<TestSummary, SandboxError> {
    let mut overlays = env.sources.overlays();
    for (path, text) in extra {
        overlays.retain(|o| o.rel_path != Path::new(path));
        overlays.push(BufferOverlay { rel_path: PathBuf::from(path), text: text.clone() });
    }
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

/// The enclosing definition (function or method) of 1-based `line` in `path`:
/// (first line, last line, its source).
fn enclosing_definition(path: &str, text: &str, line: usize) -> Option<(usize, usize, String)> {
    use crate::syntax::SymbolKind;
    smallest_enclosing(path, text, line, &[SymbolKind::Function, SymbolKind::Method])
}

/// The smallest symbol of one of `kinds` around 1-based `line` in `path`:
/// (first line, last line, its source).
fn smallest_enclosing(
    path: &str,
    text: &str,
    line: usize,
    kinds: &[crate::syntax::SymbolKind],
) -> Option<(usize, usize, String)> {
    let lang = crate::syntax::language_for_path(Path::new(path))?;
    let tree = crate::syntax::parse(lang, text)?;
    let symbols = crate::syntax::extract_symbols(lang, &tree, text.as_bytes());
    let row = line.saturating_sub(1);
    let s = symbols
        .iter()
        .filter(|s| kinds.contains(&s.kind))
        .filter(|s| s.start.row <= row && row <= s.end.row)
        .min_by_key(|s| s.end.row - s.start.row)?;
    Some((s.start.row + 1, s.end.row + 1, text[s.byte_range.clone()].to_string()))
}

/// The file, lines and failure the coder works on.
pub async fn locate(env: &AgentEnv, task: &mut Task) -> Result<StepEnd, AgentError> {
    task.record(env, vec![ev(EventType::ToolCalled, json!({"tool": "locate"}))]).await?;
    let target = match &task.request {
        AgentRequest::Edit { target, instruction, .. } => read_target(env, &target.path).map(|before| {
            let n = before.lines().count().max(1);
            let (a, z) =
                if target.start_line == 0 { (1, n) } else { (target.start_line.min(n), target.end_line.min(n)) };
            Target {
                path: target.path.clone(),
                start_line: a,
                end_line: z,
                test: None,
                message: instruction.clone(),
                test_source: None,
                why: "named by the request".into(),
                before,
                protect_tests: false,
                related: Vec::new(),
                related_files: Default::default(),
                subject: None,
            }
        }),
        AgentRequest::Fix { target: Some(loc), message, from_tests } => {
            let baseline = task.progress.baseline.clone().unwrap_or_default();
            let failure =
                baseline.failures.iter().find(|f| f.file == loc.path && f.line as usize == loc.focus()).cloned();
            if *from_tests && failure.is_some() {
                Ok(locate_failure(env, &baseline, failure.as_ref()))
                    .and_then(|t| t.ok_or_else(|| format!("could not find the code behind the failing test at {loc}")))
            } else {
                read_target(env, &loc.path).map(|before| {
                    let (a, z) = enclosing_definition(&loc.path, &before, loc.focus())
                        .map(|(a, z, _)| (a, z))
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
                        test_source: None,
                        why: "named by the request".into(),
                        before,
                        protect_tests: !crate::edits::is_test_path(&loc.path),
                        related: Vec::new(),
                        related_files: Default::default(),
                        subject: None,
                    }
                })
            }
        }
        AgentRequest::AddTests { target, test_file } => {
            super::add_tests::tests_target(env, target, test_file.as_deref())
        }
        AgentRequest::Fix { target: None, .. } => {
            let baseline = task.progress.baseline.clone().unwrap_or_default();
            let first = baseline.failures.iter().find(|f| !f.file.is_empty()).or(baseline.failures.first()).cloned();
            locate_failure(env, &baseline, first.as_ref()).ok_or_else(|| {
                format!(
                    "could not find the code behind the failing tests ({}); name the file: `tinycoder fix FILE:LINE`",
                    baseline.headline()
                )
            })
        }
    };
    match target {
        Ok(t) => {
            let payload = json!({"tool": "locate", "ok": true, "path": t.path, "lines": [t.start_line, t.end_line], "test": t.test, "why": t.why});
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

fn read_target(env: &AgentEnv, path: &str) -> Result<String, String> {
    env.sources
        .read(path)
        .ok_or_else(|| format!("`{path}` is not a readable text file in the workspace {}", env.paths.root.display()))
}

/// From a test failure to the code it exercises (see `target.rs`).
fn locate_failure(
    env: &AgentEnv,
    baseline: &TestSummary,
    failure: Option<&crate::sandbox::TestFailure>,
) -> Option<Target> {
    let failure = failure?;
    let frames = frames_in(&coder::failure_excerpt(&baseline.output_tail, Some(&failure.test), 400));
    let failure_frame =
        (!failure.file.is_empty()).then(|| Frame { path: failure.file.clone(), line: failure.line as usize });
    let test_text = failure_frame.as_ref().and_then(|f| env.sources.read(&f.path));
    let test_def = match (&failure_frame, &test_text) {
        (Some(f), Some(text)) => enclosing_definition(&f.path, text, f.line),
        _ => None,
    };
    // What the failing line calls comes first: that is what the assertion checks.
    let mut names = match (&failure_frame, &test_text) {
        (Some(f), Some(text)) => called_names(text.lines().nth(f.line.saturating_sub(1)).unwrap_or("")),
        _ => Vec::new(),
    };
    for n in test_def.as_ref().map(|(_, _, code)| called_names(code)).unwrap_or_default() {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let definitions: Vec<(String, String, usize)> = env.index.with_files(|table| {
        let mut out = Vec::new();
        // Functions and methods before classes: the code that runs.
        for holders in [false, true] {
            for name in &names {
                for (path, record) in &table.files {
                    for s in record.symbols.iter().filter(|s| &s.name == name && is_holder_kind(&s.kind) == holders) {
                        out.push((name.clone(), path.clone(), s.start_line));
                    }
                }
            }
        }
        out
    });
    let exists = |p: &str| env.sources.read(p).is_some();
    let candidates = rank_candidates(&frames, &definitions, failure_frame.as_ref(), &exists);
    let best = candidates.first()?;
    let before = env.sources.read(&best.path)?;
    let enclosing = enclosing_definition(&best.path, &before, best.line).map(|(a, z, _)| (a, z));
    let (a, z) = enclosing.unwrap_or((best.line, best.line));
    // Outside any function (a class the test constructs, a struct), what the
    // whole enclosing type calls, or the whole file's calls, lead to related code.
    let focus = enclosing
        .or_else(|| {
            use crate::syntax::SymbolKind::{Class, Impl, Trait};
            smallest_enclosing(&best.path, &before, best.line, &[Class, Impl, Trait]).map(|(a, z, _)| (a, z))
        })
        .unwrap_or((1, before.lines().count().max(1)));
    let related = related_definitions(env, &best.path, &before, focus, &names);
    let related_files = related.iter().filter_map(|d| Some((d.path.clone(), env.sources.read(&d.path)?))).collect();
    let test_source = match (&failure_frame, test_def) {
        (Some(f), Some((a, z, code))) if f.path != best.path || !(a..=z).contains(&best.line) => {
            Some((format!("{}:{a}-{z}", f.path), code))
        }
        _ => None,
    };
    Some(Target {
        path: best.path.clone(),
        start_line: a,
        end_line: z,
        test: Some(failure.test.clone()),
        message: failure.message.clone(),
        test_source,
        why: best.why.clone(),
        before,
        protect_tests: true,
        related,
        related_files,
        subject: None,
    })
}

fn is_holder_kind(kind: &str) -> bool {
    matches!(kind, "class" | "impl" | "struct" | "trait" | "module" | "enum")
}

/// The 1-based lines `a..=z` of `text`.
fn lines_of(text: &str, a: usize, z: usize) -> String {
    text.lines().skip(a.saturating_sub(1)).take((z + 1).saturating_sub(a.max(1))).collect::<Vec<_>>().join("\n")
}

/// Functions in other files than `path` that the code under test calls: what
/// the test calls and what the focused code calls, then what those call, breadth
/// first up to `budget.related_hops` calls deep and `budget.related_symbols` in all.
/// A bug is often a few calls below the function the test names.
fn related_definitions(
    env: &AgentEnv,
    path: &str,
    text: &str,
    focus: (usize, usize),
    test_calls: &[String],
) -> Vec<RelatedDefinition> {
    let limit = env.config.budget.related_symbols as usize;
    let hops = env.config.budget.related_hops.max(1) as usize;
    env.index.with_files(|table| {
        let defs_of = |names: &[String]| -> Vec<RelatedDefinition> {
            let mut out = Vec::new();
            for name in names {
                for (file, record) in &table.files {
                    if crate::edits::is_test_path(file) {
                        continue;
                    }
                    for s in record.symbols.iter().filter(|s| &s.name == name && !is_holder_kind(&s.kind)) {
                        out.push(RelatedDefinition {
                            path: file.clone(),
                            name: name.clone(),
                            start_line: s.start_line,
                            end_line: s.end_line,
                        });
                    }
                }
            }
            out
        };
        let mut named: Vec<String> = test_calls.to_vec();
        let mut level: Vec<String> = test_calls.to_vec();
        for n in called_names(&lines_of(text, focus.0, focus.1)) {
            if !named.contains(&n) {
                named.push(n.clone());
                level.push(n);
            }
        }
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut out: Vec<RelatedDefinition> = Vec::new();
        for _ in 0..hops {
            let mut next: Vec<String> = Vec::new();
            for d in defs_of(&level) {
                if seen.contains(&(d.path.clone(), d.start_line)) {
                    continue;
                }
                seen.push((d.path.clone(), d.start_line));
                let body = match d.path == path {
                    true => lines_of(text, d.start_line, d.end_line),
                    false => {
                        env.sources.read(&d.path).map(|t| lines_of(&t, d.start_line, d.end_line)).unwrap_or_default()
                    }
                };
                for n in called_names(&body) {
                    if !named.contains(&n) {
                        named.push(n.clone());
                        next.push(n);
                    }
                }
                // The target file is shown itself.
                if d.path != path {
                    out.push(d);
                }
            }
            if next.is_empty() || out.len() >= limit {
                break;
            }
            level = next;
        }
        out.truncate(limit);
        out
    })
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
    let symbols_only =
        !target.related.is_empty() || target.subject.is_some() || matches!(task.request, AgentRequest::Edit { .. });
    let format = coder::choose_format(&env.config.runtime, &target.path, &target.before, symbols_only);
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Coder);
    let memory = MemoryContext::new(env);
    let effects = StrategyEffects::of(&task.progress.strategies);
    let widened = AgentEnv { config: effects.widen(&env.config), ..env.clone() };
    let ctx = match coder::build_context(&widened, &task.request, &task.progress, format, &memory, &counter).await {
        Ok(c) => c,
        Err(e) => {
            task.progress.stop_reason = Some(format!("the coder's context could not be built: {e}"));
            return Ok(StepEnd::Done);
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
            &target,
            env.config.runtime.failure_output_lines as usize,
            env.config.runtime.feedback_tokens as usize,
            &counter.estimator(),
        )?),
        None => None,
    };
    // A reply that repeated the code tells the model nothing new, and shown as its own
    // turn it is copied back again: after one, the retry is a fresh try.
    let show_previous = env.config.runtime.retry_shows_previous_reply
        && !task.progress.attempts.last().is_some_and(|a| a.changes_nothing);
    let messages = coder::messages(&ctx, retry, show_previous);
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
    if format == EditFormat::JsonSymbol {
        req.json_schema = Some(schema_of::<crate::edits::JsonSymbolReply>());
    }
    let model = env.config.models.coder.name.clone();
    task.record(
        env,
        vec![
            ev(
                EventType::CoderCalled,
                json!({"attempt": number, "file": target.path, "format": format, "mode": mode_of(&task.request)}),
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
    let opts = SymbolEdit { focus_line: Some(target.start_line), protect_tests: target.protect_tests };
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
    };
    let applied = match &task.request {
        // New tests go at the end of the test file; what the reply repeats of it is dropped.
        AgentRequest::AddTests { .. } => {
            let usable = super::add_tests::without_existing_definitions(&target.path, &target.before, &reply);
            super::add_tests::append_new_tests(&target.path, &target.before, &usable)
                .map_or_else(|| apply_reply(format, &target.files(), &usable, &opts, &checks), Ok)
        }
        // Documentation: functions the model invents around the documented one are left out.
        AgentRequest::Edit { comments_only: true, .. } => {
            let usable = crate::edits::filter_reply_definitions(
                &target.path,
                &target.before,
                &reply,
                crate::edits::KeepDefinitions::Existing,
            );
            apply_reply(format, &target.files(), &usable, &opts, &checks)
        }
        _ => apply_reply(format, &target.files(), &reply, &opts, &checks),
    };
    record.changes_nothing = matches!(&applied, Err(e) if e.is_unchanged());
    let applied = applied.map_err(|e| e.to_string()).and_then(|o| match &task.request {
        AgentRequest::AddTests { .. } => o
            .changes
            .iter()
            .try_for_each(|(p, after)| {
                super::add_tests::check_added_tests(p, target.before_of(p).unwrap_or(""), after).map(|_| ())
            })
            .map(|_| o),
        AgentRequest::Edit { comments_only: true, .. } => o
            .changes
            .iter()
            .try_for_each(|(p, after)| {
                crate::edits::check_comments_only(p, target.before_of(p).unwrap_or(""), after)
                    .map_err(|e| e.to_string())
            })
            .map(|_| o),
        _ => Ok(o),
    });
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
                    ev(EventType::CoderCompleted, json!({"attempt": number, "ok": true, "changed_symbols": outcome.changed_symbols, "diff": diff})),
                    ev(EventType::ToolCalled, json!({"tool": "run_tests", "purpose": "check", "attempt": number})),
                ],
            )
            .await?;
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
            let (success, why) = super::state::judge(&baseline, &tests, target.test.as_deref());
            task.record(
                env,
                vec![ev(
                    EventType::ToolCompleted,
                    json!({"tool": "run_tests", "purpose": "check", "attempt": number, "passed": tests.passed, "success": success, "why": why, "failing": tests.failing, "failures": tests.failures}),
                )],
            )
            .await?;
            record.changes = outcome.changes;
            record.changed_symbols = outcome.changed_symbols;
            record.result = AttemptResult::Tested { tests, success, why };
        }
    }
    task.progress.attempts.push(record);
    task.save(env, vec![], crate::contracts::TaskStatus::Testing).await?;
    Ok(StepEnd::Done)
}

fn mode_of(request: &AgentRequest) -> &'static str {
    match request {
        AgentRequest::Fix { .. } => crate::contracts::CoderMode::Fix.as_str(),
        AgentRequest::Edit { .. } => crate::contracts::CoderMode::Refactor.as_str(),
        AgentRequest::AddTests { .. } => crate::contracts::CoderMode::Test.as_str(),
    }
}

/// The critic's score of the passing patch, or the configured fallback.
pub async fn critic(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
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
