//! The user's strategy after the coder's attempts all failed: the question
//! through the `HumanPort` (a step of the runtime) and what each answer
//! changes for the attempts that follow (`StrategyEffects`).

use super::env::AgentEnv;
use super::router::describe;
use super::runtime::Task;
use super::steps::StepEnd;
use super::AgentError;
use crate::config::{Config, PromptError, PromptId, PromptLibrary};
use crate::contracts::{EventType, StrategyChoice, StrategyKind, StrategyQuestion};
use crate::store::NewEvent;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Asks the user what to do next and records the answer (`permission_requested` /
/// `permission_resolved` with `question: "strategy"`).
pub async fn ask(env: &AgentEnv, task: &mut Task, cancel: &CancellationToken) -> Result<StepEnd, AgentError> {
    let p = &task.progress;
    let question = StrategyQuestion {
        task_id: task.id.clone(),
        file: p.target.as_ref().map(|t| t.path.clone()).unwrap_or_default(),
        attempts: p.attempts.len(),
        last_failure: p.attempts.last().map(describe).unwrap_or_default(),
        best_diff: p.best_attempt().and_then(|a| p.patch_of(a)).map(|c| c.diff()),
    };
    let choices: Vec<&str> = StrategyKind::ALL.iter().map(|k| k.as_str()).collect();
    task.record(
        env,
        vec![
            NewEvent::new(EventType::StatusChanged, json!({"status": "awaiting_permission"})),
            NewEvent::new(
                EventType::PermissionRequested,
                json!({"question": "strategy", "message": question.message(), "choices": choices}),
            ),
        ],
    )
    .await?;
    let choice = tokio::select! {
        c = env.human.choose_strategy(&question) => c,
        _ = cancel.cancelled() => return Ok(StepEnd::Cancelled),
    };
    task.record(
        env,
        vec![NewEvent::new(
            EventType::PermissionResolved,
            json!({"question": "strategy", "choice": choice, "attempts": question.attempts}),
        )],
    )
    .await?;
    task.progress.strategies.push(choice);
    Ok(StepEnd::Done)
}

/// What the user's choices so far change for the next attempt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrategyEffects {
    /// "More context" was chosen: the context budgets grow by `runtime.more_context_factor`.
    pub more_context: bool,
    /// Every hint given, oldest first.
    pub hints: Vec<String>,
    /// The latest choice was "another approach": the failed replies are not shown again.
    pub other_approach: bool,
}

impl StrategyEffects {
    /// The effects of `choices` (a task's `TaskProgress::strategies`).
    pub fn of(choices: &[StrategyChoice]) -> Self {
        Self {
            more_context: choices.contains(&StrategyChoice::MoreContext),
            hints: choices
                .iter()
                .filter_map(|c| match c {
                    StrategyChoice::Hint { text } => Some(text.clone()),
                    _ => None,
                })
                .collect(),
            other_approach: choices.last() == Some(&StrategyChoice::OtherApproach),
        }
    }

    /// `config` with the context budgets widened when more context was chosen.
    pub fn widen(&self, config: &Config) -> Config {
        let mut c = config.clone();
        if self.more_context {
            let f = c.runtime.more_context_factor;
            let grow = |n: u32| ((n as f32) * f).round() as u32;
            c.budget.large_file_lines = grow(c.budget.large_file_lines);
            c.budget.related_symbols = grow(c.budget.related_symbols);
            c.budget.related_hops += 1;
            c.runtime.failure_output_lines = grow(c.runtime.failure_output_lines);
        }
        c
    }

    /// The text added to the coder's request: the hints, and "set the failed approaches aside".
    pub fn instruction(&self, prompts: &PromptLibrary, failed: &[String]) -> Result<String, PromptError> {
        let mut parts = Vec::new();
        if !self.hints.is_empty() {
            let hints = self.hints.iter().map(|h| format!("- {h}")).collect::<Vec<_>>().join("\n");
            parts.push(prompts.render(PromptId::CODER_HINT, &[("hints", &hints)])?);
        }
        if self.other_approach {
            let failed = failed.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n");
            parts.push(prompts.render(PromptId::CODER_OTHER_APPROACH, &[("failed", &failed)])?);
        }
        Ok(parts.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_follow_the_choices() {
        let e = StrategyEffects::of(&[
            StrategyChoice::MoreContext,
            StrategyChoice::Hint { text: "round to cents".into() },
            StrategyChoice::OtherApproach,
        ]);
        assert!(e.more_context && e.other_approach);
        assert_eq!(e.hints, vec!["round to cents".to_string()]);
        let later = StrategyEffects::of(&[StrategyChoice::OtherApproach, StrategyChoice::Hint { text: "x".into() }]);
        assert!(!later.other_approach, "only the latest choice sets the old replies aside");
        let config =
            crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).expect("defaults").config;
        let wide = e.widen(&config);
        assert!(wide.budget.large_file_lines > config.budget.large_file_lines);
        assert!(wide.budget.related_symbols > config.budget.related_symbols);
        assert_eq!(StrategyEffects::default().widen(&config), config);
    }
}
