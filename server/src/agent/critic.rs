//! The critic's judgement of a passing patch, as schema-constrained JSON.

use super::env::AgentEnv;
use super::request::AgentRequest;
use super::state::TaskProgress;
use crate::config::{ModelRole, PromptId};
use crate::contracts::CriticScore;
use crate::llm::{structured, ChatMessage, ChatRequest, LlmError};
use tokio_util::sync::CancellationToken;

/// The critic's prompt for the passing attempt of `p`.
pub fn critic_messages(
    env: &AgentEnv,
    request: &AgentRequest,
    p: &TaskProgress,
) -> Result<Vec<ChatMessage>, crate::config::PromptError> {
    let ok = p.success();
    let diff = ok.and_then(|a| p.patch_of(a)).map(|patch| patch.diff()).unwrap_or_default();
    let diff: String = diff.lines().take(env.config.runtime.critic_diff_lines as usize).collect::<Vec<_>>().join("\n");
    let tests = match ok.map(|a| &a.result) {
        Some(super::state::AttemptResult::Tested { tests, why, .. }) => format!("{} — {why}", tests.headline()),
        _ => "not run".to_string(),
    };
    let questions = if p.questions.is_empty() {
        String::new()
    } else {
        let listed: Vec<String> = p.questions.iter().map(|q| format!("- {q}")).collect();
        env.prompts.render(PromptId::CRITIC_QUESTIONS, &[("questions", &listed.join("\n"))])?
    };
    let user = env.prompts.render(
        PromptId::CRITIC_REQUEST,
        &[("request", &request.summary()), ("tests", &tests), ("diff", &diff), ("questions", &questions)],
    )?;
    Ok(vec![ChatMessage::system(env.prompts.render(PromptId::CRITIC_SYSTEM, &[])?), ChatMessage::user(user)])
}

/// The questions a passing attempt's patch raises (`runtime.questioned_operators`), one
/// line each, prefixed with the file.
pub fn patch_questions(env: &AgentEnv, p: &TaskProgress) -> Vec<String> {
    let Some(patch) = p.success().and_then(|a| p.patch_of(a)) else {
        return Vec::new();
    };
    let table = &env.config.runtime.questioned_operators;
    patch
        .changes
        .iter()
        .flat_map(|c| {
            crate::edits::questioned_operators(&c.path, &c.before, &c.after, table)
                .into_iter()
                .map(move |q| format!("{}: {}", c.path, q.question()))
        })
        .collect()
}

/// Asks the critic; scores are clamped to 0..1.
pub async fn judge(
    env: &AgentEnv,
    messages: Vec<ChatMessage>,
    cancel: &CancellationToken,
) -> Result<CriticScore, LlmError> {
    let req = ChatRequest::new(ModelRole::Critic, messages);
    let mut score: CriticScore =
        structured(env.model.as_ref(), &env.prompts, req, cancel, env.config.runtime.structured_output_retries).await?;
    for v in [&mut score.correctness, &mut score.usefulness, &mut score.safety, &mut score.weight] {
        *v = if v.is_finite() { v.clamp(0.0, 1.0) } else { 0.0 };
    }
    Ok(score)
}
