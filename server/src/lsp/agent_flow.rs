//! The agent from the editor: `tinycoder.fix` (the quick-fix on any diagnostic)
//! and resuming tasks at start-up. A task runs in the background under
//! cancellable progress; its patch comes back as `workspace/applyEdit` (versioned
//! document changes, a change annotation asking for confirmation), and after the
//! user applies it the tests run again and the test diagnostics follow.
//!
//! The command answers at once with the task and job ids; nothing awaits the
//! client inside a handler.

use super::code_actions::ActionData;
use super::commands::request_failed;
use super::documents::DocumentStore;
use super::patch_edit::workspace_edit;
use super::progress::{JobRegistry, ProgressHandle};
use super::server::Backend;
use crate::agent::{
    describe_event, AgentEnv, AgentRequest, Location, ReportStatus, Runtime, SourceView, TaskOptions, TaskReport,
};
use crate::sandbox::BufferOverlay;
use crate::store::{EventBus, UnfinishedTask};
use crate::text::PositionEncoding;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{ChangeAnnotation, MessageActionItem, MessageType, ShowDocumentParams, Uri};
use tower_lsp_server::Client;

/// What the client can do with a workspace edit (from `initialize`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EditSupport {
    pub document_changes: bool,
    pub change_annotations: bool,
    pub show_document: bool,
}

/// The open buffers when a task started: their text (what the agent reads) and version (what its edit is for).
pub struct BufferSnapshot {
    root: PathBuf,
    buffers: HashMap<String, (String, i32)>,
}

impl BufferSnapshot {
    /// The open documents under `root`, taken under the document lock (no await).
    pub fn take(docs: &Mutex<DocumentStore>, root: &Path) -> Self {
        let mut buffers = HashMap::new();
        if let Ok(docs) = docs.lock() {
            for (uri, open) in docs.iter() {
                let Some(path) = uri.parse::<Uri>().ok().and_then(|u| u.to_file_path().map(|p| p.into_owned())) else {
                    continue;
                };
                if let Ok(rel) = path.strip_prefix(root) {
                    buffers.insert(rel.to_string_lossy().replace('\\', "/"), (open.doc.text(), open.doc.version()));
                }
            }
        }
        Self { root: root.to_path_buf(), buffers }
    }

    /// The version of each open document.
    pub fn versions(&self) -> HashMap<String, i32> {
        self.buffers.iter().map(|(p, (_, v))| (p.clone(), *v)).collect()
    }
}

impl SourceView for BufferSnapshot {
    fn read(&self, rel: &str) -> Option<String> {
        match self.buffers.get(rel) {
            Some((text, _)) => Some(text.clone()),
            None => crate::agent::read_workspace_file(&self.root, rel),
        }
    }

    fn overlays(&self) -> Vec<BufferOverlay> {
        self.buffers
            .iter()
            .map(|(p, (text, _))| BufferOverlay { rel_path: PathBuf::from(p), text: text.clone() })
            .collect()
    }
}

/// Owned handles a background task needs from the backend.
#[derive(Clone)]
pub struct FlowHandles {
    pub client: Client,
    pub docs: Arc<Mutex<DocumentStore>>,
    pub jobs: JobRegistry,
    pub test_diagnostics: Arc<Mutex<HashSet<String>>>,
    pub encoding: PositionEncoding,
    pub progress: bool,
    pub edits: EditSupport,
}

/// `tinycoder.fix [ActionData]`: fixes the diagnostic (or failing test) the action was listed for.
pub async fn fix(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let data: ActionData = args.first().cloned().and_then(|v| serde_json::from_value(v).ok()).ok_or_else(|| {
        Error::invalid_params("tinycoder.fix needs the code action's data: [{\"uri\", \"range\", \"diagnostic\"?}]")
    })?;
    let (_, paths) = backend.config_and_paths()?;
    let path = data
        .uri
        .to_file_path()
        .map(|p| p.into_owned())
        .ok_or_else(|| Error::invalid_params("tinycoder.fix needs a file: URI"))?;
    let rel = path
        .strip_prefix(&paths.root)
        .map_err(|_| request_failed(format!("{} is outside the workspace {}", path.display(), paths.root.display())))?
        .to_string_lossy()
        .replace('\\', "/");
    let range = data.diagnostic.as_ref().map(|d| d.range).unwrap_or(data.range);
    let message = data.diagnostic.as_ref().map(|d| d.message.clone());
    let from_tests =
        data.diagnostic.as_ref().and_then(|d| d.source.as_deref()) == Some(super::flows::DIAGNOSTIC_SOURCE);
    let request =
        AgentRequest::Fix { target: Some(Location::line(rel, range.start.line as usize + 1)), message, from_tests };
    start(backend, request, "tinycoder: fix").map(Some)
}

/// Starts `request` in the background; answers with its task and job ids.
pub fn start(backend: &Backend, request: AgentRequest, title: &str) -> Result<Value> {
    let (config, paths) = backend.config_and_paths()?;
    let settings = backend.settings().ok_or_else(|| request_failed("tinycoder is not initialized yet"))?;
    let model = settings.model.clone().map_err(|why| request_failed(format!("no model client: {why}")))?;
    let handles = backend.flow_handles();
    let snapshot = Arc::new(BufferSnapshot::take(&handles.docs, &paths.root));
    let progress = ProgressHandle::start(&handles.client, &handles.jobs, title, handles.progress);
    let task_id = uuid::Uuid::new_v4().to_string();
    let answer = json!({"taskId": task_id, "jobId": progress.id()});
    let open_store = backend.store_opener()?;
    let index = backend.index();
    let index_job = index.is_none().then(|| {
        let p = ProgressHandle::start(&handles.client, &handles.jobs, "tinycoder: indexing", handles.progress);
        backend.index_job(paths.root.clone(), config.clone(), p)
    });
    let prompts = settings.prompts.clone();
    tokio::spawn(async move {
        let index = match (index, index_job) {
            (Some(i), _) => Ok(i),
            (None, Some(job)) => tokio::task::spawn_blocking(job)
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map(|(i, _)| i).map_err(|e| e.to_string())),
            (None, None) => Err("the workspace index is not available".into()),
        };
        let store = tokio::task::spawn_blocking(open_store)
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()));
        let (index, store) = match (index, store) {
            (Ok(i), Ok(s)) => (i, s),
            (Err(e), _) | (_, Err(e)) => {
                handles
                    .client
                    .show_message(MessageType::ERROR, format!("tinycoder: the task could not start: {e}"))
                    .await;
                return;
            }
        };
        let env =
            AgentEnv { config, prompts, model, bus: EventBus::new(store), index, paths, sources: snapshot.clone() };
        run_task(handles, env, snapshot, Job::New { task_id, request }, progress).await;
    });
    Ok(answer)
}

enum Job {
    New { task_id: String, request: AgentRequest },
    Resume(Box<UnfinishedTask>),
}

/// Runs (or resumes) a task under `progress`, then delivers its outcome.
async fn run_task(
    handles: FlowHandles,
    env: AgentEnv,
    snapshot: Arc<BufferSnapshot>,
    job: Job,
    progress: ProgressHandle,
) {
    let mut rx = env.bus.subscribe();
    let runtime = Runtime::new(env);
    let cancel = progress.cancel_token();
    let task_id = match &job {
        Job::New { task_id, .. } => task_id.clone(),
        Job::Resume(u) => u.task.task_id.clone(),
    };
    let follow_id = task_id.clone();
    let reporter = {
        let sink = progress.sender();
        tokio::spawn(async move {
            while let Ok(e) = rx.recv().await {
                if e.task_id == follow_id {
                    if let Some(line) = describe_event(&e) {
                        tracing::info!(task = %e.task_id, "{line}");
                        sink.report(line, None);
                    }
                }
            }
        })
    };
    let options = TaskOptions { best_attempt: false, origin: "lsp".into(), session_id: None };
    let outcome = match job {
        Job::New { task_id, request } => runtime.run(&task_id, request, options, cancel).await,
        Job::Resume(u) => runtime.resume(&u, cancel).await,
    };
    reporter.abort();
    drop(progress);
    match outcome {
        Ok(report) => deliver(&handles, runtime.env(), &snapshot, report).await,
        Err(e) => handles.client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
    }
}

/// Offers the patch (or says why there is none).
async fn deliver(h: &FlowHandles, env: &AgentEnv, snapshot: &BufferSnapshot, report: TaskReport) {
    let client = &h.client;
    match report.status {
        ReportStatus::Patched | ReportStatus::BestAttempt => {}
        ReportStatus::NothingToFix => {
            return client.show_message(MessageType::INFO, format!("tinycoder: {}", report.summary)).await
        }
        ReportStatus::Cancelled => return,
        ReportStatus::Failed => {
            let tried = if report.attempt_log.is_empty() {
                String::new()
            } else {
                format!(" ({})", report.attempt_log.join("; "))
            };
            return client
                .show_message(MessageType::WARNING, format!("tinycoder could not do it: {}{tried}", report.summary))
                .await;
        }
    }
    let Some(patch) = report.patch.clone() else { return };
    let versions = snapshot.versions();
    // A buffer typed in since the task read it: never apply over the user's typing.
    let stale: Vec<String> = patch
        .changes
        .iter()
        .filter(|c| {
            let Some(v) = versions.get(&c.path) else { return false };
            let Some(uri) = Uri::from_file_path(env.paths.root.join(&c.path)) else { return false };
            h.docs.lock().ok().and_then(|d| d.get(uri.as_str()).map(|o| o.doc.version())).is_some_and(|now| now != *v)
        })
        .map(|c| c.path.clone())
        .collect();
    if !stale.is_empty() {
        let msg = format!("tinycoder: {} changed while the patch was made, so it was not applied; run the fix again for the new text.", stale.join(", "));
        return client.show_message(MessageType::WARNING, msg).await;
    }
    let label = patch_label(&report);
    let applied = if h.edits.document_changes && h.edits.change_annotations {
        let annotation = ChangeAnnotation {
            label: label.clone(),
            needs_confirmation: Some(true),
            description: Some(report.summary.clone()),
        };
        apply(h, env, &patch, &versions, Some(annotation)).await
    } else {
        ask_then_apply(h, env, &patch, &versions, &report, &label).await
    };
    if !applied {
        return;
    }
    if env.config.runtime.rerun_tests_after_apply {
        let mut overlays = snapshot.overlays();
        for c in &patch.changes {
            overlays.retain(|o| o.rel_path != Path::new(&c.path));
            overlays.push(BufferOverlay { rel_path: PathBuf::from(&c.path), text: c.after.clone() });
        }
        let cancel = tokio_util::sync::CancellationToken::new();
        match crate::sandbox::run_project_tests(&env.config, &env.paths, &overlays, &cancel).await {
            Ok(tests) => {
                super::flows::publish_test_report(h, &env.paths.root, &tests).await;
                let verdict = if tests.passed {
                    "tests pass".to_string()
                } else {
                    format!("{} test failure(s) remain", tests.failures.len().max(1))
                };
                client
                    .show_message(
                        MessageType::INFO,
                        format!("tinycoder: applied {}; {verdict}", patch.files().join(", ")),
                    )
                    .await;
            }
            Err(e) => {
                client
                    .show_message(
                        MessageType::WARNING,
                        format!("tinycoder: applied, but the tests could not run again: {e}"),
                    )
                    .await
            }
        }
    }
}

/// The annotation label: what the patch is and what checked it.
fn patch_label(report: &TaskReport) -> String {
    let tests = report.tests_after.as_ref().map(|t| t.headline()).unwrap_or_else(|| "not tested".into());
    let critic = match report.critic.as_ref().and_then(|c| c.score()) {
        Some(s) => format!("; critic {:.2}", s.correctness),
        None => String::new(),
    };
    let best = if report.status == ReportStatus::BestAttempt { " (best attempt, checks fail)" } else { "" };
    format!("tinycoder{best}: {tests}{critic}")
}

async fn apply(
    h: &FlowHandles,
    env: &AgentEnv,
    patch: &crate::edits::Patch,
    versions: &HashMap<String, i32>,
    annotation: Option<ChangeAnnotation>,
) -> bool {
    let Some(edit) = workspace_edit(&env.paths.root, patch, versions, h.encoding, annotation) else {
        h.client.show_message(MessageType::ERROR, "tinycoder: the patch names a path that is not a file URI").await;
        return false;
    };
    match h.client.apply_edit(edit).await {
        Ok(r) if r.applied => true,
        Ok(r) => {
            let why = r.failure_reason.unwrap_or_else(|| "declined".into());
            tracing::info!("patch not applied: {why}");
            false
        }
        Err(e) => {
            h.client
                .show_message(MessageType::ERROR, format!("tinycoder: the editor did not apply the patch: {e}"))
                .await;
            false
        }
    }
}

const APPLY: &str = "Apply";
const SHOW_DIFF: &str = "Show diff";
const DISCARD: &str = "Discard";

/// For clients without change annotations: "Apply / Show diff / Discard"; Show diff opens the diff and asks again.
async fn ask_then_apply(
    h: &FlowHandles,
    env: &AgentEnv,
    patch: &crate::edits::Patch,
    versions: &HashMap<String, i32>,
    report: &TaskReport,
    label: &str,
) -> bool {
    let actions: Vec<MessageActionItem> = [APPLY, SHOW_DIFF, DISCARD]
        .iter()
        .map(|t| MessageActionItem { title: t.to_string(), properties: Default::default() })
        .collect();
    let no_versions = HashMap::new();
    loop {
        let msg = format!("{label}. {} — apply it?", report.summary);
        let answer = h.client.show_message_request(MessageType::INFO, msg, Some(actions.clone())).await;
        match answer.ok().flatten().map(|a| a.title) {
            Some(t) if t == APPLY => {
                return apply(h, env, patch, if h.edits.document_changes { versions } else { &no_versions }, None).await
            }
            Some(t) if t == SHOW_DIFF => {
                let dir = env.paths.cache_dir.join("diffs");
                let file = dir.join(format!("{}.diff", report.task_id));
                let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, &report.diff));
                match (written, Uri::from_file_path(&file)) {
                    (Ok(()), Some(uri)) if h.edits.show_document => {
                        let _ = h
                            .client
                            .show_document(ShowDocumentParams {
                                uri,
                                external: Some(false),
                                take_focus: Some(true),
                                selection: None,
                            })
                            .await;
                    }
                    _ => {
                        h.client.show_message(MessageType::INFO, format!("tinycoder: the diff:\n{}", report.diff)).await
                    }
                }
            }
            _ => return false,
        }
    }
}

/// What starting a task needs from the backend, taken while a handler holds it.
pub struct Launcher {
    config: crate::config::Config,
    paths: crate::paths::WorkspacePaths,
    prompts: crate::config::PromptLibrary,
    model: std::result::Result<Arc<dyn crate::llm::ModelClient>, String>,
    handles: FlowHandles,
    index: Arc<std::sync::OnceLock<Arc<crate::index::WorkspaceIndex>>>,
}

impl Backend {
    /// A [`Launcher`] for the current configuration and workspace.
    pub(super) fn launcher(&self) -> Result<Launcher> {
        let (config, paths) = self.config_and_paths()?;
        let settings = self.settings().ok_or_else(|| request_failed("tinycoder is not initialized yet"))?;
        Ok(Launcher {
            config,
            paths,
            prompts: settings.prompts.clone(),
            model: settings.model.clone(),
            handles: self.flow_handles(),
            index: self.index.clone(),
        })
    }
}

/// How long resuming waits for the start-up indexing to finish.
const INDEX_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

impl Launcher {
    /// Resumes the tasks the user chose to keep at start-up, one after the other, each under its own progress.
    pub fn resume_all(self, tasks: Vec<UnfinishedTask>, store: crate::store::Store) {
        let model = match self.model.clone() {
            Ok(m) => m,
            Err(why) => return tracing::warn!("unfinished tasks not resumed: no model client: {why}"),
        };
        tokio::spawn(async move {
            // The start-up indexing opens the index; wait for it rather than open a second writer.
            let deadline = std::time::Instant::now() + INDEX_WAIT;
            let index = loop {
                if let Some(i) = self.index.get() {
                    break i.clone();
                }
                if std::time::Instant::now() > deadline {
                    return tracing::warn!("unfinished tasks not resumed: the index did not open");
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            };
            for t in tasks {
                let snapshot = Arc::new(BufferSnapshot::take(&self.handles.docs, &self.paths.root));
                let env = AgentEnv {
                    config: self.config.clone(),
                    prompts: self.prompts.clone(),
                    model: model.clone(),
                    bus: EventBus::new(store.clone()),
                    index: index.clone(),
                    paths: self.paths.clone(),
                    sources: snapshot.clone(),
                };
                let h = &self.handles;
                let progress = ProgressHandle::start(&h.client, &h.jobs, "tinycoder: resuming a task", h.progress);
                run_task(h.clone(), env, snapshot, Job::Resume(Box::new(t)), progress).await;
            }
        });
    }
}
