//! The workspace session: one folder opened once (configuration, prompts,
//! model client, task store, event bus, index), and the one entry every
//! adapter starts work through ([`Workspace::start`]). The CLI, the ACP agent
//! and the bench open it with [`Workspace::open`]; the language server, which
//! keeps its own long-lived watched index and store, builds it from those
//! parts ([`Workspace::from_parts`]).

use super::{AgentEnv, AgentError, AgentRequest, Location, Runtime, SourceView, TaskOptions, TaskReport};
use crate::config::{Config, PromptId, PromptLibrary};
use crate::index::WorkspaceIndex;
use crate::llm::ModelClient;
use crate::paths::WorkspacePaths;
use crate::sandbox::HumanPort;
use crate::store::{EventBus, Store, UnfinishedTask};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

/// Why a workspace could not be opened; each names the folder and what failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the prompts of {root} cannot be loaded: {source}")]
    Prompts { root: String, source: crate::config::PromptError },
    #[error("no model client for {root}: {source}")]
    Model { root: String, source: crate::llm::LlmError },
    #[error("the task store of {root} cannot be opened: {source}")]
    Store { root: String, source: crate::store::StoreError },
    #[error("the index of {root} cannot be opened: {source}")]
    Index { root: String, source: crate::index::IndexError },
}

/// What a workspace is built from when its host owns their lifecycle.
pub struct WorkspaceParts {
    pub config: Config,
    pub prompts: PromptLibrary,
    pub model: Arc<dyn ModelClient>,
    pub store: Store,
    pub index: Arc<WorkspaceIndex>,
    pub paths: WorkspacePaths,
}

/// One workspace folder, opened once and shared by every request on it.
pub struct Workspace {
    pub root: PathBuf,
    pub config: Config,
    pub prompts: PromptLibrary,
    pub model: Arc<dyn ModelClient>,
    pub store: Store,
    pub bus: EventBus,
    pub index: Arc<WorkspaceIndex>,
    pub paths: WorkspacePaths,
    /// The first catch-up of the index with the disk (its error, for the user).
    indexed: OnceCell<Result<(), String>>,
}

/// What a workspace is asked to do.
#[derive(Debug, Clone)]
pub enum Job {
    /// A new task with this id.
    New { task_id: String, request: AgentRequest },
    /// Doc comments for the function or class at 1-based `line` of `path`: an
    /// edit of that definition in which only comments and docstrings may change.
    Document { task_id: String, path: String, line: usize },
    /// An unfinished task, continued from its checkpoint.
    Resume(Box<UnfinishedTask>),
}

impl Job {
    /// The id of the task the job runs.
    pub fn task_id(&self) -> &str {
        match self {
            Self::New { task_id, .. } | Self::Document { task_id, .. } => task_id,
            Self::Resume(u) => &u.task.task_id,
        }
    }
}

/// Who the job runs for: the user's view of the files, who answers its questions, its options.
pub struct JobContext {
    pub sources: Arc<dyn SourceView>,
    pub human: Arc<dyn HumanPort>,
    pub options: TaskOptions,
    pub cancel: CancellationToken,
}

impl JobContext {
    /// The sources and the human of `env` (from [`Workspace::env`]), with `options` and `cancel`.
    pub fn new(env: &AgentEnv, options: TaskOptions, cancel: CancellationToken) -> Self {
        Self { sources: env.sources.clone(), human: env.human.clone(), options, cancel }
    }
}

impl Workspace {
    /// Opens the workspace at `root` with `config`: prompts, model client, store and index
    /// (the index without watching; [`Workspace::ready`] brings it up to date). Blocking.
    pub fn open(root: &Path, config: Config) -> Result<Self, WorkspaceError> {
        let shown = root.display().to_string();
        let prompts = PromptLibrary::for_workspace(&config, Some(root))
            .map_err(|source| WorkspaceError::Prompts { root: shown.clone(), source })?;
        let model = crate::llm::client_from_config(&config)
            .map_err(|source| WorkspaceError::Model { root: shown.clone(), source })?;
        let store = crate::store::open_workspace(root, &config)
            .map_err(|source| WorkspaceError::Store { root: shown.clone(), source })?;
        let mut index_cfg = config.clone();
        index_cfg.index.watch = false;
        let index = WorkspaceIndex::open_for_workspace(root, &index_cfg)
            .map_err(|source| WorkspaceError::Index { root: shown, source })?;
        let paths = WorkspacePaths::new(root, &config.store.dir);
        Ok(Self::from_parts(WorkspaceParts { config, prompts, model, store, index: Arc::new(index), paths }))
    }

    /// A workspace over parts its host opened (an index it watches, a store it shares).
    pub fn from_parts(parts: WorkspaceParts) -> Self {
        Self {
            root: parts.paths.root.clone(),
            bus: EventBus::new(parts.store.clone()),
            config: parts.config,
            prompts: parts.prompts,
            model: parts.model,
            store: parts.store,
            index: parts.index,
            paths: parts.paths,
            indexed: OnceCell::new(),
        }
    }

    /// Waits until the index caught up with the disk once; later calls return its outcome at once.
    pub async fn ready(&self) -> Result<(), String> {
        self.indexed
            .get_or_init(|| async {
                let index = self.index.clone();
                match tokio::task::spawn_blocking(move || index.index_all(|_| {}, &CancellationToken::new())).await {
                    Ok(Ok(summary)) => {
                        tracing::info!(?summary, "index caught up");
                        Ok(())
                    }
                    Ok(Err(e)) => Err(format!("the index of {} could not catch up: {e}", self.root.display())),
                    Err(e) => Err(format!("the indexer stopped: {e}")),
                }
            })
            .await
            .clone()
    }

    /// The agent's environment with `sources` as the user's view of the files and `human` to ask.
    pub fn env(&self, sources: Arc<dyn SourceView>, human: Arc<dyn HumanPort>) -> AgentEnv {
        AgentEnv {
            config: self.config.clone(),
            prompts: self.prompts.clone(),
            model: self.model.clone(),
            bus: self.bus.clone(),
            index: self.index.clone(),
            paths: self.paths.clone(),
            sources,
            human,
        }
    }

    /// Runs `job` to its end; its events go to [`Workspace::bus`] as it runs.
    pub async fn start(&self, job: Job, ctx: JobContext) -> Result<TaskReport, AgentError> {
        let env = self.env(ctx.sources, ctx.human);
        let runtime = Runtime::new(env);
        match job {
            Job::New { task_id, request } => runtime.run(&task_id, request, ctx.options, ctx.cancel).await,
            Job::Document { task_id, path, line } => {
                let env = runtime.env();
                let request = document_request(&env.prompts, &*env.sources, &path, line)?;
                runtime.run(&task_id, request, ctx.options, ctx.cancel).await
            }
            Job::Resume(u) => runtime.resume(&u, ctx.cancel).await,
        }
    }

    /// The workspace-relative, `/`-separated form of `path` (absolute or relative), if it lies inside.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = if path.is_absolute() { path.strip_prefix(&self.root).ok()? } else { path };
        if rel.components().any(|c| !matches!(c, std::path::Component::Normal(_))) || rel.as_os_str().is_empty() {
            return None;
        }
        Some(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
    }
}

/// The edit that documents the definition around `path:line`, as `sources` shows the file now.
pub fn document_request(
    prompts: &PromptLibrary,
    sources: &dyn SourceView,
    path: &str,
    line: usize,
) -> Result<AgentRequest, AgentError> {
    let text = sources
        .read(path)
        .ok_or_else(|| AgentError::Request(format!("{path} is not a readable text file of the workspace")))?;
    let subject = super::subject_at(path, &text, line)
        .ok_or_else(|| AgentError::Request(format!("there is no function or class at {path}:{line} to document")))?;
    let language = crate::syntax::language_for_path(Path::new(path)).map(|l| l.name).unwrap_or("");
    let instruction =
        prompts.render(PromptId::DOCUMENT_INSTRUCTION, &[("symbol", &subject.name), ("language", language)])?;
    let target = Location { path: path.to_string(), start_line: subject.start_line, end_line: subject.end_line };
    Ok(AgentRequest::Edit { target, instruction, comments_only: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_request_targets_the_whole_definition_and_changes_only_comments() {
        let dir = tempfile::tempdir().unwrap();
        let code =
            "RATE = 3\n\n\ndef total(items):\n    s = 0\n    for i in items:\n        s += i\n    return s * RATE\n";
        std::fs::write(dir.path().join("calc.py"), code).unwrap();
        let sources = super::super::DiskSources::new(dir.path());
        let prompts = PromptLibrary::load(None).unwrap();
        let AgentRequest::Edit { target, instruction, comments_only } =
            document_request(&prompts, &sources, "calc.py", 6).unwrap()
        else {
            panic!("an edit")
        };
        assert_eq!((target.path.as_str(), target.start_line, target.end_line, comments_only), ("calc.py", 4, 8, true));
        assert!(instruction.contains("total"), "the instruction names the symbol: {instruction}");
        let outside = document_request(&prompts, &sources, "calc.py", 1).unwrap_err().to_string();
        assert_eq!(outside, "there is no function or class at calc.py:1 to document");
        let missing = document_request(&prompts, &sources, "nope.py", 1).unwrap_err().to_string();
        assert!(missing.contains("nope.py is not a readable text file"), "{missing}");
    }
}
