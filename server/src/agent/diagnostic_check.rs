//! Proving a fix of another tool's diagnostic with that tool: its checker is
//! run before any change (does it report the diagnostic?) and after each
//! patch (is it gone, and is no error new?).

use super::env::AgentEnv;
use super::request::{AgentRequest, DiagnosticOrigin};
use crate::sandbox::{checker_for, run_checker, CheckedDiagnostic, CheckerChoice};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// What the task knows about its diagnostic's checker; saved in the checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticCheck {
    /// The checker (`[checkers.NAME]`) that re-checks each patch; `None`: not re-checked.
    pub checker: Option<String>,
    /// The diagnostic as the checker reported it before any change.
    pub target: Option<CheckedDiagnostic>,
    /// Every error it reported before any change.
    pub baseline: Vec<CheckedDiagnostic>,
    /// Why the fix is not re-checked, or checked only for new errors.
    pub note: Option<String>,
}

/// How one patch fared with the checker.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckVerdict {
    pub ok: bool,
    /// One line for people and the coder.
    pub why: String,
    /// The errors the checker still reports (for the coder's feedback).
    pub remaining: Vec<String>,
    pub output_tail: String,
    pub command: String,
    pub duration_ms: u64,
}

/// The origin, file and line of a fix of another tool's diagnostic.
fn origin_of(request: &AgentRequest) -> Option<(&DiagnosticOrigin, &str, usize, &str)> {
    match request {
        AgentRequest::Fix { target: Some(loc), origin: Some(o), from_tests: false, message } => {
            Some((o, loc.path.as_str(), loc.focus(), message.as_deref().unwrap_or("")))
        }
        _ => None,
    }
}

/// Runs the diagnostic's checker on the unchanged workspace and finds the diagnostic in its report.
pub async fn reproduce(env: &AgentEnv, request: &AgentRequest, cancel: &CancellationToken) -> Option<DiagnosticCheck> {
    let (origin, path, line, message) = origin_of(request)?;
    let checker = match checker_for(&env.config, &origin.source, path, &env.paths.root) {
        CheckerChoice::Use(c) => c,
        other => return Some(DiagnosticCheck { note: other.not_rechecked(), ..Default::default() }),
    };
    let report = match run_checker(&env.config, &env.paths, &env.sources.overlays(), &checker, cancel).await {
        Ok(r) => r,
        Err(e) => return Some(DiagnosticCheck { note: Some(format!("not re-checked: {e}")), ..Default::default() }),
    };
    let baseline: Vec<CheckedDiagnostic> = report.errors().cloned().collect();
    let target = find_target(&report.diagnostics, origin, path, line, message);
    let note = target.is_none().then(|| {
        format!(
            "`{}` does not report this diagnostic now (the editor's may be stale); checked only for new errors",
            checker.display()
        )
    });
    Some(DiagnosticCheck { checker: Some(checker.name), target, baseline, note })
}

/// The checker's diagnostic that is the editor's: same file, the same code when
/// one is given, the same message (its first line) when one matches, nearest the line.
fn find_target(
    found: &[CheckedDiagnostic],
    origin: &DiagnosticOrigin,
    path: &str,
    line: usize,
    message: &str,
) -> Option<CheckedDiagnostic> {
    let first = message.lines().next().unwrap_or("").trim();
    let same_code = |d: &&CheckedDiagnostic| origin.code.is_empty() || d.code == origin.code;
    let same_message = |d: &&CheckedDiagnostic| {
        !first.is_empty() && (d.message == first || d.message.contains(first) || first.contains(&d.message))
    };
    let nearest = |it: Vec<&CheckedDiagnostic>| it.into_iter().min_by_key(|d| d.line.abs_diff(line)).cloned();
    let in_file: Vec<&CheckedDiagnostic> = found.iter().filter(|d| d.path == path).collect();
    nearest(in_file.iter().copied().filter(same_code).filter(same_message).collect())
        .or_else(|| (!origin.code.is_empty()).then(|| nearest(in_file.iter().copied().filter(same_code).collect()))?)
        .or_else(|| in_file.iter().find(|d| d.line == line).map(|d| (*d).clone()))
}

fn key(d: &CheckedDiagnostic) -> (&str, &str, &str) {
    (&d.path, &d.code, &d.message)
}

/// Runs the checker with `changes` over the workspace; `None` when the task has no checker.
pub async fn verify(
    env: &AgentEnv,
    check: &DiagnosticCheck,
    changes: &[(String, String)],
    cancel: &CancellationToken,
) -> Option<CheckVerdict> {
    let name = check.checker.as_ref()?;
    let config = env.config.checkers.get(name)?.clone();
    let checker = crate::sandbox::Checker { name: name.clone(), config };
    let overlays = super::steps::overlays_with(env, changes);
    let report = match run_checker(&env.config, &env.paths, &overlays, &checker, cancel).await {
        Ok(r) => r,
        Err(e) => {
            return Some(CheckVerdict {
                ok: false,
                why: format!("the check could not run: {e}"),
                remaining: vec![],
                output_tail: String::new(),
                command: checker.display(),
                duration_ms: 0,
            })
        }
    };
    let errors: Vec<&CheckedDiagnostic> = report.errors().collect();
    let count = |list: &[&CheckedDiagnostic], d: &CheckedDiagnostic| list.iter().filter(|e| key(e) == key(d)).count();
    let before: Vec<&CheckedDiagnostic> = check.baseline.iter().collect();
    // An error is new when the patch makes more of it than there were (lines may move).
    let mut new: Vec<&CheckedDiagnostic> = Vec::new();
    for e in &errors {
        if count(&errors, e) > count(&before, e) && !new.iter().any(|n| key(n) == key(e)) {
            new.push(e);
        }
    }
    let still = check.target.as_ref().filter(|t| {
        let all: Vec<&CheckedDiagnostic> = report.diagnostics.iter().collect();
        count(&all, t) >= count(&before, t).max(1)
    });
    let command = format!("`{}`", checker.display());
    let (ok, why) = match (still, new.first()) {
        (Some(t), _) => (false, format!("{command} still reports {}", t.headline())),
        (None, Some(n)) => {
            (false, format!("the edit adds {} error(s) {command} reports, first {}", new.len(), n.headline()))
        }
        (None, None) => match &check.target {
            Some(t) => (true, format!("{command} no longer reports {} and reports no new error", label(t))),
            None => (true, check.note.clone().unwrap_or_else(|| format!("{command} reports no new error"))),
        },
    };
    Some(CheckVerdict {
        ok,
        why,
        remaining: errors.iter().map(|e| e.headline()).collect(),
        output_tail: report.output_tail,
        command: checker.display(),
        duration_ms: report.duration.as_millis() as u64,
    })
}

fn label(d: &CheckedDiagnostic) -> String {
    if d.code.is_empty() {
        format!("\"{}\"", d.message)
    } else {
        d.code.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(path: &str, line: usize, code: &str, message: &str) -> CheckedDiagnostic {
        CheckedDiagnostic {
            path: path.into(),
            line,
            column: 1,
            severity: "error".into(),
            code: code.into(),
            message: message.into(),
        }
    }

    #[test]
    fn the_editors_diagnostic_is_found_by_code_message_and_nearest_line() {
        let found = vec![
            diag("src/lib.rs", 3, "E0425", "cannot find value `a` in this scope"),
            diag("src/lib.rs", 9, "E0425", "cannot find value `totl` in this scope"),
            diag("src/other.rs", 6, "E0425", "cannot find value `totl` in this scope"),
        ];
        let o = DiagnosticOrigin { source: "rustc".into(), code: "E0425".into() };
        // The editor's line is stale by three lines; the message decides.
        let t = find_target(&found, &o, "src/lib.rs", 6, "cannot find value `totl` in this scope\nhelp: …").unwrap();
        assert_eq!(t.line, 9);
        // No message match: the same code nearest the line.
        let t = find_target(&found, &o, "src/lib.rs", 4, "unresolved name").unwrap();
        assert_eq!(t.line, 3);
        let none = DiagnosticOrigin { source: "rustc".into(), code: "E0308".into() };
        assert!(find_target(&found, &none, "src/lib.rs", 20, "mismatched types").is_none());
    }
}
