//! The language server adapter: the only module that knows LSP types and JSON-RPC.
//!
//! Start reading at [`server::Backend`] (capabilities and handlers); documents
//! live in [`documents::DocumentStore`], code actions in [`code_actions`],
//! commands in [`commands`], progress and cancellation in [`progress`], chat in [`chat`].

pub mod agent_flow;
pub mod answer_flow;
pub mod chat;
mod chat_context;
mod chat_flow;
pub mod code_actions;
pub mod commands;
pub mod convert;
pub mod documents;
pub mod edit_flows;
pub mod flows;
mod folders;
pub mod human;
mod indexing;
pub mod inline_completion;
pub mod patch_edit;
mod plan_flow;
pub mod progress;
mod resume;
mod review;
mod roots;
pub mod server;
pub mod symbols;
pub mod transport;
mod trust;
mod undo_flow;

pub use server::{Backend, ModelClientFactory, ServerOptions};

use tower_lsp_server::{LspService, Server};

/// Size of the in-process pipes between the frame guard and tower-lsp-server.
const PIPE_BYTES: usize = 1 << 20;

/// Serves LSP over `input`/`output` until `exit`; returns whether `shutdown` came first.
/// Frames pass through [`transport`]'s guard, so a malformed message is answered, not fatal.
pub async fn serve<I, O>(input: I, output: O, options: ServerOptions) -> bool
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (guard_to_server, server_in) = tokio::io::duplex(PIPE_BYTES);
    let (server_out, server_to_writer) = tokio::io::duplex(PIPE_BYTES);
    let (frames_tx, frames_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(transport::filter_input(input, guard_to_server, frames_tx.clone()));
    let forward = tokio::spawn(transport::forward_server_frames(server_to_writer, frames_tx));
    let writer = tokio::spawn(transport::write_frames(frames_rx, output));
    let shutdown = options.shutdown_received.clone();
    let (service, socket) = LspService::build(|client| Backend::new(client, options))
        .custom_method("textDocument/inlineCompletion", Backend::inline_completion)
        .custom_method("tinycoder/chat", Backend::chat)
        .custom_method("tinycoder/debugDocument", Backend::debug_document)
        .custom_method("tinycoder/configuration", Backend::configuration)
        .custom_method("window/workDoneProgress/cancel", Backend::work_done_progress_cancel)
        .finish();
    Server::new(server_in, server_out, socket).serve(service).await;
    // The server's output pipe is closed now; let the last frames reach the client.
    let _ = forward.await;
    let _ = writer.await;
    shutdown.load(std::sync::atomic::Ordering::SeqCst)
}
