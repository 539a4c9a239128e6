//! The router: a pure function of (request, task state, limits) that says what
//! the runtime does next. It never acts; the runtime carries out its [`Step`].

use super::request::AgentRequest;
use super::state::{AttemptResult, TaskProgress};
use crate::contracts::StrategyChoice;

/// The limits the router decides within (from `[runtime]` and `[critic]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouterLimits {
    /// Coder attempts after the first one.
    pub max_retries: u32,
    /// Ask the critic about a passing patch.
    pub critic: bool,
    /// Hand back the best failing attempt when none passes.
    pub best_attempt: bool,
    /// Times the user may be asked for a strategy when the attempts run out (0: never).
    pub strategy_rounds: u32,
    /// Attempts each strategy other than stopping buys.
    pub attempts_per_strategy: u32,
}

/// The next thing the runtime does: a closed set, so every step has its handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Run the project's tests before any change.
    Baseline,
    /// Find the file and lines to change.
    Locate,
    /// Ask the coder for the next attempt.
    Attempt,
    /// Have the critic judge the passing attempt.
    Critic,
    /// Remember the error and the fix of the passing attempt.
    Remember,
    /// Ask the user what to try next.
    AskStrategy,
    /// End the task with a result.
    Complete(Completion),
    /// End the task without one (the reason says why).
    Fail,
}

/// How a task that ends with a result ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The tests already pass.
    NothingToFix,
    /// Attempt `attempt` passed the checks.
    Patched { attempt: usize },
    /// No attempt passed; `attempt` is handed back as the best one, as asked.
    BestAttempt { attempt: usize },
}

/// A [`Step`] and why, in words a user can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub step: Step,
    pub reason: String,
}

fn decide(step: Step, reason: impl Into<String>) -> Decision {
    Decision { step, reason: reason.into() }
}

/// What to do next for `request` in state `p`.
pub fn next_step(request: &AgentRequest, p: &TaskProgress, limits: &RouterLimits) -> Decision {
    if let Some(reason) = &p.stop_reason {
        return decide(Step::Fail, reason.clone());
    }
    let Some(baseline) = &p.baseline else {
        return decide(Step::Baseline, "see which tests fail before any change");
    };
    if p.target.is_none() {
        if let AgentRequest::Fix { target: None, .. } = request {
            if !baseline.available {
                return decide(
                    Step::Fail,
                    format!(
                        "there is nothing to start from: {}; name the file and line to fix (e.g. `tinycoder fix src/app.py:12 --message \"…\"`)",
                        baseline.why
                    ),
                );
            }
            if baseline.passed {
                return decide(
                    Step::Complete(Completion::NothingToFix),
                    format!("nothing to fix: {}", baseline.headline()),
                );
            }
        }
        return decide(Step::Locate, "find the file to change");
    }
    let target = p.target.as_ref().map(|t| t.path.clone()).unwrap_or_default();
    if let Some(ok) = p.success() {
        if limits.critic && p.critic.is_none() {
            return decide(Step::Critic, "have the critic judge the passing patch");
        }
        if !p.memory_done {
            return decide(Step::Remember, "remember the error and its fix");
        }
        return decide(Step::Complete(Completion::Patched { attempt: ok.number }), "the patch passed the checks");
    }
    let made = p.attempts.len();
    let stopped = p.strategies.last() == Some(&StrategyChoice::Stop);
    let bought = p.strategies.iter().filter(|c| **c != StrategyChoice::Stop).count();
    let allowed = limits.max_retries as usize + 1 + bought * limits.attempts_per_strategy as usize;
    if made >= allowed {
        let last = p.attempts.last().map(describe).unwrap_or_default();
        if stopped {
            return decide(Step::Fail, format!("stopped after {made} attempt(s), as you chose; last: {last}"));
        }
        if limits.best_attempt {
            if let Some(best) = p.best_attempt() {
                return decide(
                    Step::Complete(Completion::BestAttempt { attempt: best.number }),
                    format!("no attempt passed in {made}; handing back the best one as asked ({last})"),
                );
            }
        }
        if p.strategies.len() < limits.strategy_rounds as usize {
            return decide(
                Step::AskStrategy,
                format!("{made} attempt(s) failed: ask the user what to try next (last: {last})"),
            );
        }
        return decide(
            Step::Fail,
            format!(
                "no attempt passed the checks in {made} tries (runtime.max_retries = {}); last: {last}",
                limits.max_retries
            ),
        );
    }
    let reason = match p.attempts.last() {
        None => format!("write the edit of `{target}`"),
        Some(a) => format!("try again with what went wrong: {}", describe(a)),
    };
    decide(Step::Attempt, reason)
}

/// One line on how an attempt ended.
pub fn describe(a: &super::state::AttemptRecord) -> String {
    match &a.result {
        AttemptResult::BadEdit { error } => format!("attempt {}: {error}", a.number),
        AttemptResult::ModelError { error } => format!("attempt {}: the model call failed: {error}", a.number),
        AttemptResult::Tested { why, success: true, .. } => format!("attempt {}: passed ({why})", a.number),
        AttemptResult::Tested { why, tests, .. } => format!("attempt {}: {why} ({})", a.number, tests.headline()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::state::{AttemptRecord, Target, TestSummary};
    use crate::edits::EditFormat;

    const LIMITS: RouterLimits = RouterLimits {
        max_retries: 1,
        critic: true,
        best_attempt: false,
        strategy_rounds: 0,
        attempts_per_strategy: 1,
    };

    fn fix() -> AgentRequest {
        AgentRequest::Fix { target: None, message: None, from_tests: false, origin: None }
    }

    fn failing() -> TestSummary {
        TestSummary { available: true, passed: false, failing: vec!["t".into()], ..Default::default() }
    }

    fn target() -> Target {
        Target {
            path: "calc.py".into(),
            start_line: 1,
            end_line: 2,
            test: Some("t".into()),
            message: "boom".into(),
            why: "called by the test".into(),
            before: "x".into(),
            protect_tests: true,
            ..Default::default()
        }
    }

    fn attempt(n: usize, result: AttemptResult) -> AttemptRecord {
        AttemptRecord {
            number: n,
            format: EditFormat::WholeSymbol,
            reply: String::new(),
            changes: vec![("calc.py".into(), "y".into())],
            changed_symbols: vec![],
            result,
            prompt_tokens: 0,
            duration_ms: 0,
            changes_nothing: false,
            check: None,
        }
    }

    fn kind(p: &TaskProgress, limits: &RouterLimits) -> Step {
        next_step(&fix(), p, limits).step
    }

    #[test]
    fn a_fix_runs_tests_locates_codes_judges_remembers_and_completes() {
        let mut p = TaskProgress::default();
        assert_eq!(kind(&p, &LIMITS), Step::Baseline);
        p.baseline = Some(TestSummary { available: true, passed: true, ..Default::default() });
        assert_eq!(kind(&p, &LIMITS), Step::Complete(Completion::NothingToFix), "green tests: nothing to fix");
        p.baseline = Some(TestSummary::unavailable("no test command found"));
        assert_eq!(kind(&p, &LIMITS), Step::Fail);
        p.baseline = Some(failing());
        assert_eq!(kind(&p, &LIMITS), Step::Locate);
        p.target = Some(target());
        assert_eq!(kind(&p, &LIMITS), Step::Attempt);
        p.attempts.push(attempt(1, AttemptResult::Tested { tests: failing(), success: true, why: "ok".into() }));
        assert_eq!(kind(&p, &LIMITS), Step::Critic);
        p.critic = Some(crate::agent::state::CriticOutcome::Skipped);
        assert_eq!(kind(&p, &LIMITS), Step::Remember);
        p.memory_done = true;
        assert_eq!(kind(&p, &LIMITS), Step::Complete(Completion::Patched { attempt: 1 }));
        assert_eq!(
            kind(&p, &RouterLimits { critic: false, ..LIMITS }),
            Step::Complete(Completion::Patched { attempt: 1 })
        );
    }

    #[test]
    fn retries_stop_at_the_limit_and_the_best_attempt_only_when_asked() {
        let mut p = TaskProgress { baseline: Some(failing()), target: Some(target()), ..Default::default() };
        p.attempts.push(attempt(1, AttemptResult::BadEdit { error: "no code".into() }));
        let d = next_step(&fix(), &p, &LIMITS);
        assert_eq!(d.step, Step::Attempt);
        assert!(d.reason.contains("no code"), "{}", d.reason);
        p.attempts.push(attempt(
            2,
            AttemptResult::Tested { tests: failing(), success: false, why: "`t` still fails".into() },
        ));
        let d = next_step(&fix(), &p, &LIMITS);
        assert_eq!(d.step, Step::Fail);
        assert!(d.reason.contains("2 tries") && d.reason.contains("still fails"), "{}", d.reason);
        let d = next_step(&fix(), &p, &RouterLimits { best_attempt: true, ..LIMITS });
        assert_eq!(d.step, Step::Complete(Completion::BestAttempt { attempt: 2 }));
        p.stop_reason = Some("cancelled".into());
        assert_eq!(kind(&p, &RouterLimits { best_attempt: true, ..LIMITS }), Step::Fail);
    }

    #[test]
    fn spent_attempts_ask_for_a_strategy_which_buys_attempts_or_stops() {
        let limits = RouterLimits { strategy_rounds: 2, attempts_per_strategy: 1, ..LIMITS };
        let failed = |n| attempt(n, AttemptResult::BadEdit { error: "no code".into() });
        let mut p = TaskProgress { baseline: Some(failing()), target: Some(target()), ..Default::default() };
        p.attempts.extend([failed(1), failed(2)]);
        assert_eq!(kind(&p, &limits), Step::AskStrategy);
        p.strategies.push(StrategyChoice::Hint { text: "use round".into() });
        assert_eq!(kind(&p, &limits), Step::Attempt, "a hint buys one more attempt");
        p.attempts.push(failed(3));
        assert_eq!(kind(&p, &limits), Step::AskStrategy, "asked again, up to strategy_rounds");
        p.strategies.push(StrategyChoice::Stop);
        let d = next_step(&fix(), &p, &limits);
        assert_eq!(d.step, Step::Fail);
        assert!(d.reason.contains("as you chose"), "{}", d.reason);
        // Rounds spent: no more questions, the usual end.
        p.strategies = vec![StrategyChoice::MoreContext, StrategyChoice::OtherApproach];
        p.attempts.push(failed(4));
        let d = next_step(&fix(), &p, &limits);
        assert_eq!(d.step, Step::Fail);
        assert!(d.reason.contains("4 tries"), "{}", d.reason);
    }
}
