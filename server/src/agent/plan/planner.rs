//! The planner call: the repo map and the request in, a validated task graph
//! out. A reply that is not JSON of the plan's schema, or that does not
//! validate, goes back to the planner with what was wrong, up to
//! `runtime.max_replans` times; then the planner fails with every reason.

use super::graph::{validate, TaskGraph};
use super::log::TaskLog;
use crate::agent::{AgentEnv, AgentError};
use crate::config::{ModelRole, PromptId};
use crate::context::TokenCounter;
use crate::contracts::{EventType, PlanReply};
use crate::index::repo_map::identifiers_in;
use crate::index::RepoMapFocus;
use crate::llm::{parse_reply, schema_of, ChatMessage, ChatRequest, LlmError};
use crate::store::NewEvent;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A plan the planner made, and what it cost.
#[derive(Debug, Clone)]
pub struct Planned {
    pub graph: TaskGraph,
    /// Replies sent back before this one validated.
    pub replans: u32,
    pub model_calls: usize,
    /// Prompt tokens of each planner call (estimated or counted).
    pub prompt_tokens: Vec<usize>,
}

/// Why no plan came out.
#[derive(Debug, thiserror::Error)]
pub enum PlannerError {
    #[error("the planner gave no usable plan in {attempts} tries (runtime.max_replans = {max_replans}); last problem: {}", .problems.last().map(String::as_str).unwrap_or("none"))]
    Invalid { attempts: u32, max_replans: u32, problems: Vec<String>, model_calls: usize, prompt_tokens: Vec<usize> },
    #[error("the planner's model failed: {0}")]
    Model(#[from] LlmError),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// Whether workspace-relative `file` exists, as the user sees it (an unsaved buffer counts).
pub fn file_exists(env: &AgentEnv, file: &str) -> bool {
    env.sources.read(file).is_some() || env.paths.root.join(file).is_file()
}

/// Every workspace file the index knows, sorted (for validation and "did you mean").
pub fn known_files(env: &AgentEnv) -> Vec<String> {
    env.index.with_files(|t| t.files.keys().cloned().collect())
}

/// The planner's prompt: the repo map (pulled towards what the request names) and the request.
pub fn planner_messages(env: &AgentEnv, request: &str, known: &[String]) -> Result<Vec<ChatMessage>, AgentError> {
    let focus = RepoMapFocus { files: super::route::named_files(request, known), identifiers: identifiers_in(request) };
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Planner);
    let est = counter.estimator();
    let count = |s: &str| est.estimate(s);
    let map = env.index.repo_map(&focus).render_files(env.config.budget.repo_map_tokens as usize, &count);
    let map = if map.trim().is_empty() { known.join("\n") } else { map };
    let max_steps = env.config.runtime.max_steps.to_string();
    Ok(vec![
        ChatMessage::system(env.prompts.render(PromptId::PLANNER_SYSTEM, &[])?),
        ChatMessage::user(env.prompts.render(
            PromptId::PLANNER_REQUEST,
            &[("repo_map", &map), ("request", request), ("max_steps", &max_steps)],
        )?),
    ])
}

/// Asks the planner for a plan of `request` and validates it; `log` records the calls.
pub async fn make_plan(
    env: &AgentEnv,
    request: &str,
    mut log: Option<&mut TaskLog>,
    cancel: &CancellationToken,
) -> Result<Planned, PlannerError> {
    let known = known_files(env);
    let mut messages = planner_messages(env, request, &known)?;
    let counter = TokenCounter::with_model(&env.config.budget, env.model.clone(), ModelRole::Planner);
    let max_replans = env.config.runtime.max_replans;
    let max_steps = env.config.runtime.max_steps as usize;
    let exists = |f: &str| file_exists(env, f);
    let named = super::route::named_files(request, &known);
    let mut problems = Vec::new();
    let mut prompt_tokens = Vec::new();
    for attempt in 1..=max_replans + 1 {
        let text: String = messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n\n");
        prompt_tokens.push(counter.count(&text).await.0);
        let mut req = ChatRequest::new(ModelRole::Planner, messages.clone());
        req.json_schema = Some(schema_of::<PlanReply>());
        if let Some(l) = log.as_deref_mut() {
            l.record(env, vec![NewEvent::new(EventType::LlmCalled, json!({"role": "planner", "attempt": attempt}))])
                .await?;
        }
        let reply = env.model.chat(req, cancel.clone()).await?;
        let outcome = parse_reply::<PlanReply>(&reply.text)
            .map_err(|e| format!("the reply is not a plan in the JSON format asked for ({e})"))
            .and_then(|plan| validate(plan, &exists, &known, &named, max_steps).map_err(|e| e.to_string()));
        if let Some(l) = log.as_deref_mut() {
            let payload = match &outcome {
                Ok(g) => json!({"role": "planner", "attempt": attempt, "valid": true, "steps": g.steps.len()}),
                Err(e) => json!({"role": "planner", "attempt": attempt, "valid": false, "error": e}),
            };
            l.record(env, vec![NewEvent::new(EventType::LlmResultReceived, payload)]).await?;
        }
        match outcome {
            Ok(graph) => {
                return Ok(Planned { graph, replans: attempt - 1, model_calls: attempt as usize, prompt_tokens })
            }
            Err(problem) => {
                tracing::warn!(attempt, max_replans, %problem, "the plan did not validate; replanning");
                messages.push(ChatMessage::assistant(reply.text));
                messages.push(ChatMessage::user(
                    env.prompts.render(PromptId::PLANNER_REPLAN, &[("error", &problem)]).map_err(AgentError::from)?,
                ));
                problems.push(problem);
            }
        }
    }
    Err(PlannerError::Invalid {
        attempts: max_replans + 1,
        max_replans,
        model_calls: (max_replans + 1) as usize,
        prompt_tokens,
        problems,
    })
}
