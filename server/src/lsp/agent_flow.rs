//! The agent from the editor: `tinycoder.fix` (the quick-fix on any diagnostic),
//! `tinycoder.fixAll` (the `source.fixAll.tinycoder` action: every checker error of a file),
//! the [`Launcher`] every agent flow starts through (fix, edit, document, write
//! tests; see `edit_flows.rs`), and resuming tasks at start-up. A task runs in the
//! background under cancellable progress; its patch is offered for review by
//! `review.rs`.
//!
//! The command answers at once with the task and job ids; nothing awaits the
//! client inside a handler.

use super::code_actions::ActionData;
use super::commands::request_failed;
use super::documents::DocumentStore;
use super::indexing::IndexSlots;
use super::progress::{JobRegistry, ProgressHandle};
use super::server::Backend;
use crate::agent::{
    describe_event, AgentRequest, DiagnosticOrigin, FixAllContext, FixAllProgress, Job, JobContext, Location,
    SourceView, TaskOptions, Workspace, WorkspaceParts,
};
use crate::sandbox::BufferOverlay;
use crate::store::UnfinishedTask;
use crate::text::PositionEncoding;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, NumberOrString, Uri};
use tower_lsp_server::Client;

/// What the client can do with a workspace edit (from `initialize`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EditSupport {
    pub document_changes: bool,
    pub change_annotations: bool,
    pub show_document: bool,
    /// The client applies `delete` resource operations (an undo deletes the files a patch created).
    pub delete_files: bool,
    /// The client answers `tinycoder/inputText` (announced as `experimental.tinycoderInputText`).
    pub input_text: bool,
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
    let (folder, rel) = backend.file_in_workspace(&data.uri, "tinycoder.fix")?;
    let range = data.diagnostic.as_ref().map(|d| d.range).unwrap_or(data.range);
    let message = data.diagnostic.as_ref().map(|d| d.message.clone());
    let from_tests =
        data.diagnostic.as_ref().and_then(|d| d.source.as_deref()) == Some(super::flows::DIAGNOSTIC_SOURCE);
    // Another tool's diagnostic is checked again by its checker (`[checkers.*]`).
    let origin = data.diagnostic.as_ref().filter(|_| !from_tests).map(|d| DiagnosticOrigin {
        source: d.source.clone().unwrap_or_default(),
        code: match &d.code {
            Some(NumberOrString::String(s)) => s.clone(),
            Some(NumberOrString::Number(n)) => n.to_string(),
            None => String::new(),
        },
    });
    let request = AgentRequest::Fix {
        target: Some(Location::line(rel, range.start.line as usize + 1)),
        message,
        from_tests,
        origin,
    };
    backend.launcher_in(&folder)?.start(request, "tinycoder: fix").map(Some)
}

/// `tinycoder.fixAll [ActionData]`: fixes the checker errors of the action's file one at a
/// time in the background; the one combined patch goes to review like a quick fix's.
pub async fn fix_all(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let data: ActionData = args.first().cloned().and_then(|v| serde_json::from_value(v).ok()).ok_or_else(|| {
        Error::invalid_params("tinycoder.fixAll needs the code action's data: [{\"uri\", \"range\"}]")
    })?;
    let (folder, rel) = backend.file_in_workspace(&data.uri, "tinycoder.fixAll")?;
    backend.launcher_in(&folder)?.start_fix_all(rel).map(Some)
}

/// Runs "fix all in this file" on `rel` under `progress`, then offers its combined patch.
async fn run_fix_all(
    handles: FlowHandles,
    ws: Workspace,
    human: Arc<dyn crate::sandbox::HumanPort>,
    snapshot: Arc<BufferSnapshot>,
    rel: String,
    task_id: String,
    progress: ProgressHandle,
) {
    let mut rx = ws.bus.subscribe();
    let env = ws.env(snapshot.clone(), human.clone());
    let ours: Arc<Mutex<HashSet<String>>> = Arc::default();
    let reporter = {
        let (sink, ours) = (progress.sender(), ours.clone());
        tokio::spawn(async move {
            while let Ok(e) = rx.recv().await {
                if ours.lock().is_ok_and(|o| o.contains(&e.task_id)) {
                    if let Some(line) = describe_event(&e) {
                        tracing::info!(task = %e.task_id, "{line}");
                        sink.report(line, None);
                    }
                }
            }
        })
    };
    let sink = progress.sender();
    let on_progress = |p: FixAllProgress| match p {
        FixAllProgress::Checking { command, .. } => sink.report(format!("checking with `{command}`"), None),
        FixAllProgress::Fixing { task_id, diagnostic } => {
            if let Ok(mut o) = ours.lock() {
                o.insert(task_id);
            }
            sink.report(format!("fixing {}", diagnostic.headline()), None);
        }
        FixAllProgress::Done(o) => {
            tracing::info!("{}", o.line());
            sink.report(o.line(), None);
        }
    };
    let options = TaskOptions { best_attempt: false, origin: "lsp".into(), session_id: None };
    let ctx = FixAllContext { sources: snapshot.clone(), human, options, cancel: progress.cancel_token() };
    let outcome = crate::agent::fix_all(&ws, &rel, ctx, &on_progress).await;
    reporter.abort();
    drop(progress);
    match outcome {
        Ok(r) => super::review::deliver(&handles, &env, &snapshot, r.task_report(&task_id), None).await,
        Err(e) => handles.client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
    }
}

/// How to run a request again from scratch (a stale patch recomputed on request).
#[derive(Clone)]
pub struct Redo {
    pub launcher: Launcher,
    pub request: AgentRequest,
    pub title: String,
}

/// Runs (or resumes) a task under `progress` with `human` to ask, then delivers its outcome.
async fn run_task(
    handles: FlowHandles,
    ws: Workspace,
    human: Arc<dyn crate::sandbox::HumanPort>,
    snapshot: Arc<BufferSnapshot>,
    job: Job,
    progress: ProgressHandle,
    redo: Option<Redo>,
) {
    let mut rx = ws.bus.subscribe();
    let env = ws.env(snapshot.clone(), human);
    let cancel = progress.cancel_token();
    let follow_id = job.task_id().to_string();
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
    let outcome = ws.start(job, JobContext::new(&env, options, cancel)).await;
    reporter.abort();
    drop(progress);
    match outcome {
        Ok(report) => super::review::deliver(&handles, &env, &snapshot, report, redo).await,
        Err(e) => handles.client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
    }
}

/// What starting a task needs from the backend, taken while a handler holds it;
/// owned, so a background task (a recompute, a resume) can start another.
#[derive(Clone)]
pub struct Launcher {
    pub(super) config: crate::config::Config,
    pub(super) paths: crate::paths::WorkspacePaths,
    pub(super) prompts: crate::config::PromptLibrary,
    pub(super) model: std::result::Result<Arc<dyn crate::llm::ModelClient>, String>,
    pub(super) handles: FlowHandles,
    index: IndexSlots,
    store: Arc<Mutex<Option<crate::store::Store>>>,
}

impl Backend {
    /// A [`Launcher`] for the first workspace folder.
    pub(super) fn launcher(&self) -> Result<Launcher> {
        let folder = self.primary_root()?;
        self.launcher_in(&folder)
    }

    /// A [`Launcher`] for `folder`: its configuration, index and store, the server's prompts and model.
    pub(super) fn launcher_in(&self, folder: &super::roots::WorkspaceRoot) -> Result<Launcher> {
        let (config, paths) = self.config_and_paths_in(folder)?;
        let settings = self.settings().ok_or_else(|| request_failed("tinycoder is not initialized yet"))?;
        Ok(Launcher {
            config,
            paths,
            prompts: settings.prompts.clone(),
            model: settings.model.clone(),
            handles: self.flow_handles(),
            index: folder.index.clone(),
            store: folder.store.clone(),
        })
    }
}

impl Launcher {
    /// The model client, or why there is none (for the user).
    pub(super) fn model(&self) -> Result<Arc<dyn crate::llm::ModelClient>> {
        self.model.clone().map_err(|why| request_failed(format!("no model client: {why}")))
    }

    /// The open buffers under the workspace now.
    pub(super) fn snapshot(&self) -> Arc<BufferSnapshot> {
        Arc::new(BufferSnapshot::take(&self.handles.docs, &self.paths.root))
    }

    /// The workspace a task runs in: opens the store off the async threads, checks
    /// that the coder's model answers, and opens the index (under progress, when it
    /// is not open yet). Local problems are reported before the model's.
    pub(super) async fn workspace(&self) -> std::result::Result<Workspace, String> {
        let model = self.model.clone().map_err(|why| format!("no model client: {why}"))?;
        let (slot, root, config) = (self.store.clone(), self.paths.root.clone(), self.config.clone());
        let store = tokio::task::spawn_blocking(move || super::server::open_store_once(&slot, &root, &config))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        model.check_ready(crate::config::ModelRole::Coder).await.map_err(|e| e.to_string())?;
        let index = match self.index.get() {
            Some(i) => {
                let limit = std::time::Duration::from_millis(self.config.index.ready_wait_ms);
                if !self.index.caught_up_within(limit).await {
                    tracing::warn!("the workspace is still being indexed: this request sees the files indexed so far");
                }
                i
            }
            None => {
                let h = &self.handles;
                let p = ProgressHandle::start(&h.client, &h.jobs, "tinycoder: indexing", h.progress);
                let job = self.index.job(self.paths.root.clone(), self.config.clone(), p);
                tokio::task::spawn_blocking(job)
                    .await
                    .map_err(|e| e.to_string())?
                    .map(|(i, _)| i)
                    .map_err(|e| format!("the workspace index is not available: {e}"))?
            }
        };
        Ok(Workspace::from_parts(WorkspaceParts {
            config: self.config.clone(),
            prompts: self.prompts.clone(),
            model,
            store,
            index,
            paths: self.paths.clone(),
        }))
    }

    /// The agent's environment in [`Launcher::workspace`], with `sources` as the user's view and the editor to ask.
    pub(super) async fn env(
        &self,
        sources: Arc<BufferSnapshot>,
    ) -> std::result::Result<crate::agent::AgentEnv, String> {
        Ok(self.workspace().await?.env(sources, self.human()))
    }

    /// The editor, asked the agent's questions.
    fn human(&self) -> Arc<dyn crate::sandbox::HumanPort> {
        Arc::new(super::human::LspHuman::new(self.handles.client.clone(), self.handles.edits))
    }

    /// Starts `request` in the background under progress titled `title`; answers with its task and job ids.
    pub fn start(&self, request: AgentRequest, title: &str) -> Result<Value> {
        self.model()?;
        let h = &self.handles;
        let snapshot = self.snapshot();
        let progress = ProgressHandle::start(&h.client, &h.jobs, title, h.progress);
        let task_id = uuid::Uuid::new_v4().to_string();
        let answer = json!({"taskId": task_id, "jobId": progress.id()});
        let redo = Redo { launcher: self.clone(), request: request.clone(), title: title.to_string() };
        let me = self.clone();
        tokio::spawn(async move {
            match me.workspace().await {
                Ok(ws) => {
                    let job = Job::New { task_id, request };
                    run_task(me.handles.clone(), ws, me.human(), snapshot, job, progress, Some(redo)).await
                }
                Err(e) => {
                    let message = format!("tinycoder: the task could not start: {e}");
                    me.handles.client.show_message(MessageType::ERROR, message).await
                }
            }
        });
        Ok(answer)
    }

    /// Starts "fix all in this file" on `rel` in the background; answers with its ids.
    pub fn start_fix_all(&self, rel: String) -> Result<Value> {
        self.model()?;
        let h = &self.handles;
        let snapshot = self.snapshot();
        let progress = ProgressHandle::start(&h.client, &h.jobs, "tinycoder: fix all in this file", h.progress);
        let task_id = uuid::Uuid::new_v4().to_string();
        let answer = json!({"taskId": task_id, "jobId": progress.id()});
        let me = self.clone();
        tokio::spawn(async move {
            match me.workspace().await {
                Ok(ws) => run_fix_all(me.handles.clone(), ws, me.human(), snapshot, rel, task_id, progress).await,
                Err(e) => {
                    let message = format!("tinycoder: the task could not start: {e}");
                    me.handles.client.show_message(MessageType::ERROR, message).await
                }
            }
        });
        Ok(answer)
    }

    /// Resumes the tasks the user chose to keep at start-up, one after the other, each under its own progress.
    pub fn resume_all(self, tasks: Vec<UnfinishedTask>, store: crate::store::Store) {
        if let Err(why) = &self.model {
            return tracing::warn!("unfinished tasks not resumed: no model client: {why}");
        }
        if let Ok(mut slot) = self.store.lock() {
            slot.get_or_insert(store);
        }
        tokio::spawn(async move {
            // The start-up indexing opens the index; wait for its first run rather than index twice.
            let limit = std::time::Duration::from_millis(self.config.index.ready_wait_ms);
            if !self.index.caught_up_within(limit).await {
                tracing::warn!("resuming while the workspace is still being indexed");
            }
            for t in tasks {
                let snapshot = self.snapshot();
                let ws = match self.workspace().await {
                    Ok(ws) => ws,
                    Err(e) => return tracing::warn!("unfinished tasks not resumed: {e}"),
                };
                let h = &self.handles;
                let progress = ProgressHandle::start(&h.client, &h.jobs, "tinycoder: resuming a task", h.progress);
                run_task(h.clone(), ws, self.human(), snapshot, Job::Resume(Box::new(t)), progress, None).await;
            }
        });
    }
}
