//! The language server adapter: the only module that knows LSP types and JSON-RPC.
//!
//! Start reading at [`server::Backend`] (capabilities and handlers); documents
//! live in [`documents::DocumentStore`], code actions in [`code_actions`],
//! commands in [`commands`], progress and cancellation in [`progress`], chat in [`chat`].

pub mod chat;
pub mod code_actions;
pub mod commands;
pub mod convert;
pub mod documents;
pub mod progress;
pub mod server;
pub mod symbols;

pub use server::{Backend, ModelClientFactory, ServerOptions};

use tower_lsp_server::{LspService, Server};

/// Serves LSP over `input`/`output` until `exit`; returns whether `shutdown` came first.
pub async fn serve<I, O>(input: I, output: O, options: ServerOptions) -> bool
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let shutdown = options.shutdown_received.clone();
    let (service, socket) = LspService::build(|client| Backend::new(client, options))
        .custom_method("tinycoder/chat", Backend::chat)
        .custom_method("tinycoder/debugDocument", Backend::debug_document)
        .custom_method("window/workDoneProgress/cancel", Backend::work_done_progress_cancel)
        .finish();
    Server::new(input, output, socket).serve(service).await;
    shutdown.load(std::sync::atomic::Ordering::SeqCst)
}
