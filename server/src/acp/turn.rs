//! One prompt turn: what the prompt asks (`intent.rs`), then a question
//! answered from retrieved context (streamed as message chunks, ending with the
//! places cited), a fix or an edit through the agent's runtime loop (its events
//! streamed as tool calls, the tested patch written after permission), a
//! request that spans files through the planner (`agent::plan::run_request`, as
//! `tinycoder run`: the plan, each step and the whole patch's tests streamed,
//! the combined patch written after permission file by file), or a test run.
//! The turn's text and reply persist as a chat session turn.

use super::intent::{classify, mentioned_files, Intent};
use super::session::{ClientFs, Session};
use super::sources::{ClientFiles, ClientSources};
use super::updates::{self, message, PlanUpdates};
use super::writes::{WriteOutcome, Writer};
use super::AcpError;
use crate::agent::{
    plan, prepare_answer, AgentEnv, AgentRequest, Location, ReportStatus, TaskOptions, TaskReport, TestSummary,
};
use crate::agent::{Job, JobContext, Workspace};
use crate::config::ModelRole;
use crate::contracts::RuntimeEvent;
use crate::llm::ChatRole;
use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResourceResource, SessionNotification, SessionUpdate, StopReason, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use futures::StreamExt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Everything one turn works with.
pub struct Turn {
    pub files: ClientFiles,
    pub session: Arc<Session>,
    pub fs: ClientFs,
    pub cancel: CancellationToken,
}

impl Turn {
    fn ws(&self) -> &Workspace {
        &self.session.workspace
    }

    fn notify(&self, update: SessionUpdate) {
        let n = SessionNotification::new(self.files.session_id.clone(), update);
        if let Err(e) = self.files.conn.send_notification(n) {
            tracing::warn!("session/update not sent: {}", e.message);
        }
    }

    /// Runs the turn to its end and says why it ended. Failures are told to the user as the reply.
    pub async fn run(self, prompt: Vec<ContentBlock>) -> StopReason {
        let ws = self.session.workspace.clone();
        tokio::select! {
            r = ws.ready() => if let Err(e) = r { tracing::warn!("{e}; retrieval sees what was indexed before") },
            _ = self.cancel.cancelled() => return StopReason::Cancelled,
        }
        let client = self.fs.read.then(|| self.files.clone());
        let timeout = Duration::from_millis(ws.config.acp.read_timeout_ms);
        let sources = Arc::new(ClientSources::new(&ws.root, client, timeout));
        let (text, files) = self.read_prompt(&prompt, &sources);
        let intent = classify(&text, &files, &ws.config.acp, &ws.config.runtime);
        tracing::info!(session = %self.session.id, ?intent, "prompt turn");
        let env = ws.env(sources.clone(), Arc::new(super::human::AcpHuman::new(self.files.clone())));
        let reply = match &intent {
            Intent::Ask { question, file } => self.ask(&env, question, file.as_deref()).await,
            Intent::Test => self.test(&env).await,
            Intent::Fix { target, message } => {
                let request = AgentRequest::Fix {
                    target: target.clone(),
                    message: message.clone(),
                    from_tests: false,
                    origin: None,
                };
                self.agent(&env, &sources, new_job(request)).await
            }
            Intent::Edit { target, instruction } => {
                let request = AgentRequest::Edit {
                    target: target.clone(),
                    instruction: instruction.clone(),
                    comments_only: false,
                };
                self.agent(&env, &sources, new_job(request)).await
            }
            Intent::Document { target } => {
                let (path, line) = (target.path.clone(), target.start_line);
                self.agent(&env, &sources, Job::Document { task_id: new_task_id(), path, line }).await
            }
            Intent::AddTests { target, test_file } => {
                let request = AgentRequest::AddTests { target: target.clone(), test_file: test_file.clone() };
                self.agent(&env, &sources, new_job(request)).await
            }
            Intent::Run { request } => self.planned(&env, &sources, request).await,
        };
        let reply = reply.unwrap_or_else(|e| {
            let said = format!("tinycoder could not finish this turn: {e}");
            self.notify(message(said.clone()));
            said
        });
        self.persist(&text, &reply).await;
        if self.cancel.is_cancelled() {
            StopReason::Cancelled
        } else {
            StopReason::EndTurn
        }
    }

    /// The prompt's text and the files it names: links and embedded files (whose text is the
    /// editor's, remembered as such), then paths written in the text.
    fn read_prompt(&self, prompt: &[ContentBlock], sources: &ClientSources) -> (String, Vec<Location>) {
        let ws = self.ws();
        let mut text = String::new();
        let mut files: Vec<Location> = Vec::new();
        for block in prompt {
            match block {
                ContentBlock::Text(t) => {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(&t.text);
                }
                ContentBlock::ResourceLink(link) => files.extend(self.file_of_uri(&link.uri)),
                ContentBlock::Resource(r) => {
                    if let EmbeddedResourceResource::TextResourceContents(c) = &r.resource {
                        if let Some(loc) = self.file_of_uri(&c.uri) {
                            sources.remember(&loc.path, &c.text);
                            files.push(loc);
                        }
                    }
                }
                _ => {}
            }
        }
        let exists = |rel: &str| ws.root.join(rel).is_file();
        for loc in mentioned_files(&text, &exists) {
            if !files.iter().any(|f| f.path == loc.path) {
                files.push(loc);
            }
        }
        (text, files)
    }

    /// A `file://` URI inside the workspace (with an optional `#L3` or `#L3:9` line range).
    fn file_of_uri(&self, uri: &str) -> Option<Location> {
        let rest = uri.strip_prefix("file://")?;
        let (path, fragment) = rest.split_once('#').unwrap_or((rest, ""));
        let rel = self.ws().relative(std::path::Path::new(&percent_decode(path)))?;
        let lines: Vec<usize> = fragment
            .trim_start_matches('L')
            .split([':', '-'])
            .filter_map(|n| n.trim_start_matches('L').parse().ok())
            .collect();
        Some(match lines.as_slice() {
            [a, z, ..] if *a > 0 && z >= a => Location { path: rel, start_line: *a, end_line: *z },
            [a, ..] if *a > 0 => Location::line(rel, *a),
            _ => Location::file(rel),
        })
    }

    /// A question: the answer streams as message chunks, then the places it drew from.
    async fn ask(&self, env: &AgentEnv, question: &str, file: Option<&str>) -> Result<String, AcpError> {
        let answer = prepare_answer(env, question, file).await?;
        let mut stream = env.model.chat_stream(answer.request, self.cancel.clone()).await?;
        let mut reply = String::new();
        loop {
            let delta = tokio::select! {
                d = stream.next() => d,
                _ = self.cancel.cancelled() => break,
            };
            let Some(delta) = delta else { break };
            let delta = delta?;
            if !delta.is_empty() {
                reply.push_str(&delta);
                self.notify(message(delta));
            }
        }
        if !answer.sources.is_empty() && !self.cancel.is_cancelled() {
            let cited = format!("\n\nSources: {}", answer.sources.join(", "));
            reply.push_str(&cited);
            self.notify(message(cited));
        }
        Ok(reply)
    }

    /// `/test`: the project's tests in the sandbox, as one tool call.
    async fn test(&self, env: &AgentEnv) -> Result<String, AcpError> {
        let summary = self.tests_tool_call(env, "tests", "Run the project's tests").await?;
        let said = summary.headline();
        self.notify(message(said.clone()));
        Ok(said)
    }

    /// Runs the tests (with the files as the user sees them) as tool call `id`.
    async fn tests_tool_call(&self, env: &AgentEnv, id: &str, title: &str) -> Result<TestSummary, AcpError> {
        let id = format!("{}-{id}", uuid::Uuid::new_v4().simple().to_string().get(..8).unwrap_or("turn"));
        self.notify(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), title).kind(ToolKind::Execute).status(ToolCallStatus::InProgress),
        ));
        let summary = crate::agent::run_tests(env, &[], &self.cancel).await;
        let (status, body, locations) = match &summary {
            Ok(s) => {
                let lines: Vec<String> = s
                    .failures
                    .iter()
                    .map(|f| format!("- {}:{} {}: {}", f.file, f.line, f.test, f.message.lines().next().unwrap_or("")))
                    .collect();
                let locs = s
                    .failures
                    .iter()
                    .filter(|f| !f.file.is_empty())
                    .map(|f| updates::location(&self.ws().root, &f.file, u64::from(f.line)))
                    .collect();
                (ToolCallStatus::Completed, format!("{}\n{}", s.headline(), lines.join("\n")), locs)
            }
            Err(e) => (ToolCallStatus::Failed, e.to_string(), Vec::new()),
        };
        let fields = ToolCallUpdateFields::new()
            .status(status)
            .content(vec![updates::text(body.trim_end())])
            .locations(locations);
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
        Ok(summary?)
    }

    /// A fix or an edit through the runtime loop, its events streamed; the tested patch is
    /// written after permission and the tests run again on the user's files.
    async fn agent(&self, env: &AgentEnv, sources: &ClientSources, job: Job) -> Result<String, AcpError> {
        let ws = self.ws();
        let task_id = job.task_id().to_string();
        let options = TaskOptions {
            best_attempt: ws.config.acp.best_attempt,
            origin: "acp".into(),
            session_id: Some(self.session.id.clone()),
        };
        let run = ws.start(job, JobContext::new(env, options, self.cancel.clone()));
        let report =
            self.follow(run, |e| if e.task_id == task_id { updates::project(&ws.root, e) } else { Vec::new() }).await?;
        self.deliver(env, sources, report).await
    }

    /// A request that may span files, through the planner path of `tinycoder run` (same
    /// router, planner and steps): the plan, its steps and the whole patch's tests streamed,
    /// then the combined patch written like a fix's, one permission per file.
    async fn planned(&self, env: &AgentEnv, sources: &ClientSources, request: &str) -> Result<String, AcpError> {
        let ws = self.ws();
        if request.trim().is_empty() {
            let said = "`/run` needs the request in words, like `/run add a timeout parameter to fetch and pass it \
                        from every caller`"
                .to_string();
            self.notify(message(said.clone()));
            return Ok(said);
        }
        // The models are checked first, so a server that is down is said at once, not after the baseline tests.
        let rt = &ws.config.runtime;
        let route = plan::route(request, &plan::known_files(env), rt.plan_min_files as usize, &rt.plan_keywords);
        let mut roles = vec![ModelRole::Coder];
        if matches!(route, plan::Route::Planned { .. }) {
            roles.push(ModelRole::Planner);
        }
        for role in roles {
            let ready = tokio::select! {
                r = env.model.check_ready(role) => r,
                _ = self.cancel.cancelled() => return Ok("cancelled before the request started".into()),
            };
            if let Err(e) = ready {
                let said = format!("The request was not carried out: the model server is not ready: {e}");
                self.notify(message(said.clone()));
                return Ok(said);
            }
        }
        let task_id = uuid::Uuid::new_v4().to_string();
        let options = TaskOptions {
            best_attempt: ws.config.acp.best_attempt,
            origin: "acp".into(),
            session_id: Some(self.session.id.clone()),
        };
        let mut view = PlanUpdates::new(&ws.root, &task_id);
        let run = plan::run_request(env, &task_id, request, None, options, self.cancel.clone());
        let mut outcome = self.follow(run, |e| view.project(e)).await?;
        if outcome.report.status == ReportStatus::Failed {
            outcome.report.summary = format!("The request was not carried out: {}", outcome.report.summary);
        }
        self.deliver(env, sources, outcome.report).await
    }

    /// Drives `run` to its end while the workspace's events go through `project` to the client.
    async fn follow<T>(
        &self,
        run: impl Future<Output = T>,
        mut project: impl FnMut(&RuntimeEvent) -> Vec<SessionUpdate>,
    ) -> T {
        // Subscribed before `run` is first polled, so its first event is seen.
        let mut events = self.ws().bus.subscribe();
        tokio::pin!(run);
        let mut open = true;
        let out = loop {
            tokio::select! {
                biased;
                e = events.recv(), if open => match e {
                    Ok(e) => project(&e).into_iter().for_each(|u| self.notify(u)),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => open = false,
                },
                r = &mut run => break r,
            }
        };
        while let Ok(e) = events.try_recv() {
            project(&e).into_iter().for_each(|u| self.notify(u));
        }
        out
    }

    /// Writes the report's patch (when there is one and the turn was not cancelled) and says how it ended.
    async fn deliver(&self, env: &AgentEnv, sources: &ClientSources, report: TaskReport) -> Result<String, AcpError> {
        let ws = self.ws();
        let mut said = vec![report.summary.clone()];
        if !report.has_patch() || self.cancel.is_cancelled() {
            if !matches!(report.status, ReportStatus::Patched | ReportStatus::NothingToFix) {
                said.extend(report.attempt_log.iter().map(|l| format!("- {l}")));
            }
            let text = said.join("\n");
            self.notify(message(text.clone()));
            return Ok(text);
        }
        said.extend(report.questions.iter().map(|q| format!("Question: {q}")));
        let note = match (&report.status, &report.tests_after) {
            (ReportStatus::BestAttempt, _) => "its tests FAIL".to_string(),
            (_, Some(t)) => format!("tested: {}", t.headline()),
            _ => "syntax checked".to_string(),
        };
        let writer = Writer {
            files: &self.files,
            can_write: self.fs.write,
            root: &ws.root,
            sources,
            decisions: crate::store::PermissionStore::new(ws.store.clone()),
            cancel: &self.cancel,
        };
        let mut written = Vec::new();
        let changes = report.patch.as_ref().map(|p| p.changes.clone()).unwrap_or_default();
        // One file outside the workspace (through a symbolic link out of it) refuses the whole
        // patch before anything is offered or written.
        if let Err(e) = super::writes::refuse_outside(&ws.root, &changes) {
            tracing::warn!("patch refused: {e}");
            said.push(format!("nothing written: {e}"));
            let text = said.join("\n");
            self.notify(message(text.clone()));
            return Ok(text);
        }
        for (i, change) in changes.iter().enumerate() {
            let id = format!("{}-write-{i}", report.task_id.get(..8).unwrap_or(&report.task_id));
            match writer.write(&id, change, &note).await {
                WriteOutcome::Written => written.push(change.path.clone()),
                WriteOutcome::Rejected => said.push(format!("{}: not written (rejected)", change.path)),
                WriteOutcome::Cancelled => said.push(format!("{}: not written (cancelled)", change.path)),
                WriteOutcome::Failed(why) => said.push(format!("{}: not written: {why}", change.path)),
            }
        }
        if !written.is_empty() {
            said.push(format!("written: {}", written.join(", ")));
            if ws.config.acp.rerun_tests_after_write && !self.cancel.is_cancelled() {
                match self.tests_tool_call(env, "tests-after", "Run the tests on your files").await {
                    Ok(t) => said.push(format!("tests on your files: {}", t.headline())),
                    Err(e) => said.push(format!("the tests could not run again: {e}")),
                }
            }
        }
        let text = said.join("\n");
        self.notify(message(text.clone()));
        Ok(text)
    }

    /// Saves the turn in the workspace's chat session (a failure is logged, never shown as the turn's).
    async fn persist(&self, text: &str, reply: &str) {
        let sessions = crate::store::SessionStore::new(self.ws().store.clone());
        let title: String = text.chars().take(60).collect();
        let id = &self.session.id;
        let result = async {
            sessions.ensure(id, &title).await?;
            sessions.append_turn(id, ChatRole::User, text).await?;
            sessions.append_turn(id, ChatRole::Assistant, reply).await
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(session = %id, "turn not persisted: {e}");
        }
    }
}

/// Decodes `%XX` escapes of a URI path.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = || std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex()) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A fresh task id.
fn new_task_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A new task for `request`.
fn new_job(request: AgentRequest) -> Job {
    Job::New { task_id: new_task_id(), request }
}
