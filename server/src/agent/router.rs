//! The router: a pure function of (request, task state, limits) that says what
//! the runtime does next. It never acts; the runtime applies its directive.

use super::request::AgentRequest;
use super::state::{AttemptResult, TaskProgress};
use crate::contracts::{DirectiveType, ExecutionDirective, StrategyChoice};
use serde_json::json;

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

fn directive(t: DirectiveType, payload: serde_json::Value, reason: impl Into<String>) -> ExecutionDirective {
    ExecutionDirective::new(t, payload, reason)
}

/// What to do next for `request` in state `p`.
pub fn next_directive(request: &AgentRequest, p: &TaskProgress, limits: &RouterLimits) -> ExecutionDirective {
    use DirectiveType::*;
    if let Some(reason) = &p.stop_reason {
        return directive(Fail, json!({}), reason.clone());
    }
    let Some(baseline) = &p.baseline else {
        return directive(
            Tool,
            json!({"tool": "run_tests", "purpose": "baseline"}),
            "see which tests fail before any change",
        );
    };
    if p.target.is_none() {
        if let AgentRequest::Fix { target: None, .. } = request {
            if !baseline.available {
                return directive(
                    Fail,
                    json!({}),
                    format!(
                        "there is nothing to start from: {}; name the file and line to fix (e.g. `tinycoder fix src/app.py:12 --message \"…\"`)",
                        baseline.why
                    ),
                );
            }
            if baseline.passed {
                return directive(
                    Complete,
                    json!({"nothing_to_fix": true}),
                    format!("nothing to fix: {}", baseline.headline()),
                );
            }
        }
        return directive(Tool, json!({"tool": "locate"}), "find the file to change");
    }
    let target = p.target.as_ref().map(|t| t.path.clone()).unwrap_or_default();
    if let Some(ok) = p.success() {
        if limits.critic && p.critic.is_none() {
            return directive(Critic, json!({"attempt": ok.number}), "have the critic judge the passing patch");
        }
        if !p.memory_done {
            return directive(StoreMemory, json!({"attempt": ok.number}), "remember the error and its fix");
        }
        return directive(Complete, json!({"attempt": ok.number}), "the patch passed the checks");
    }
    let made = p.attempts.len();
    let stopped = p.strategies.last() == Some(&StrategyChoice::Stop);
    let bought = p.strategies.iter().filter(|c| **c != StrategyChoice::Stop).count();
    let allowed = limits.max_retries as usize + 1 + bought * limits.attempts_per_strategy as usize;
    if made >= allowed {
        let last = p.attempts.last().map(describe).unwrap_or_default();
        if stopped {
            return directive(
                Fail,
                json!({"stopped_by_user": true}),
                format!("stopped after {made} attempt(s), as you chose; last: {last}"),
            );
        }
        if limits.best_attempt {
            if let Some(best) = p.best_attempt() {
                return directive(
                    Complete,
                    json!({"attempt": best.number, "best_attempt": true}),
                    format!("no attempt passed in {made}; handing back the best one as asked ({last})"),
                );
            }
        }
        if p.strategies.len() < limits.strategy_rounds as usize {
            return directive(
                RequestPermission,
                json!({"question": "strategy"}),
                format!("{made} attempt(s) failed: ask the user what to try next (last: {last})"),
            );
        }
        return directive(
            Fail,
            json!({}),
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
    directive(Coder, json!({"attempt": made + 1, "file": target}), reason)
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

    fn kind(p: &TaskProgress, limits: &RouterLimits) -> DirectiveType {
        next_directive(&fix(), p, limits).directive_type
    }

    #[test]
    fn a_fix_runs_tests_locates_codes_judges_remembers_and_completes() {
        let mut p = TaskProgress::default();
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Tool);
        p.baseline = Some(TestSummary { available: true, passed: true, ..Default::default() });
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Complete, "green tests: nothing to fix");
        p.baseline = Some(TestSummary::unavailable("no test command found"));
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Fail);
        p.baseline = Some(failing());
        let d = next_directive(&fix(), &p, &LIMITS);
        assert_eq!((d.directive_type, d.payload["tool"].as_str()), (DirectiveType::Tool, Some("locate")));
        p.target = Some(target());
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Coder);
        p.attempts.push(attempt(1, AttemptResult::Tested { tests: failing(), success: true, why: "ok".into() }));
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Critic);
        p.critic = Some(crate::agent::state::CriticOutcome::Skipped);
        assert_eq!(kind(&p, &LIMITS), DirectiveType::StoreMemory);
        p.memory_done = true;
        assert_eq!(kind(&p, &LIMITS), DirectiveType::Complete);
        assert_eq!(kind(&p, &RouterLimits { critic: false, ..LIMITS }), DirectiveType::Complete);
    }

    #[test]
    fn retries_stop_at_the_limit_and_the_best_attempt_only_when_asked() {
        let mut p = TaskProgress { baseline: Some(failing()), target: Some(target()), ..Default::default() };
        p.attempts.push(attempt(1, AttemptResult::BadEdit { error: "no code".into() }));
        let d = next_directive(&fix(), &p, &LIMITS);
        assert_eq!(d.directive_type, DirectiveType::Coder);
        assert_eq!(d.payload["attempt"], 2);
        assert!(d.reason.contains("no code"), "{}", d.reason);
        p.attempts.push(attempt(
            2,
            AttemptResult::Tested { tests: failing(), success: false, why: "`t` still fails".into() },
        ));
        let d = next_directive(&fix(), &p, &LIMITS);
        assert_eq!(d.directive_type, DirectiveType::Fail);
        assert!(d.reason.contains("2 tries") && d.reason.contains("still fails"), "{}", d.reason);
        let d = next_directive(&fix(), &p, &RouterLimits { best_attempt: true, ..LIMITS });
        assert_eq!((d.directive_type, d.payload["best_attempt"].as_bool()), (DirectiveType::Complete, Some(true)));
        p.stop_reason = Some("cancelled".into());
        assert_eq!(kind(&p, &RouterLimits { best_attempt: true, ..LIMITS }), DirectiveType::Fail);
    }

    #[test]
    fn spent_attempts_ask_for_a_strategy_which_buys_attempts_or_stops() {
        let limits = RouterLimits { strategy_rounds: 2, attempts_per_strategy: 1, ..LIMITS };
        let failed = |n| attempt(n, AttemptResult::BadEdit { error: "no code".into() });
        let mut p = TaskProgress { baseline: Some(failing()), target: Some(target()), ..Default::default() };
        p.attempts.extend([failed(1), failed(2)]);
        let d = next_directive(&fix(), &p, &limits);
        assert_eq!(
            (d.directive_type, d.payload["question"].as_str()),
            (DirectiveType::RequestPermission, Some("strategy"))
        );
        p.strategies.push(StrategyChoice::Hint { text: "use round".into() });
        assert_eq!(kind(&p, &limits), DirectiveType::Coder, "a hint buys one more attempt");
        p.attempts.push(failed(3));
        assert_eq!(kind(&p, &limits), DirectiveType::RequestPermission, "asked again, up to strategy_rounds");
        p.strategies.push(StrategyChoice::Stop);
        let d = next_directive(&fix(), &p, &limits);
        assert_eq!(d.directive_type, DirectiveType::Fail);
        assert!(d.reason.contains("as you chose"), "{}", d.reason);
        // Rounds spent: no more questions, the usual end.
        p.strategies = vec![StrategyChoice::MoreContext, StrategyChoice::OtherApproach];
        p.attempts.push(failed(4));
        let d = next_directive(&fix(), &p, &limits);
        assert_eq!(d.directive_type, DirectiveType::Fail);
        assert!(d.reason.contains("4 tries"), "{}", d.reason);
    }
}
