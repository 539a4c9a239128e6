//! `tinycoder bench fix --diag DIR…`: fixes the compile and lint errors of the
//! diagnostic corpus (tests/bench/diag) from what their checker reports, as
//! `tinycoder fix --check` does, and scores each task: fixed (the checker reports
//! no error on the patched copy and its tests pass), verified (the proposal was
//! proven by the checker in the sandbox before it was shown) and wrong (the
//! checker is silenced but the tests fail: the fix hid the error).

use super::bench::{task_dirs, verify_on_tree, FixBenchArgs, TaskWorkspace};
use crate::agent::{AgentRequest, DiagnosticOrigin, Job, JobContext, Location, ReportStatus, TaskOptions};
use crate::config::{Config, PromptLibrary};
use crate::llm::ModelClient;
use crate::sandbox::{checker_for, run_checker, CheckedDiagnostic, CheckerChoice};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// `task.toml` of a diagnostic task.
#[derive(Debug, Deserialize)]
struct DiagSpec {
    language: String,
    /// The `[checkers.NAME]` that reports the error.
    checker: String,
    description: String,
    diagnostic: ExpectedDiagnostic,
}

/// The error the checker reports as shipped.
#[derive(Debug, Deserialize)]
struct ExpectedDiagnostic {
    file: String,
    line: usize,
    code: String,
}

/// One task's outcome.
#[derive(Debug, Serialize)]
struct DiagResult {
    id: String,
    language: String,
    checker: String,
    code: String,
    /// The checker reported the expected error before the fix.
    reproduced: bool,
    status: Option<ReportStatus>,
    /// A patch was proposed.
    proposed: bool,
    /// The proposal says the checker no longer reports the error (proven in the sandbox).
    verified: bool,
    /// The checker reports no error on the patched copy.
    checker_clean: bool,
    /// The project's tests pass on the patched copy.
    tests_pass: bool,
    fixed: bool,
    /// Checker clean, tests failing: the error was hidden, not fixed.
    wrong: bool,
    attempts: usize,
    well_formed_edits: usize,
    model_calls: usize,
    prompt_tokens: Vec<usize>,
    seconds: f64,
    check: Option<String>,
    failure: Option<String>,
    attempt_log: Vec<String>,
}

/// Runs every diagnostic task under `dirs` (filtered by `args.only`) and prints the table.
pub(super) async fn run(
    args: &FixBenchArgs,
    dirs: &[PathBuf],
    config: &Config,
    prompts: &PromptLibrary,
    model: &Arc<dyn ModelClient>,
) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    for dir in task_dirs(dirs) {
        let id = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if args.only.as_deref().is_some_and(|o| !id.contains(o)) {
            continue;
        }
        let spec: DiagSpec = toml::from_str(&std::fs::read_to_string(dir.join("task.toml"))?).with_context(|| {
            format!("{}: task.toml of a diagnostic task ([diagnostic] file, line, code)", dir.display())
        })?;
        eprintln!("== {id} ({}, {} {}): {}", spec.language, spec.checker, spec.diagnostic.code, spec.description);
        let started = Instant::now();
        let result = run_task(&id, &spec, &dir, config, prompts, model, started).await?;
        eprintln!(
            "   {}{} in {} attempt(s), {:.0} s{}",
            if result.fixed {
                "FIXED"
            } else if result.wrong {
                "WRONG FIX"
            } else {
                "not fixed"
            },
            if result.verified { " (verified by the checker)" } else { "" },
            result.attempts,
            result.seconds,
            result.failure.as_deref().map(|f| format!(": {f}")).unwrap_or_default()
        );
        results.push(result);
    }
    if results.is_empty() {
        anyhow::bail!("no diagnostic task ran (a task folder holds project/, task.toml with [diagnostic])");
    }
    print_table(&results, &config.models.coder.name, &config.runtime.edit_format);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&results)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_task(
    id: &str,
    spec: &DiagSpec,
    dir: &std::path::Path,
    config: &Config,
    prompts: &PromptLibrary,
    model: &Arc<dyn ModelClient>,
    started: Instant,
) -> anyhow::Result<DiagResult> {
    let task = TaskWorkspace::open(dir, config, prompts, model).await?;
    let configured = config
        .checkers
        .get(&spec.checker)
        .with_context(|| format!("{id}: no [checkers.{}] in the configuration", spec.checker))?;
    let source = configured.sources.first().cloned().unwrap_or_else(|| spec.checker.clone());
    let checker = match checker_for(config, &source, &spec.diagnostic.file, &task.root) {
        CheckerChoice::Use(c) => c,
        other => anyhow::bail!("{id}: {}", other.why_not().unwrap_or_default()),
    };
    let cancel = CancellationToken::new();
    let mut result = DiagResult {
        id: id.to_string(),
        language: spec.language.clone(),
        checker: checker.name.clone(),
        code: spec.diagnostic.code.clone(),
        reproduced: false,
        status: None,
        proposed: false,
        verified: false,
        checker_clean: false,
        tests_pass: false,
        fixed: false,
        wrong: false,
        attempts: 0,
        well_formed_edits: 0,
        model_calls: 0,
        prompt_tokens: Vec::new(),
        seconds: 0.0,
        check: None,
        failure: None,
        attempt_log: Vec::new(),
    };
    let before = run_checker(config, &task.env.paths, &[], &checker, &cancel).await?;
    // Any severity: a clippy lint the corpus fixes is a warning unless the project denies it.
    let Some(found) = expected_in(&spec.diagnostic, before.diagnostics.iter()) else {
        result.failure = Some(format!("`{}` does not report {} as shipped", checker.display(), spec.diagnostic.code));
        return Ok(result);
    };
    result.reproduced = true;
    let request = AgentRequest::Fix {
        target: Some(Location::line(found.path.clone(), found.line)),
        message: Some(found.message.clone()),
        from_tests: false,
        origin: Some(DiagnosticOrigin { source, code: found.code.clone() }),
    };
    let options = TaskOptions { origin: "bench".into(), ..Default::default() };
    let ctx = JobContext::new(&task.env, options, cancel.clone());
    let task_id = uuid::Uuid::new_v4().to_string();
    let report = task.ws.start(Job::New { task_id, request }, ctx).await?;
    result.status = Some(report.status);
    result.proposed = report.status == ReportStatus::Patched && report.has_patch();
    result.verified =
        result.proposed && report.diagnostic_check.as_deref().is_some_and(|c| c.contains("no longer reports"));
    if result.proposed {
        result.tests_pass = verify_on_tree(&task.env, &report).await;
        let after = run_checker(config, &task.env.paths, &[], &checker, &cancel).await?;
        // Clean: no error at all, and the expected diagnostic gone whatever its severity.
        result.checker_clean =
            after.errors().next().is_none() && expected_in(&spec.diagnostic, after.diagnostics.iter()).is_none();
    }
    result.fixed = result.checker_clean && result.tests_pass;
    result.wrong = result.checker_clean && !result.tests_pass;
    result.attempts = report.attempts;
    result.well_formed_edits = report.well_formed_edits;
    result.model_calls = report.model_calls;
    result.prompt_tokens = report.prompt_tokens.clone();
    result.check = report.diagnostic_check.clone();
    result.failure = report.failure_reason.clone();
    result.attempt_log = report.attempt_log.clone();
    result.seconds = started.elapsed().as_secs_f64();
    Ok(result)
}

/// The reported error of the expected file and code nearest the expected line.
fn expected_in<'a>(
    expected: &ExpectedDiagnostic,
    reported: impl Iterator<Item = &'a CheckedDiagnostic>,
) -> Option<&'a CheckedDiagnostic> {
    reported
        .filter(|d| d.path == expected.file && d.code == expected.code)
        .min_by_key(|d| d.line.abs_diff(expected.line))
}

fn print_table(results: &[DiagResult], model: &str, format: &str) {
    let n = results.len();
    let count = |f: fn(&DiagResult) -> bool| results.iter().filter(|r| f(r)).count();
    let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
    let (fixed, verified, wrong) = (count(|r| r.fixed), count(|r| r.verified), count(|r| r.wrong));
    let proposed = count(|r| r.proposed);
    let not_reproduced = count(|r| !r.reproduced);
    let attempts: usize = results.iter().map(|r| r.attempts).sum();
    let well: usize = results.iter().map(|r| r.well_formed_edits).sum();
    let secs: f64 = results.iter().map(|r| r.seconds).sum();
    if not_reproduced > 0 {
        println!("{not_reproduced} task(s) not reproduced by their checker (see the log above)");
    }
    println!("| model | edit format | tasks | fixed | proposed | verified by the checker | wrong fixes | well-formed edits | s / task |");
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {model} | {format} | {n} | {fixed} ({:.0} %) | {proposed} | {verified} ({:.0} %) | {wrong} ({:.0} %) | {well}/{attempts} | {:.0} |",
        pct(fixed),
        pct(verified),
        pct(wrong),
        secs / n.max(1) as f64
    );
    let by_language = |lang: &str| {
        let of: Vec<&DiagResult> = results.iter().filter(|r| r.language == lang).collect();
        (of.len(), of.iter().filter(|r| r.fixed).count(), of.iter().filter(|r| r.wrong).count())
    };
    for lang in ["python", "rust"] {
        let (tasks, fixed, wrong) = by_language(lang);
        if tasks > 0 {
            println!("{lang}: {fixed} of {tasks} fixed, {wrong} wrong");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_error_is_the_nearest_of_its_file_and_code() {
        let d = |path: &str, line: usize, code: &str| CheckedDiagnostic {
            path: path.into(),
            line,
            column: 1,
            severity: "error".into(),
            code: code.into(),
            message: "m".into(),
        };
        let reported = [d("src/lib.rs", 3, "E0308"), d("src/lib.rs", 26, "E0308"), d("src/main.rs", 25, "E0308")];
        let expected = ExpectedDiagnostic { file: "src/lib.rs".into(), line: 25, code: "E0308".into() };
        assert_eq!(expected_in(&expected, reported.iter()).map(|d| d.line), Some(26));
        let other = ExpectedDiagnostic { code: "E0382".into(), ..expected };
        assert!(expected_in(&other, reported.iter()).is_none());
        let spec: DiagSpec = toml::from_str(
            "id = \"x\"\nlanguage = \"rust\"\nchecker = \"cargo\"\ndescription = \"d\"\nbug_files = [\"src/lib.rs\"]\n\n[diagnostic]\nfile = \"src/lib.rs\"\nline = 26\ncode = \"E0308\"\nmessage = \"mismatched types\"\n",
        )
        .unwrap();
        assert_eq!((spec.checker.as_str(), spec.diagnostic.line), ("cargo", 26));
    }
}
