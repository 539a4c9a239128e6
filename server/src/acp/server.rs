//! The ACP agent over stdio: `initialize`, `authenticate` (nothing to do: no
//! account, no cloud), `session/new`, `session/load` (history replayed from the
//! store), `session/prompt` (a turn, run off the dispatch loop) and
//! `session/cancel`. Malformed JSON, unknown methods and bad parameters are
//! answered with JSON-RPC errors by the SDK; the agent stays up.

use super::session::{ClientFs, Registry, Session};
use super::sources::ClientFiles;
use super::transport;
use super::turn::Turn;
use super::updates::message;
use super::AcpError;
use crate::llm::ChatRole;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, AvailableCommand, AvailableCommandInput,
    AvailableCommandsUpdate, CancelNotification, ContentBlock, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse,
    PromptCapabilities, PromptRequest, PromptResponse, SessionId, SessionNotification, SessionUpdate, TextContent,
    UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, ErrorCode};
use std::path::PathBuf;
use std::sync::Arc;

/// Serves one client over stdin/stdout until it closes the connection.
pub async fn serve() -> Result<(), AcpError> {
    let (stdio, client_closed) = transport::stdio();
    let registry = Arc::new(Registry::default());
    let (on_init, on_new, on_load, on_prompt, on_cancel) =
        (registry.clone(), registry.clone(), registry.clone(), registry.clone(), registry);
    let served = Agent
        .v1()
        .name("tinycoder")
        .on_receive_request(
            async move |req: InitializeRequest, responder: Responder<InitializeResponse>, _cx: ConnectionTo<Client>| {
                let fs = &req.client_capabilities.fs;
                on_init.set_client_fs(ClientFs { read: fs.read_text_file, write: fs.write_text_file });
                responder.respond(initialize_response())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_req: AuthenticateRequest,
                        responder: Responder<AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| { responder.respond(AuthenticateResponse::new()) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder: Responder<NewSessionResponse>, cx: ConnectionTo<Client>| {
                tokio::spawn(new_session(on_new.clone(), req, responder, cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder: Responder<LoadSessionResponse>, cx: ConnectionTo<Client>| {
                tokio::spawn(load_session(on_load.clone(), req, responder, cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder: Responder<PromptResponse>, cx: ConnectionTo<Client>| {
                prompt(&on_prompt, req, responder, cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                match on_cancel.session(&n.session_id.0) {
                    Some(s) if s.cancel() => tracing::info!(session = %s.id, "turn cancelled"),
                    Some(s) => tracing::info!(session = %s.id, "session/cancel: no turn is running"),
                    None => tracing::warn!(
                        "session/cancel names the unknown session `{}`: nothing cancelled (open it with session/new or session/load)",
                        n.session_id.0
                    ),
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(stdio)
        .await;
    match served {
        Ok(()) => Ok(()),
        // Once the client has gone, work still in flight (an update, a cancelled turn's last
        // message) has nobody to reach; that is the normal end of a session, not a failure.
        Err(e) if client_closed.is_set() => {
            tracing::info!("the client closed the connection; unsent messages were dropped: {}", describe(&e));
            Ok(())
        }
        Err(e) => Err(AcpError::Protocol(describe(&e))),
    }
}

/// The SDK's error with its data (the message alone is often just "Internal error").
fn describe(e: &Error) -> String {
    match &e.data {
        Some(data) => format!("{} ({data})", e.message),
        None => e.message.clone(),
    }
}

fn initialize_response() -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true)),
        )
        .agent_info(Implementation::new("tinycoder", env!("CARGO_PKG_VERSION")).title("tinycoder (local models)"))
}

fn failed(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

fn unknown_session(id: &str, what: &str) -> Error {
    Error::new(ErrorCode::RESOURCE_NOT_FOUND, format!("unknown session `{id}`: {what}"))
        .data(serde_json::json!({ "sessionId": id }))
}

/// Opens the workspace off the dispatch loop (store, index), answers, then offers the slash commands.
async fn new_session(
    registry: Arc<Registry>,
    req: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    cx: ConnectionTo<Client>,
) {
    let opened = open(&registry, req.cwd).await;
    let result = match opened {
        Ok(ws) => {
            let id = uuid::Uuid::new_v4().to_string();
            let sessions = crate::store::SessionStore::new(ws.store.clone());
            if let Err(e) = sessions.ensure(&id, "agent panel session").await {
                tracing::warn!(session = %id, "session not stored: {e}");
            }
            let session = registry.add_session(&id, ws);
            let _ = responder.respond(NewSessionResponse::new(SessionId::new(id)));
            offer_commands(&cx, &session);
            return;
        }
        Err(e) => Err(failed(e)),
    };
    let _ = responder.respond_with_result(result);
}

async fn open(registry: &Arc<Registry>, cwd: PathBuf) -> Result<Arc<crate::agent::Workspace>, AcpError> {
    let reg = registry.clone();
    let ws = tokio::task::spawn_blocking(move || reg.workspace(&cwd))
        .await
        .map_err(|e| AcpError::Protocol(format!("opening the workspace stopped: {e}")))??;
    let warm = ws.clone();
    tokio::spawn(async move {
        if let Err(e) = warm.ready().await {
            tracing::warn!("{e}; retrieval sees what was indexed before");
        }
    });
    Ok(ws)
}

/// `session/load`: the stored session's turns as message chunks, then the answer.
async fn load_session(
    registry: Arc<Registry>,
    req: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
    cx: ConnectionTo<Client>,
) {
    let id = req.session_id.0.to_string();
    let ws = match open(&registry, req.cwd).await {
        Ok(ws) => ws,
        Err(e) => return drop(responder.respond_with_error(failed(e))),
    };
    let sessions = crate::store::SessionStore::new(ws.store.clone());
    let stored = async { Ok::<_, crate::store::StoreError>((sessions.get(&id).await?, sessions.turns(&id, 0).await?)) };
    let (session, turns) = match stored.await {
        Ok((Some(s), turns)) => (s, turns),
        Ok((None, _)) => {
            let why = format!("no stored session with this id in {}", ws.root.display());
            return drop(responder.respond_with_error(unknown_session(&id, &why)));
        }
        Err(e) => return drop(responder.respond_with_error(failed(e))),
    };
    let sid = SessionId::new(id.clone());
    if !session.summary.trim().is_empty() {
        let n =
            SessionNotification::new(sid.clone(), message(format!("(earlier in this session) {}", session.summary)));
        let _ = cx.send_notification(n);
    }
    for t in turns {
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(t.content)));
        let update = match t.role {
            ChatRole::User => SessionUpdate::UserMessageChunk(chunk),
            _ => SessionUpdate::AgentMessageChunk(chunk),
        };
        let _ = cx.send_notification(SessionNotification::new(sid.clone(), update));
    }
    let session = registry.add_session(&id, ws);
    let _ = responder.respond(LoadSessionResponse::new());
    offer_commands(&cx, &session);
}

/// The slash commands every session understands.
fn offer_commands(cx: &ConnectionTo<Client>, session: &Session) {
    let hint = |h: &str| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h));
    let commands = vec![
        AvailableCommand::new("fix", "Fix the first failing test, or FILE:LINE with the error")
            .input(hint("[FILE[:LINE]] [error]")),
        AvailableCommand::new("edit", "Change FILE[:START-END] as you say, checked by the tests")
            .input(hint("FILE[:START-END] instruction")),
        AvailableCommand::new("run", "Carry out a request that may span files: planned in steps, each tested")
            .input(hint("request")),
        AvailableCommand::new("ask", "Answer from the project's code, citing file:line").input(hint("question")),
        AvailableCommand::new("test", "Run the project's tests in the sandbox"),
    ];
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
    if let Err(e) = cx.send_notification(SessionNotification::new(SessionId::new(session.id.clone()), update)) {
        tracing::warn!("available commands not sent: {}", e.message);
    }
}

/// Starts a turn off the dispatch loop (so `session/cancel` and the client's answers get through).
fn prompt(
    registry: &Registry,
    req: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let id = req.session_id.0.to_string();
    let Some(session) = registry.session(&id) else {
        return responder
            .respond_with_error(unknown_session(&id, "call session/new (or session/load) before session/prompt"));
    };
    let Some(turn) = session.begin_turn() else {
        return responder.respond_with_error(Error::new(
            ErrorCode::INVALID_REQUEST,
            "a prompt turn is already running in this session; wait for it or send session/cancel",
        ));
    };
    let t = Turn {
        files: ClientFiles { conn: cx, session_id: req.session_id.clone() },
        session: session.clone(),
        fs: registry.client_fs(),
        cancel: turn.cancel,
    };
    tokio::spawn(async move {
        let stop = t.run(req.prompt).await;
        session.end_turn(turn.number);
        if let Err(e) = responder.respond(PromptResponse::new(stop)) {
            tracing::warn!("the prompt's answer was not sent: {}", e.message);
        }
    });
    Ok(())
}
