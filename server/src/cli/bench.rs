//! `tinycoder bench fix DIR…`: runs the agent on a corpus of small buggy
//! projects and reports fix rates, well-formed edits, model calls, prompt
//! tokens and time. Each task is a folder with `project/` (copied to a temp dir
//! for every run, so the corpus is never touched) and `task.toml`.

use super::CliContext;
use crate::agent::{
    AgentEnv, AgentRequest, DiskSources, Job, JobContext, ReportStatus, TaskOptions, TaskReport, Workspace,
    WorkspaceParts,
};
use crate::index::WorkspaceIndex;
use crate::store::{Store, StoreSettings};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Arguments of `tinycoder bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: BenchKind,
}

/// What to measure.
#[derive(Debug, clap::Subcommand)]
pub enum BenchKind {
    /// Fix the failing test of every task folder under DIR… (each holds project/ and task.toml).
    Fix(FixBenchArgs),
    /// The configured backend's speed on one prompt: time to first token, tokens/s, peak memory.
    Model(super::bench_model::ModelBenchArgs),
    /// Inline completion on cursors sampled in the code under DIR…, beside llama-server's `/infill`.
    Complete(super::bench_complete::CompleteBenchArgs),
    /// Recorded agent calls replayed on the embedded backend with and without prompt-lookup drafts.
    Lookup(super::bench_lookup::LookupBenchArgs),
}

/// Arguments of `tinycoder bench fix`.
#[derive(Debug, clap::Args)]
pub struct FixBenchArgs {
    /// Task folders, or folders of task folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Use this model for every role (default: the configured models).
    #[arg(long)]
    pub model: Option<String>,
    /// The edit format (default: runtime.edit_format).
    #[arg(long)]
    pub format: Option<String>,
    /// Only tasks whose id contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Include multi-file tasks (kind = "multi").
    #[arg(long)]
    pub multi: bool,
    /// Write every task's result as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Give each single-file task's `description` as the user's words about the
    /// problem, as `tinycoder fix --message TEXT` does (default: the failing test alone).
    #[arg(long)]
    pub describe: bool,
    /// The tasks are checker diagnostics (tests/bench/diag): each is fixed from the error its
    /// checker reports, as `tinycoder fix --check` does, and scored as fixed, verified or wrong.
    #[arg(long)]
    pub diag: bool,
    /// Append every chat request the run sends to this JSON-lines file (replayed by `bench lookup`).
    #[arg(long)]
    pub record_calls: Option<PathBuf>,
}

/// `task.toml` of a corpus task.
#[derive(Debug, Deserialize)]
struct TaskSpec {
    language: String,
    kind: String,
    description: String,
    #[serde(default)]
    request: Option<String>,
}

/// One task's outcome.
#[derive(Debug, Serialize)]
struct TaskResult {
    id: String,
    language: String,
    status: ReportStatus,
    fixed: bool,
    fixed_first_attempt: bool,
    attempts: usize,
    well_formed_edits: usize,
    model_calls: usize,
    prompt_tokens: Vec<usize>,
    /// Coder prompt tokens the server evaluated / reused from its prompt cache.
    prompt_evaluated: usize,
    prompt_cached: usize,
    seconds: f64,
    failure: Option<String>,
    attempt_log: Vec<String>,
    /// Steps of the plan (a multi-file task runs as a planned request).
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    /// What a passing patch changed beyond the task's reference fix (`fix.patch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    collateral: Option<super::bench_collateral::Collateral>,
}

pub(super) fn task_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        if d.join("task.toml").is_file() {
            out.push(d.clone());
        } else if let Ok(rd) = std::fs::read_dir(d) {
            let mut children: Vec<PathBuf> =
                rd.flatten().map(|e| e.path()).filter(|p| p.join("task.toml").is_file()).collect();
            children.sort();
            out.extend(children);
        }
    }
    out
}

fn copy_tree(src: &Path, dest: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dest)?;
    for e in std::fs::read_dir(src)?.flatten() {
        let name = e.file_name();
        if name == "target" || name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        let to = dest.join(&name);
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &to)?;
        } else {
            std::fs::copy(e.path(), &to)?;
        }
    }
    Ok(())
}

/// `tinycoder bench fix DIR…`.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let args = match args.what {
        BenchKind::Fix(a) => a,
        BenchKind::Model(a) => return super::bench_model::run(a, workspace).await,
        BenchKind::Complete(a) => return super::bench_complete::run(a, workspace).await,
        BenchKind::Lookup(a) => return super::bench_lookup::run(a, workspace).await,
    };
    let ctx = CliContext::load(workspace)?;
    let mut config = ctx.loaded.config.clone();
    if let Some(m) = &args.model {
        for role in [
            &mut config.models.planner,
            &mut config.models.coder,
            &mut config.models.critic,
            &mut config.models.summarizer,
        ] {
            role.name = m.clone();
        }
    }
    if let Some(f) = &args.format {
        config.runtime.edit_format = f.clone();
    }
    config.index.watch = false;
    let prompts = ctx.prompts()?;
    let dirs = task_dirs(&args.dirs);
    if dirs.is_empty() {
        let given: Vec<String> = args.dirs.iter().map(|d| d.display().to_string()).collect();
        anyhow::bail!(
            "no task folders in {}: a task folder holds project/ and task.toml (the corpora are tests/bench/fix and, with --diag, tests/bench/diag)",
            given.join(", ")
        );
    }
    let mut model = crate::llm::client_from_config(&config)?;
    if let Some(path) = &args.record_calls {
        let recorder = crate::llm::CallRecorder::new(model, path)
            .with_context(|| format!("cannot write the recorded calls to {}", path.display()))?;
        model = std::sync::Arc::new(recorder);
    }
    model.check_ready(crate::config::ModelRole::Coder).await?;
    if args.diag {
        return super::bench_diag::run(&args, &dirs, &config, &prompts, &model).await;
    }
    let mut results = Vec::new();
    for dir in dirs {
        let id = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if args.only.as_deref().is_some_and(|o| !id.contains(o)) {
            continue;
        }
        let spec: TaskSpec = toml::from_str(&std::fs::read_to_string(dir.join("task.toml"))?)
            .with_context(|| format!("{}: task.toml", dir.display()))?;
        if spec.kind == "multi" && !args.multi {
            continue;
        }
        eprintln!("== {id} ({}): {}", spec.language, spec.description);
        let task = TaskWorkspace::open(&dir, &config, &prompts, &model).await?;
        let (ws, env) = (&task.ws, &task.env);
        // One-file fixes start from the failing test; a multi-file task with a request runs it
        // as a planned request (router, planner, steps), as `tinycoder run` does.
        let started = Instant::now();
        let task_id = uuid::Uuid::new_v4().to_string();
        let options = TaskOptions { origin: "bench".into(), ..Default::default() };
        let (report, steps) = match (&spec.request, spec.kind.as_str()) {
            (Some(r), "multi") => {
                eprintln!("   request: {r}");
                let out =
                    crate::agent::plan::run_request(env, &task_id, r, None, options, CancellationToken::new()).await?;
                eprintln!("   plan: {} ({} step(s))", out.route.reason(), out.steps.len());
                (out.report, Some(out.steps.len()))
            }
            _ => {
                let message = args.describe.then(|| spec.description.clone());
                let request = AgentRequest::Fix { target: None, message, from_tests: false, origin: None };
                let ctx = JobContext::new(env, options, CancellationToken::new());
                (ws.start(Job::New { task_id, request }, ctx).await?, None)
            }
        };
        let fixed = report.status == ReportStatus::Patched && verify_on_tree(env, &report).await;
        let mut result = summarize(&id, &spec.language, &report, fixed, started.elapsed().as_secs_f64());
        result.steps = steps;
        if let (true, Some(patch), Some(reference)) =
            (fixed, &report.patch, super::bench_collateral::read_reference(&dir))
        {
            let c = super::bench_collateral::collateral(patch, &reference);
            eprintln!(
                "   collateral: {} of {} changed lines outside the reference fix{}",
                c.outside_reference,
                c.changed_lines,
                if c.deleted_documentation.is_empty() {
                    String::new()
                } else {
                    format!("; deleted documentation: {}", c.deleted_documentation.join("; "))
                }
            );
            result.collateral = Some(c);
        }
        eprintln!(
            "   {} in {} attempt(s), {} call(s), prompt max {} tokens, {:.0} s{}",
            if result.fixed { "FIXED" } else { "not fixed" },
            result.attempts,
            result.model_calls,
            result.prompt_tokens.iter().max().unwrap_or(&0),
            result.seconds,
            result.failure.as_deref().map(|f| format!(": {f}")).unwrap_or_default()
        );
        results.push(result);
    }
    print_table(&results, &config.models.coder.name, &config.runtime.edit_format);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&results)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A corpus task's project copied to a temporary folder and opened as a workspace.
pub(super) struct TaskWorkspace {
    pub ws: Workspace,
    pub env: AgentEnv,
    pub root: PathBuf,
    _home: tempfile::TempDir,
}

impl TaskWorkspace {
    /// Copies `dir/project` and opens it with `config` (store, index, no watching), ready.
    pub async fn open(
        dir: &Path,
        config: &crate::config::Config,
        prompts: &crate::config::PromptLibrary,
        model: &Arc<dyn crate::llm::ModelClient>,
    ) -> anyhow::Result<Self> {
        let home = tempfile::tempdir()?;
        let root = home.path().join("project");
        copy_tree(&dir.join("project"), &root)?;
        let paths = crate::paths::WorkspacePaths {
            root: root.clone(),
            cache_dir: home.path().join("cache"),
            data_dir: home.path().join("data"),
        };
        let store =
            Store::open(&paths.data_dir.join(crate::store::DB_FILE_NAME), StoreSettings::from_config(&config.store))?;
        let index = Arc::new(WorkspaceIndex::open(&root, &paths.cache_dir.join("index"), &config.index)?);
        let ws = Workspace::from_parts(WorkspaceParts {
            config: config.clone(),
            prompts: prompts.clone(),
            model: model.clone(),
            store,
            index,
            paths,
        });
        ws.ready().await.map_err(anyhow::Error::msg)?;
        let env =
            ws.env(Arc::new(DiskSources::new(&root)), Arc::new(crate::sandbox::NonInteractiveHuman::from(config)));
        Ok(Self { ws, env, root, _home: home })
    }
}

/// Writes the patch into the temp copy and runs the tests there: fixed means green on the tree.
pub(super) async fn verify_on_tree(env: &AgentEnv, report: &TaskReport) -> bool {
    let Some(patch) = &report.patch else { return false };
    if crate::undo::write_patch(&env.paths.root, patch).is_err() {
        return false;
    }
    crate::agent::run_tests(env, &[], &CancellationToken::new()).await.map(|t| t.passed).unwrap_or(false)
}

fn summarize(id: &str, language: &str, report: &TaskReport, fixed: bool, seconds: f64) -> TaskResult {
    TaskResult {
        id: id.to_string(),
        language: language.to_string(),
        status: report.status,
        fixed,
        fixed_first_attempt: fixed && report.attempts == 1,
        attempts: report.attempts,
        well_formed_edits: report.well_formed_edits,
        model_calls: report.model_calls,
        prompt_tokens: report.prompt_tokens.clone(),
        prompt_evaluated: report.prompt_tokens_evaluated,
        prompt_cached: report.prompt_tokens_cached,
        seconds,
        failure: report.failure_reason.clone(),
        attempt_log: report.attempt_log.clone(),
        steps: None,
        collateral: None,
    }
}

fn print_table(results: &[TaskResult], model: &str, format: &str) {
    let n = results.len().max(1) as f64;
    let fixed = results.iter().filter(|r| r.fixed).count();
    let first = results.iter().filter(|r| r.fixed_first_attempt).count();
    let attempts: usize = results.iter().map(|r| r.attempts).sum();
    let well: usize = results.iter().map(|r| r.well_formed_edits).sum();
    let calls: usize = results.iter().map(|r| r.model_calls).sum();
    let tokens: Vec<usize> = results.iter().flat_map(|r| r.prompt_tokens.iter().copied()).collect();
    let max_tokens = tokens.iter().max().copied().unwrap_or(0);
    let mean_tokens = tokens.iter().sum::<usize>() as f64 / tokens.len().max(1) as f64;
    let secs: f64 = results.iter().map(|r| r.seconds).sum();
    let planned: Vec<usize> = results.iter().filter_map(|r| r.steps).collect();
    if !planned.is_empty() {
        println!(
            "planned (multi-file) tasks: {}, fixed {}, steps per task {:.2}",
            planned.len(),
            results.iter().filter(|r| r.steps.is_some() && r.fixed).count(),
            planned.iter().sum::<usize>() as f64 / planned.len() as f64
        );
    }
    let (evaluated, cached): (usize, usize) =
        results.iter().fold((0, 0), |(e, c), r| (e + r.prompt_evaluated, c + r.prompt_cached));
    if evaluated + cached > 0 {
        println!(
            "coder prompt tokens as the server counted them: {evaluated} evaluated, {cached} reused from its prompt cache ({:.0} % saved)",
            100.0 * cached as f64 / (evaluated + cached) as f64
        );
    }
    let checked: Vec<&super::bench_collateral::Collateral> =
        results.iter().filter_map(|r| r.collateral.as_ref()).collect();
    if !checked.is_empty() {
        let changed: usize = checked.iter().map(|c| c.changed_lines).sum();
        let outside: usize = checked.iter().map(|c| c.outside_reference).sum();
        let clean = checked.iter().filter(|c| c.outside_reference == 0).count();
        let lost: Vec<&String> = checked.iter().flat_map(|c| &c.deleted_documentation).collect();
        println!(
            "collateral of {} passing patches: {outside} of {changed} changed lines outside the reference fix ({:.0} %), {clean} patches inside it; {} comment or docstring lines deleted{}",
            checked.len(),
            100.0 * outside as f64 / changed.max(1) as f64,
            lost.len(),
            if lost.is_empty() { String::new() } else { format!(": {}", lost.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")) }
        );
    }
    println!("| model | edit format | tasks | fixed | first attempt | after retries | well-formed edits | model calls / task | prompt tokens / call (max, mean) | s / task |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {model} | {format} | {} | {fixed} ({:.0} %) | {first} | {} | {well}/{attempts} ({:.0} %) | {:.2} | {max_tokens}, {mean_tokens:.0} | {:.0} |",
        results.len(),
        100.0 * fixed as f64 / n,
        fixed - first,
        100.0 * well as f64 / attempts.max(1) as f64,
        calls as f64 / n,
        secs / n
    );
}
