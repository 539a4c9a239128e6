//! What a failing test was seen doing (a `CallTrace`): which call computed the
//! value the assertion got wrong, and a definition's calls in words for the coder.

use super::state::RelatedDefinition;
use crate::sandbox::TracedCall;

/// The values a failing assertion got, as pytest prints them: the `where V =
/// f(…)` lines first (what a call in the test returned), then the left side
/// of `assert L == R` (by convention what the code gave).
pub fn wrong_values(excerpt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: &str| {
        let v = v.trim().to_string();
        if !v.is_empty() && !out.contains(&v) {
            out.push(v);
        }
    };
    let messages: Vec<&str> = excerpt.lines().filter_map(|l| l.trim_start().strip_prefix('E')).collect();
    for m in &messages {
        let m = m.trim_start().trim_start_matches('+').trim_start();
        if let Some((value, _)) = m.strip_prefix("where ").and_then(|rest| rest.split_once(" = ")) {
            push(value);
        }
    }
    for m in &messages {
        let m = m.trim();
        let m = m.strip_prefix("AssertionError: ").unwrap_or(m);
        if let Some((left, _)) = m.strip_prefix("assert ").and_then(|rest| rest.split_once(" == ")) {
            push(left);
        }
    }
    out
}

/// The call that computed the wrong value: of the calls that returned one of
/// the assertion's wrong values, the most deeply nested (the others only
/// passed it on), the first of those when several tie. `None` when only a
/// call the test made itself returned it (the assertion names that one
/// already, and the value may have been built from parts computed below), or
/// when its function was called more than once: a loop that overwrites a
/// total instead of adding to it returns the last of several right values,
/// and the function that computed that one is not where the bug is.
pub fn value_origin<'a>(calls: &'a [TracedCall], excerpt: &str) -> Option<&'a TracedCall> {
    let wrong = wrong_values(excerpt);
    wrong.iter().find_map(|value| {
        calls
            .iter()
            .filter(|c| c.result.as_deref() == Some(value.as_str()))
            .fold(None::<&TracedCall>, |best, c| match best {
                Some(b) if b.depth >= c.depth => Some(b),
                _ => Some(c),
            })
            .filter(|c| c.depth > 0)
            .filter(|c| calls.iter().filter(|o| o.path == c.path && o.name == c.name).count() == 1)
    })
}

/// Whether `call` is a call of `def`: same file and name, and its code starts
/// in the definition (or just above it, at a decorator).
pub fn is_call_of(call: &TracedCall, def: &RelatedDefinition) -> bool {
    const DECORATOR_LINES: usize = 3;
    let name = call.name.rsplit('.').next().unwrap_or(&call.name);
    call.path == def.path
        && name == def.name
        && (def.start_line.saturating_sub(DECORATOR_LINES)..=def.end_line).contains(&call.line)
}

/// `def`'s calls as the coder reads them (`f(a=1) -> 2`), distinct ones in
/// the order seen, at most `max`.
pub fn calls_of(calls: &[TracedCall], def: &RelatedDefinition, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in calls.iter().filter(|c| is_call_of(c, def)) {
        let name = c.name.rsplit('.').next().unwrap_or(&c.name);
        let outcome = match (&c.raised, &c.result) {
            (Some(e), _) => format!("raised {e}"),
            (None, Some(r)) => r.clone(),
            (None, None) => "did not return".to_string(),
        };
        let line = format!("{name}({}) -> {outcome}", c.args);
        if !out.contains(&line) {
            out.push(line);
        }
        if out.len() >= max {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, line: usize, depth: usize, result: &str) -> TracedCall {
        TracedCall {
            path: "cart/pricing.py".into(),
            name: name.into(),
            line,
            depth,
            args: "a=1".into(),
            result: Some(result.into()),
            raised: None,
        }
    }

    const EXCERPT: &str = ">       assert cart.total(discount_percent=10) == 630\nE       assert 0 == 630\nE        +  where 0 = total(discount_percent=10)\nE        +    where total = <cart.Cart object at 0x7f>.total\n";

    #[test]
    fn the_wrong_value_comes_from_the_deepest_call_that_returned_it() {
        assert_eq!(wrong_values(EXCERPT), vec!["0", "total"]);
        assert_eq!(wrong_values("E       AssertionError: assert 3 == 2.5"), vec!["3"]);
        let calls = vec![
            call("Cart.total", 20, 0, "0"),
            call("line_total", 4, 1, "300"),
            call("line_total", 4, 1, "0"),
            call("apply_discount", 9, 1, "0"),
        ];
        let once: Vec<TracedCall> = calls[..1].iter().chain(&calls[3..]).cloned().collect();
        let origin = value_origin(&once, EXCERPT);
        assert_eq!(origin.map(|o| o.name.as_str()), Some("apply_discount"), "nested below the test's own call");
        let tie = vec![calls[0].clone(), call("a", 1, 1, "0"), call("b", 2, 1, "0")];
        assert_eq!(value_origin(&tie, EXCERPT).map(|o| o.name.as_str()), Some("a"), "the first of the deepest");
        assert!(value_origin(&calls, EXCERPT).is_none(), "`line_total` ran twice: its 0 may be one of several");
        assert!(value_origin(&calls[1..2], EXCERPT).is_none(), "no call returned 0");
        assert!(value_origin(&calls[..2], EXCERPT).is_none(), "only the test's own call returned it");
    }

    #[test]
    fn a_definitions_calls_read_as_calls_once_each() {
        let def = RelatedDefinition {
            path: "cart/pricing.py".into(),
            name: "apply_discount".into(),
            start_line: 9,
            end_line: 13,
            raises: false,
        };
        let mut raised = call("apply_discount", 9, 1, "");
        raised.result = None;
        raised.raised = Some("ValueError".into());
        let calls = vec![call("apply_discount", 9, 1, "0"), call("apply_discount", 9, 1, "0"), raised];
        assert_eq!(
            calls_of(&calls, &def, 5),
            vec!["apply_discount(a=1) -> 0", "apply_discount(a=1) -> raised ValueError"]
        );
        assert_eq!(calls_of(&calls, &def, 1).len(), 1);
    }
}
