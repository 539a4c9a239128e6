//! Unit tests of the fix-all bookkeeping (`FixAllState`, `FixAllReport`), no model.

use super::*;
use crate::agent::DiskSources;

fn diag(line: usize, code: &str, message: &str) -> CheckedDiagnostic {
    CheckedDiagnostic {
        path: "app.py".into(),
        line,
        column: 1,
        severity: "error".into(),
        code: code.into(),
        message: message.into(),
    }
}

/// A task report as a fix task ends it: patched from `before` to `after`, or failed.
fn report(before: &str, after: Option<&str>) -> TaskReport {
    let mut r = FixAllReport {
        path: "app.py".into(),
        outcomes: vec![],
        remaining: vec![],
        not_run: vec![],
        patch: None,
        cancelled: false,
        duration_ms: 0,
    }
    .task_report("t");
    match after {
        Some(after) => {
            r.status = ReportStatus::Patched;
            r.patch = Some(Patch {
                changes: vec![FileChange { path: "app.py".into(), before: before.into(), after: after.into() }],
            });
            r.diagnostic_check = Some("`ruff` no longer reports it".into());
        }
        None => {
            r.status = ReportStatus::Failed;
            r.failure_reason = Some("no attempt passed".into());
        }
    }
    r
}

#[test]
fn fixes_chain_into_one_patch_and_a_failed_diagnostic_is_not_taken_again() {
    let dir = tempfile::tempdir().unwrap();
    let v0 = "import os\nimport sys\nprint(undefined_thing)\n";
    std::fs::write(dir.path().join("app.py"), v0).unwrap();
    let base: Arc<dyn SourceView> = Arc::new(DiskSources::new(dir.path()));
    let mut s = FixAllState::new("app.py", 10);
    let os = diag(1, "F401", "`os` imported but unused");
    let sys = diag(2, "F401", "`sys` imported but unused");
    let name = diag(3, "F821", "Undefined name `undefined_thing`");
    let other_file = CheckedDiagnostic { path: "lib.py".into(), ..diag(1, "F401", "x") };
    let warning = CheckedDiagnostic { severity: "warning".into(), ..diag(1, "W1", "w") };

    let first = [os.clone(), sys.clone(), name.clone(), other_file, warning];
    assert_eq!(s.untried("ruff", &first, &*base), vec![&os, &sys, &name], "errors of this file only");
    s.start("ruff", &os, &*base);
    let v1 = "import sys\nprint(undefined_thing)\n";
    assert_eq!(s.finish("ruff", &os, &report(v0, Some(v1)), &*base).outcome, OutcomeKind::Fixed);
    // The next fix starts from the first one's text.
    assert_eq!(s.sources(base.clone()).read("app.py").unwrap(), v1);

    // Fresh positions: the checker runs again on the new text.
    let sys = diag(1, "F401", "`sys` imported but unused");
    let name = diag(2, "F821", "Undefined name `undefined_thing`");
    let second = [sys.clone(), name.clone()];
    assert_eq!(s.untried("ruff", &second, &*base), vec![&sys, &name]);
    s.start("ruff", &sys, &*base);
    assert_eq!(s.finish("ruff", &sys, &report(v1, None), &*base).outcome, OutcomeKind::Failed);
    // The failed one is not picked again, even at another line after later fixes.
    assert_eq!(s.untried("ruff", &second, &*base), vec![&name]);
    s.start("ruff", &name, &*base);
    let v2 = "import sys\nprint('x')\n";
    s.finish("ruff", &name, &report(v1, Some(v2)), &*base);
    assert!(s.untried("ruff", &[diag(1, "F401", "`sys` imported but unused")], &*base).is_empty());

    // One patch from the original text to the last one.
    let patch = s.patch().unwrap();
    assert_eq!(patch.changes, vec![FileChange { path: "app.py".into(), before: v0.into(), after: v2.into() }]);
    let kinds: Vec<OutcomeKind> = s.outcomes().iter().map(|o| o.outcome).collect();
    assert_eq!(kinds, [OutcomeKind::Fixed, OutcomeKind::Failed, OutcomeKind::Fixed]);
    assert!(s.outcomes()[1].line().starts_with("failed: app.py:1: F401 `sys` imported but unused (no attempt"));
}

#[test]
fn the_limit_skips_the_rest_and_the_report_says_what_happened_to_each() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), "import os\nimport sys\n").unwrap();
    let base: Arc<dyn SourceView> = Arc::new(DiskSources::new(dir.path()));
    let mut s = FixAllState::new("app.py", 1);
    let os = diag(1, "F401", "`os` imported but unused");
    let sys = diag(2, "F401", "`sys` imported but unused");
    assert!(s.may_start());
    s.start("ruff", &os, &*base);
    s.finish("ruff", &os, &report("import os\nimport sys\n", Some("import sys\n")), &*base);
    assert!(!s.may_start(), "one fix at most");
    s.skip("ruff", &sys, "the limit was reached", &*base);
    assert!(s.untried("ruff", std::slice::from_ref(&sys), &*base).is_empty(), "a skipped one is listed once");
    let r = FixAllReport {
        path: "app.py".into(),
        outcomes: s.outcomes().to_vec(),
        remaining: vec![sys.headline()],
        not_run: vec![],
        patch: s.patch(),
        cancelled: false,
        duration_ms: 0,
    };
    assert_eq!(r.summary(), "app.py: 1 fixed, 0 failed, 1 skipped; 1 error(s) remain");
    let t = r.task_report("fix-all");
    assert_eq!(t.status, ReportStatus::Patched);
    assert_eq!(t.files_changed, ["app.py"]);
    assert!(t.diff.contains("-import os"), "{}", t.diff);
    assert!(t.diagnostic_check.unwrap().contains("skipped: app.py:2: F401"));

    let nothing = FixAllReport { outcomes: vec![], remaining: vec![], patch: None, ..r.clone() };
    assert_eq!(nothing.task_report("x").status, ReportStatus::NothingToFix);
    let failed = FixAllReport { patch: None, ..r };
    assert_eq!(failed.task_report("x").status, ReportStatus::Failed);
}
