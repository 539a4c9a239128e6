//! The tower-lsp-server backend: capabilities, document sync, symbols, code
//! actions, commands, configuration, chat.
//!
//! Ordering: every notification that changes documents does its work
//! synchronously under the `std::sync::Mutex` before any `.await`. tower-lsp-server
//! polls handler futures in arrival order, so the first poll (where all the work
//! happens) keeps the order even though handlers run concurrently.

use super::chat::ChatSessions;
use super::code_actions::list_actions;
use super::commands::{self, command_names, request_failed};
use super::convert::to_text_change;
use super::documents::DocumentStore;
use super::progress::JobRegistry;
use super::symbols::outline;
use crate::config::{ConfigInputs, LoadedConfig, PromptLibrary};
use crate::llm::ModelClient;
use crate::text::PositionEncoding;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

/// Builds the model client for a configuration (`Err`: why there is none, for the user).
pub type ModelClientFactory =
    Arc<dyn Fn(&crate::config::Config) -> std::result::Result<Arc<dyn ModelClient>, String> + Send + Sync>;

/// What the server is started with.
#[derive(Clone)]
pub struct ServerOptions {
    /// The workspace root from the command line (the client's folders win).
    pub workspace: Option<PathBuf>,
    /// Creates the model client from the effective configuration.
    pub model_factory: ModelClientFactory,
    /// Set once `shutdown` was received (for the exit code).
    pub shutdown_received: Arc<AtomicBool>,
}

/// Configuration, prompts and model client, replaced together on reload.
pub(super) struct Settings {
    pub(super) loaded: LoadedConfig,
    pub(super) prompts: PromptLibrary,
    pub(super) model: std::result::Result<Arc<dyn ModelClient>, String>,
}

/// The language server state.
pub struct Backend {
    pub(super) client: Client,
    pub(super) options: ServerOptions,
    pub(super) docs: Arc<Mutex<DocumentStore>>,
    pub(super) encoding: RwLock<PositionEncoding>,
    /// The workspace folders, each with its own index and store; the first one's settings apply.
    pub(super) roots: RwLock<super::roots::WorkspaceRoots>,
    pub(super) init_options: Arc<Mutex<Option<Value>>>,
    pub(super) settings: Arc<RwLock<Option<Arc<Settings>>>>,
    /// Content hashes of untrusted workspace settings already put to the user in this run.
    pub(super) trust_asked: Arc<Mutex<HashSet<String>>>,
    pub(super) progress_supported: AtomicBool,
    pub(super) jobs: JobRegistry,
    pub(super) chats: Mutex<ChatSessions>,
    /// URIs that carry tinycoder test diagnostics now (cleared by a later green run).
    pub(super) test_diagnostics: Arc<Mutex<HashSet<String>>>,
    /// What the client can do with workspace edits (from `initialize`).
    pub(super) edit_support: RwLock<super::agent_flow::EditSupport>,
    /// Set while an undo waits for the editor to apply it, so two undos never restore the same patch.
    pub(super) undo_busy: Arc<AtomicBool>,
    /// Inline completion: each document's latest request, recent suggestions, client support.
    pub(super) completions: Arc<super::inline_completion::Completions>,
}

/// Parameters of `tinycoder/debugDocument`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebugDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

/// The server's view of a document (a debugging aid: `tinycoder/debugDocument`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DebugDocumentResult {
    pub uri: String,
    pub version: i32,
    pub language_id: String,
    pub encoding: &'static str,
    pub text: String,
    pub has_syntax_tree: bool,
}

/// Configuration (with the user's recorded workspace trust), prompts and the model client.
pub(super) fn build_settings(
    workspace: Option<PathBuf>,
    init_options: Option<Value>,
    model_factory: &ModelClientFactory,
) -> std::result::Result<Settings, String> {
    let mut inputs = ConfigInputs::from_environment(workspace.clone());
    inputs.init_options = init_options;
    let loaded = LoadedConfig::load(&inputs).map_err(|e| format!("tinycoder configuration not applied: {e}"))?;
    let prompts = PromptLibrary::for_workspace(&loaded.config, workspace.as_deref())
        .map_err(|e| format!("tinycoder prompts not applied: {e}"))?;
    let model = model_factory(&loaded.config);
    Ok(Settings { loaded, prompts, model })
}

/// Opens the workspace store into `slot` unless it is already there (one handle per server).
pub(super) fn open_store_once(
    slot: &Mutex<Option<crate::store::Store>>,
    root: &std::path::Path,
    config: &crate::config::Config,
) -> std::result::Result<crate::store::Store, crate::store::StoreError> {
    let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(store) = slot.as_ref() {
        return Ok(store.clone());
    }
    let store = crate::store::open_workspace(root, config)?;
    *slot = Some(store.clone());
    Ok(store)
}

/// Options that mean "nothing set": null, `[]` (how Neovim encodes an empty Lua table) or `{}`.
fn meaningful_options(v: Option<Value>) -> Option<Value> {
    v.filter(|v| match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    })
}

pub(super) fn uri_key(uri: &Uri) -> String {
    uri.as_str().to_string()
}

pub(super) fn lock_err<T>(_: T) -> Error {
    request_failed("internal state is unavailable after an earlier failure; restart the server")
}

impl Backend {
    /// A backend talking to `client`.
    pub fn new(client: Client, options: ServerOptions) -> Self {
        let mut roots = super::roots::WorkspaceRoots::default();
        if let Some(root) = options.workspace.clone() {
            roots.add(root);
        }
        Self {
            client,
            options,
            docs: Arc::new(Mutex::new(DocumentStore::default())),
            encoding: RwLock::new(PositionEncoding::Utf16),
            roots: RwLock::new(roots),
            init_options: Arc::new(Mutex::new(None)),
            settings: Arc::new(RwLock::new(None)),
            trust_asked: Arc::new(Mutex::new(HashSet::new())),
            progress_supported: AtomicBool::new(false),
            jobs: JobRegistry::default(),
            chats: Mutex::new(ChatSessions::default()),
            test_diagnostics: Arc::new(Mutex::new(HashSet::new())),
            edit_support: RwLock::new(Default::default()),
            undo_busy: Arc::new(AtomicBool::new(false)),
            completions: Arc::default(),
        }
    }

    /// The running jobs.
    pub fn jobs(&self) -> &JobRegistry {
        &self.jobs
    }

    /// Whether the client can show work-done progress.
    pub fn progress_supported(&self) -> bool {
        self.progress_supported.load(Ordering::Relaxed)
    }

    /// The client handle.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The workspace folders, the first one first.
    pub(super) fn roots(&self) -> Vec<Arc<super::roots::WorkspaceRoot>> {
        self.roots.read().map(|r| r.all()).unwrap_or_default()
    }

    /// The first workspace folder (an error when no folder is open).
    pub(super) fn primary_root(&self) -> Result<Arc<super::roots::WorkspaceRoot>> {
        self.roots.read().ok().and_then(|r| r.primary()).ok_or_else(|| {
            request_failed("tinycoder needs a workspace folder for this: open a folder (or start it with --workspace)")
        })
    }

    /// The workspace folder that holds `path` (an error naming the folders when none does).
    pub(super) fn root_of(&self, path: &Path) -> Result<Arc<super::roots::WorkspaceRoot>> {
        let roots = self.roots.read().map_err(lock_err)?;
        roots.holding(path).ok_or_else(|| match roots.primary() {
            None => request_failed(
                "tinycoder needs a workspace folder for this: open a folder (or start it with --workspace)",
            ),
            Some(_) => {
                request_failed(format!("{} is outside the workspace folders ({})", path.display(), roots.describe()))
            }
        })
    }

    /// The folder holding the file at `uri` and the file's path relative to it, `/`-separated.
    pub(super) fn file_in_workspace(&self, uri: &Uri, cmd: &str) -> Result<(Arc<super::roots::WorkspaceRoot>, String)> {
        let path = uri
            .to_file_path()
            .map(|p| p.into_owned())
            .ok_or_else(|| Error::invalid_params(format!("{cmd} needs a file: URI")))?;
        let root = self.root_of(&path)?;
        let rel = path.strip_prefix(&root.root).map_err(|_| request_failed("internal: folder mismatch"))?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        Ok((root, rel))
    }

    /// The effective configuration and the directories of `folder`: its own configuration
    /// when it is not the first folder and it was read, else the server's.
    pub(super) fn config_and_paths_in(
        &self,
        folder: &super::roots::WorkspaceRoot,
    ) -> Result<(crate::config::Config, crate::paths::WorkspacePaths)> {
        let settings = self.settings().ok_or_else(|| request_failed("tinycoder is not initialized yet"))?;
        let own = folder.config.read().ok().and_then(|c| c.clone());
        let config = own.unwrap_or_else(|| settings.loaded.config.clone());
        let paths = crate::paths::WorkspacePaths::new(&folder.root, &config.store.dir);
        Ok((config, paths))
    }

    /// Paths and texts of the open buffers that are files.
    pub(super) fn open_buffers(&self) -> Vec<(PathBuf, String)> {
        let Ok(docs) = self.docs.lock() else { return Vec::new() };
        docs.iter()
            .filter_map(|(uri, open)| {
                let uri: Uri = uri.parse().ok()?;
                Some((uri.to_file_path()?.into_owned(), open.doc.text()))
            })
            .collect()
    }

    /// Owned handles for a background task (client, documents, jobs, diagnostics, capabilities).
    pub(super) fn flow_handles(&self) -> super::agent_flow::FlowHandles {
        super::agent_flow::FlowHandles {
            client: self.client.clone(),
            docs: self.docs.clone(),
            jobs: self.jobs.clone(),
            test_diagnostics: self.test_diagnostics.clone(),
            encoding: self.encoding(),
            progress: self.progress_supported(),
            edits: self.edit_support.read().map(|e| *e).unwrap_or_default(),
        }
    }

    /// `folder`'s store, opened on first use.
    pub(super) fn store_in(&self, folder: &super::roots::WorkspaceRoot) -> Result<crate::store::Store> {
        let (config, paths) = self.config_and_paths_in(folder)?;
        open_store_once(&folder.store, &paths.root, &config).map_err(|e| request_failed(e.to_string()))
    }

    /// The first folder's store (where chat sessions are kept: a chat belongs to the window, not a folder).
    pub(super) fn store(&self) -> Result<crate::store::Store> {
        let folder = self.primary_root()?;
        self.store_in(&folder)
    }

    /// The store of the folder a command's optional `uri` argument names, else of the first folder.
    pub(super) fn store_for_args(&self, args: &[Value]) -> Result<crate::store::Store> {
        let folder = self.root_for_args(args)?;
        self.store_in(&folder)
    }

    /// The folder a command's optional `uri` argument names, else the first folder.
    pub(super) fn root_for_args(&self, args: &[Value]) -> Result<Arc<super::roots::WorkspaceRoot>> {
        let uri = args.first().and_then(|a| a.get("uri")).and_then(Value::as_str);
        match uri.map(|u| u.parse::<Uri>()) {
            Some(Ok(uri)) => Ok(self.file_in_workspace(&uri, "this command")?.0),
            Some(Err(e)) => Err(Error::invalid_params(format!("\"uri\" is not a URI: {e}"))),
            None => self.primary_root(),
        }
    }

    /// The folder a command's optional `uri` argument names, else every folder (the first one first).
    pub(super) fn roots_for_args(&self, args: &[Value]) -> Result<Vec<Arc<super::roots::WorkspaceRoot>>> {
        match args.first().and_then(|a| a.get("uri")) {
            Some(_) => Ok(vec![self.root_for_args(args)?]),
            None => {
                self.primary_root()?;
                Ok(self.roots())
            }
        }
    }

    /// [`Backend::store_in`] as a closure to run on a blocking thread.
    pub(super) fn store_opener_in(
        &self,
        folder: &super::roots::WorkspaceRoot,
    ) -> Result<impl FnOnce() -> std::result::Result<crate::store::Store, crate::store::StoreError> + Send + 'static>
    {
        let (config, paths) = self.config_and_paths_in(folder)?;
        let slot = folder.store.clone();
        Ok(move || open_store_once(&slot, &paths.root, &config))
    }

    pub(super) fn encoding(&self) -> PositionEncoding {
        self.encoding.read().map(|e| *e).unwrap_or_default()
    }

    pub(super) fn settings(&self) -> Option<Arc<Settings>> {
        self.settings.read().ok().and_then(|s| s.clone())
    }

    /// Loads configuration from files, env and `init_options`; on error keeps the old one.
    pub(super) fn load_settings(&self, init_options: Option<Value>) -> std::result::Result<(), String> {
        let workspace = self.roots.read().ok().and_then(|r| r.primary()).map(|r| r.root.clone());
        let settings = build_settings(workspace, init_options, &self.options.model_factory)?;
        self.report_trust(&settings.loaded.trust);
        if let Ok(mut s) = self.settings.write() {
            *s = Some(Arc::new(settings));
        }
        Ok(())
    }

    pub(super) fn show_error_later(&self, message: String) {
        tracing::error!("{message}");
        let client = self.client.clone();
        tokio::spawn(async move { client.show_message(MessageType::ERROR, message).await });
    }

    /// `tinycoder/debugDocument`: the server's text and version of an open document.
    pub async fn debug_document(&self, params: DebugDocumentParams) -> Result<DebugDocumentResult> {
        let enc = self.encoding();
        let docs = self.docs.lock().map_err(lock_err)?;
        let key = uri_key(&params.text_document.uri);
        let open = docs.get(&key).ok_or_else(|| Error::invalid_params(format!("document {key} is not open")))?;
        Ok(DebugDocumentResult {
            uri: key,
            version: open.doc.version(),
            language_id: open.doc.language_id().to_string(),
            encoding: enc.as_lsp_str(),
            text: open.doc.text(),
            has_syntax_tree: open.tree.is_some(),
        })
    }

    /// `window/workDoneProgress/cancel`: cancels the job behind the token.
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        let id = match params.token {
            NumberOrString::String(s) => s,
            NumberOrString::Number(n) => n.to_string(),
        };
        if !self.jobs.cancel(&id) {
            tracing::debug!(%id, "progress cancel for a job that is not running");
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered: Vec<String> = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .map(|v| v.iter().map(|e| e.as_str().to_string()).collect())
            .unwrap_or_default();
        let enc = PositionEncoding::negotiate(&offered);
        if let Ok(mut e) = self.encoding.write() {
            *e = enc;
        }
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        self.progress_supported.store(progress, Ordering::Relaxed);
        let edit = params.capabilities.workspace.as_ref().and_then(|w| w.workspace_edit.as_ref());
        let support = super::agent_flow::EditSupport {
            document_changes: edit.and_then(|e| e.document_changes).unwrap_or(false),
            change_annotations: edit.and_then(|e| e.change_annotation_support.as_ref()).is_some(),
            show_document: params
                .capabilities
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            delete_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Delete)),
            input_text: params
                .capabilities
                .experimental
                .as_ref()
                .is_some_and(|x| x.get("tinycoderInputText") == Some(&Value::Bool(true))),
        };
        if let Ok(mut e) = self.edit_support.write() {
            *e = support;
        }
        let text_caps = params.capabilities.text_document.as_ref();
        self.completions.set_client_inline(text_caps.is_some_and(|t| t.inline_completion.is_some()));
        let mut folders: Vec<PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .collect();
        #[allow(deprecated)]
        if folders.is_empty() {
            folders.extend(params.root_uri.as_ref().and_then(|u| u.to_file_path().map(|p| p.into_owned())));
        }
        if !folders.is_empty() {
            if let Ok(mut roots) = self.roots.write() {
                // The client's folders replace the command line's.
                *roots = Default::default();
                for folder in folders {
                    roots.add(folder);
                }
            }
        }
        let init_options = meaningful_options(params.initialization_options.clone());
        if let Ok(mut o) = self.init_options.lock() {
            *o = init_options.clone();
        }
        if let Err(message) = self.load_settings(init_options) {
            // Start anyway on the defaults, and say why.
            self.show_error_later(format!("{message}; using the defaults"));
            if let Err(e) = self.load_settings(None) {
                return Err(request_failed(e));
            }
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::from(enc.as_lsp_str().to_string())),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![
                        CodeActionKind::QUICKFIX,
                        CodeActionKind::REFACTOR_REWRITE,
                        CodeActionKind::from(super::code_actions::FIX_ALL_KIND),
                    ]),
                    work_done_progress_options: WorkDoneProgressOptions { work_done_progress: Some(true) },
                    // Every action's work is a command with progress; nothing is left to resolve.
                    resolve_provider: Some(false),
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: command_names(),
                    work_done_progress_options: WorkDoneProgressOptions { work_done_progress: Some(true) },
                }),
                document_symbol_provider: Some(OneOf::Left(true)),
                inline_completion_provider: Some(OneOf::Right(InlineCompletionOptions::default())),
                completion_provider: Some(CompletionOptions::default()),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "tinycoder".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::info!(encoding = self.encoding().as_lsp_str(), "tinycoder language server initialized");
        self.ask_about_trust();
        self.read_folder_configs(&self.roots());
        for folder in self.roots() {
            self.start_index(folder.clone());
            self.ask_about_unfinished_tasks(&folder);
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.options.shutdown_received.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let td = params.text_document;
        let path = td.uri.to_file_path().map(|p| p.into_owned());
        match self.docs.lock() {
            Ok(mut docs) => docs.open(&uri_key(&td.uri), path.as_deref(), &td.language_id, td.version, &td.text),
            Err(_) => tracing::error!("document store unavailable; didOpen dropped"),
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let enc = self.encoding();
        let changes: Vec<_> = params.content_changes.into_iter().map(to_text_change).collect();
        match self.docs.lock() {
            Ok(mut docs) => {
                docs.change(&uri_key(&params.text_document.uri), params.text_document.version, &changes, enc)
            }
            Err(_) => tracing::error!("document store unavailable; didChange dropped"),
        }
        let folder = params.text_document.uri.to_file_path().and_then(|p| self.roots.read().ok()?.holding(&p));
        if let Some(folder) = folder {
            folder.mark_dirty(uri_key(&params.text_document.uri));
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Ok(mut docs) = self.docs.lock() {
            docs.close(&uri_key(&params.text_document.uri));
        }
        self.completions.forget(&uri_key(&params.text_document.uri));
        let Some(path) = params.text_document.uri.to_file_path() else { return };
        let index = self.roots.read().ok().and_then(|r| r.holding(&path)).and_then(|f| f.index.get());
        if let Some(index) = index {
            index.close_buffer(&path);
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Settings may come wrapped in a "tinycoder" section (VS Code style) or bare.
        let settings = match params.settings {
            Value::Object(mut m) if m.contains_key("tinycoder") => meaningful_options(m.remove("tinycoder")),
            other => meaningful_options(Some(other)),
        };
        let options = match settings {
            Some(s) => Some(s),
            None => self.init_options.lock().ok().and_then(|o| o.clone()),
        };
        match self.load_settings(options.clone()) {
            Ok(()) => {
                if let Ok(mut o) = self.init_options.lock() {
                    *o = options;
                }
                tracing::info!("configuration reloaded");
                self.ask_about_trust();
                self.read_folder_configs(&self.roots());
            }
            Err(message) => self.show_error_later(format!("{message}; keeping the previous configuration")),
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        self.workspace_folders_changed(params);
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let enc = self.encoding();
        let mut docs = self.docs.lock().map_err(lock_err)?;
        let key = uri_key(&params.text_document.uri);
        let Some(open) = docs.get_mut(&key) else {
            return Err(Error::invalid_params(format!("document {key} is not open")));
        };
        let (symbols, _) = open.symbols();
        Ok(Some(DocumentSymbolResponse::Nested(outline(&open.doc, &symbols, enc))))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let version =
            self.docs.lock().map_err(lock_err)?.get(&uri_key(&params.text_document.uri)).map(|o| o.doc.version());
        Ok(Some(list_actions(
            &params.text_document.uri,
            version,
            params.range,
            &params.context.diagnostics,
            params.context.only.as_deref(),
        )))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        commands::execute(self, &params.command, params.arguments).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        self.completion_items(params).await
    }
}
