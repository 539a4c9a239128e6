//! `workspace/executeCommand`: the command list and its dispatch. Wiring a flow
//! in = one match arm in [`execute`] calling the layer that owns it.

use super::server::Backend;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

/// One tinycoder command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandId {
    Fix,
    FixAll,
    Edit,
    Ask,
    Explain,
    Document,
    GenerateTests,
    RunTests,
    Index,
    MemorySearch,
    MemoryDelete,
    Cancel,
    Tasks,
    Commit,
    Undo,
    Run,
}

impl CommandId {
    /// Every command, as advertised in `executeCommandProvider`.
    pub const ALL: [CommandId; 16] = [
        Self::Fix,
        Self::FixAll,
        Self::Edit,
        Self::Ask,
        Self::Explain,
        Self::Document,
        Self::GenerateTests,
        Self::RunTests,
        Self::Index,
        Self::MemorySearch,
        Self::MemoryDelete,
        Self::Cancel,
        Self::Tasks,
        Self::Commit,
        Self::Undo,
        Self::Run,
    ];

    /// The command's LSP name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fix => "tinycoder.fix",
            Self::FixAll => "tinycoder.fixAll",
            Self::Edit => "tinycoder.edit",
            Self::Ask => "tinycoder.ask",
            Self::Explain => "tinycoder.explain",
            Self::Document => "tinycoder.document",
            Self::GenerateTests => "tinycoder.generateTests",
            Self::RunTests => "tinycoder.runTests",
            Self::Index => "tinycoder.index",
            Self::MemorySearch => "tinycoder.memory.search",
            Self::MemoryDelete => "tinycoder.memory.delete",
            Self::Cancel => "tinycoder.cancel",
            Self::Tasks => "tinycoder.tasks",
            Self::Commit => "tinycoder.commit",
            Self::Undo => "tinycoder.undo",
            Self::Run => "tinycoder.run",
        }
    }

    /// The command named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Every command name.
pub fn command_names() -> Vec<String> {
    CommandId::ALL.iter().map(|c| c.name().to_string()).collect()
}

/// LSP `RequestFailed`: the request was valid but could not be done.
pub const REQUEST_FAILED: i64 = -32803;

/// A JSON-RPC error with the LSP `RequestFailed` code and `message`.
pub fn request_failed(message: impl Into<String>) -> Error {
    Error { code: ErrorCode::ServerError(REQUEST_FAILED), message: message.into().into(), data: None }
}

/// A command's one string argument, given bare (`["x"]`) or by name (`[{"key": "x"}]`).
pub fn string_arg(args: &[Value], key: &str) -> Option<String> {
    let first = args.first()?;
    first.as_str().or_else(|| first.get(key).and_then(Value::as_str)).map(str::to_string)
}

/// Runs `name` with `args`.
pub async fn execute(backend: &Backend, name: &str, args: Vec<Value>) -> Result<Option<Value>> {
    let Some(cmd) = CommandId::from_name(name) else {
        return Err(Error::invalid_params(format!(
            "unknown command `{name}`; tinycoder knows: {}",
            command_names().join(", ")
        )));
    };
    match cmd {
        CommandId::Cancel => {
            let id = string_arg(&args, "jobId").ok_or_else(|| {
                Error::invalid_params("tinycoder.cancel needs a job id: [\"<id>\"] or [{\"jobId\": \"<id>\"}]")
            })?;
            let cancelled = backend.jobs().cancel(&id);
            Ok(Some(json!({ "jobId": id, "cancelled": cancelled })))
        }
        CommandId::Fix => super::agent_flow::fix(backend, &args).await,
        CommandId::FixAll => super::agent_flow::fix_all(backend, &args).await,
        CommandId::Run => super::plan_flow::run(backend, &args).await,
        CommandId::Edit => super::edit_flows::edit(backend, &args).await,
        CommandId::Document => super::edit_flows::document(backend, &args).await,
        CommandId::GenerateTests => super::edit_flows::generate_tests(backend, &args).await,
        CommandId::Explain => super::answer_flow::explain(backend, &args).await,
        CommandId::Ask => super::answer_flow::ask(backend, &args).await,
        CommandId::RunTests => super::flows::run_tests(backend, &args).await,
        CommandId::Index => super::flows::index(backend, &args).await,
        CommandId::Tasks => super::flows::tasks(backend, &args).await,
        CommandId::MemorySearch => super::flows::memory_search(backend, &args).await,
        CommandId::MemoryDelete => super::flows::memory_delete(backend, &args).await,
        CommandId::Undo => super::undo_flow::undo(backend, &args).await,
        CommandId::Commit => super::undo_flow::commit(backend, &args).await,
    }
}
