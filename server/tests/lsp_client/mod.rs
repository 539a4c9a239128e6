//! A real LSP client for the tests: spawns the built `tinycoder lsp`, speaks
//! JSON-RPC with Content-Length framing over its stdio as an editor does, and
//! mirrors document text with a naive reference of LSP positions.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long any single answer may take before the test fails (a hang guard, not a timing assertion).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A running server and the client end of its stdio.
pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications and server requests received while waiting for responses.
    pub inbox: VecDeque<Value>,
    /// Results to answer server→client requests with, by method (default: `null`).
    pub replies: std::collections::HashMap<String, Value>,
    /// One-time results by method, used in order before `replies`.
    pub reply_queue: std::collections::HashMap<String, VecDeque<Value>>,
    _dirs: tempfile::TempDir,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    r.read_exact(&mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

impl LspClient {
    /// Starts `tinycoder lsp` with a private cache/data/config environment.
    pub fn spawn() -> Self {
        Self::spawn_in(tempfile::tempdir().expect("temp dir"))
    }

    /// Starts `tinycoder lsp` in `dirs` (workspace root, with `cache/` and `data/` inside), e.g. to restart
    /// a server on the workspace of an earlier one.
    pub fn spawn_in(dirs: tempfile::TempDir) -> Self {
        Self::spawn_with_env(dirs, &[])
    }

    /// [`LspClient::spawn_in`] with more environment variables (they win over the defaults).
    pub fn spawn_with_env(dirs: tempfile::TempDir, env: &[(String, String)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
            .arg("lsp")
            .env("TINYCODER_CACHE_DIR", dirs.path().join("cache"))
            .env("TINYCODER_DATA_DIR", dirs.path().join("data"))
            .env("TINYCODER_CONFIG", dirs.path().join("no-user-config.toml"))
            // A failing run can be re-run with the server's log: TINYCODER_TEST_SERVER_LOG=info.
            .env("RUST_LOG", std::env::var("TINYCODER_TEST_SERVER_LOG").unwrap_or_else(|_| "warn".into()))
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(dirs.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn tinycoder lsp");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            rx,
            next_id: 0,
            inbox: VecDeque::new(),
            replies: Default::default(),
            reply_queue: Default::default(),
            _dirs: dirs,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes raw bytes to the server (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush");
    }

    /// Sends one framed JSON-RPC message.
    pub fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).expect("json");
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend_from_slice(&body);
        self.send_raw(&framed);
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id without waiting.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }
    /// The next message within 5 s (`Null` when none came), failing the test once
    /// `deadline` passes without the thing it waits for (`what`).
    pub fn next_before(&mut self, deadline: Instant, what: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        self.recv(left.min(Duration::from_secs(5))).unwrap_or_else(|| {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; inbox, oldest first:\n{}",
                inbox_summary(&self.inbox)
            );
            Value::Null
        })
    }

    /// The edit of the next `workspace/applyEdit` before `deadline`; other messages are kept
    /// in the inbox, and an error or warning shown to the user fails the test.
    pub fn next_apply_edit(&mut self, deadline: Instant) -> Value {
        loop {
            let m = self.next_before(deadline, "workspace/applyEdit");
            if m["method"] == "window/showMessage" && m["params"]["type"].as_u64() <= Some(2) {
                panic!("the fix failed: {m:#}");
            }
            if m["method"] == "workspace/applyEdit" {
                return m["params"]["edit"].clone();
            }
            if !m.is_null() {
                self.inbox.push_back(m);
            }
        }
    }

    /// Runs the tests (they must fail), waits for the diagnostics of the test file
    /// `test_rel`, lists the code actions there as an editor's light bulb does and runs
    /// the quick-fix: the diagnostic and the command's answer.
    pub fn start_test_quick_fix(&mut self, test_rel: &str) -> (Value, Value) {
        let root = self.root().to_path_buf();
        self.start_test_quick_fix_in(&root, test_rel)
    }

    /// [`LspClient::start_test_quick_fix`] for a test of the workspace folder `folder`.
    pub fn start_test_quick_fix_in(&mut self, folder: &std::path::Path, test_rel: &str) -> (Value, Value) {
        let test_uri = file_uri(folder, test_rel);
        let red = self
            .request(
                "workspace/executeCommand",
                json!({"command": "tinycoder.runTests", "arguments": [{"uri": test_uri}]}),
            )
            .expect("runTests");
        assert_eq!(red["passed"], false, "{red:#}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let diagnostic = loop {
            let found = self
                .inbox
                .iter()
                .rev()
                .find(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == test_uri)
                .cloned();
            if let Some(m) = found {
                break m["params"]["diagnostics"][0].clone();
            }
            let m = self.next_before(deadline, "the test diagnostics");
            self.inbox.push_back(m);
        };
        let actions = self
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": test_uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
            )
            .expect("codeAction");
        let quickfix =
            actions.as_array().unwrap().iter().find(|a| a["kind"] == "quickfix").cloned().expect("a quick-fix");
        let started = self
            .request(
                "workspace/executeCommand",
                json!({"command": quickfix["command"]["command"], "arguments": quickfix["command"]["arguments"]}),
            )
            .expect("tinycoder.fix starts");
        (diagnostic, started)
    }

    /// Receives the next message, answering server requests the way an editor would.
    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        match self.rx.recv_timeout(timeout) {
            Ok(msg) => {
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    // A server→client request (e.g. window/workDoneProgress/create): accept it.
                    let id = msg["id"].clone();
                    let method = msg["method"].as_str().unwrap_or("");
                    let queued = self.reply_queue.get_mut(method).and_then(|q| q.pop_front());
                    let result = queued.or_else(|| self.replies.get(method).cloned()).unwrap_or(Value::Null);
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
                }
                Some(msg)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the response to `id` (it may already be in the inbox, kept there while
    /// another request was waited for); other messages go to the inbox.
    pub fn wait_response(&mut self, id: i64) -> Result<Value, Value> {
        let answer = |msg: &Value| msg.get("id") == Some(&json!(id)) && msg.get("method").is_none();
        if let Some(i) = self.inbox.iter().position(answer) {
            return result_of(&self.inbox.remove(i).expect("found above"));
        }
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self.recv(left).unwrap_or_else(|| panic!("no response to request {id} (server hung or died)"));
            if answer(&msg) {
                return result_of(&msg);
            }
            self.inbox.push_back(msg);
        }
    }

    /// Sends a request and waits for its result (`Err` = the JSON-RPC error object).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.request_async(method, params);
        self.wait_response(id)
    }

    /// `initialize` (+ `initialized`) offering `encodings` and the given initializationOptions,
    /// as an editor that can preview annotated workspace edits and show documents.
    pub fn initialize(&mut self, encodings: &[&str], init_options: Value) -> Value {
        self.initialize_with(encodings, init_options, true)
    }

    /// [`LspClient::initialize`]; `edit_previews = false` plays an editor without
    /// versioned document changes and change annotations.
    pub fn initialize_with(&mut self, encodings: &[&str], init_options: Value, edit_previews: bool) -> Value {
        self.initialize_full(encodings, init_options, edit_previews, edit_previews)
    }

    /// [`LspClient::initialize_with`], saying separately whether the editor can show documents.
    pub fn initialize_full(
        &mut self,
        encodings: &[&str],
        init_options: Value,
        edit_previews: bool,
        show_document: bool,
    ) -> Value {
        let root = self._dirs.path().to_path_buf();
        let root_uri = format!("file://{}", root.display());
        let result = self
            .request(
                "initialize",
                json!({
                    "processId": std::process::id(),
                    "rootUri": root_uri,
                    "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
                    "initializationOptions": init_options,
                    "capabilities": {
                        "general": {"positionEncodings": encodings},
                        "window": {"workDoneProgress": true, "showDocument": {"support": show_document}},
                        "experimental": {"tinycoderInputText": true},
                        "workspace": {"applyEdit": true, "workspaceEdit": if edit_previews {
                            json!({"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}, "resourceOperations": ["create", "rename", "delete"]})
                        } else {
                            json!({})
                        }},
                        "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "refactor.rewrite"]}}}}
                    }
                }),
            )
            .expect("initialize succeeds");
        self.notify("initialized", json!({}));
        result
    }

    /// The workspace directory (a temp dir).
    pub fn root(&self) -> &std::path::Path {
        self._dirs.path()
    }

    /// `shutdown` then `exit`; returns the workspace directory for a later server.
    pub fn shutdown_keeping_dirs(mut self) -> tempfile::TempDir {
        let status = {
            self.request("shutdown", Value::Null).expect("shutdown succeeds");
            self.notify("exit", Value::Null);
            self.wait_exit()
        };
        assert!(status.success(), "{status:?}");
        std::mem::replace(&mut self._dirs, tempfile::tempdir().expect("temp dir"))
    }

    /// Waits up to `timeout` for a message with `method`; it stays in the inbox.
    pub fn wait_for(&mut self, method: &str, timeout: Duration) -> Option<Value> {
        self.wait_matching(timeout, |m| m["method"] == method)
    }

    /// Waits up to `timeout` for a message that satisfies `pick`; it stays in the inbox.
    pub fn wait_matching(&mut self, timeout: Duration, pick: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.inbox.iter().find(|m| pick(m)) {
                return Some(m.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            if let Some(msg) = self.recv(left.min(Duration::from_millis(200))) {
                self.inbox.push_back(msg);
            }
        }
    }

    /// `shutdown` then `exit`; returns the process's exit status.
    pub fn shutdown_and_exit(mut self) -> ExitStatus {
        self.request("shutdown", Value::Null).expect("shutdown succeeds");
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits for the process to end (closing its stdin).
    pub fn wait_exit(&mut self) -> ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().map(|s| s.is_none()).unwrap_or(false)
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Code units of `c` in an LSP encoding name.
pub fn units(c: char, enc: &str) -> usize {
    match enc {
        "utf-8" => c.len_utf8(),
        "utf-32" => 1,
        _ => c.len_utf16(),
    }
}

/// The client's copy of a document, with LSP line rules (`\r\n`, `\r`, `\n`) done naively.
#[derive(Clone, Debug)]
pub struct MirrorDoc {
    pub text: String,
    pub encoding: String,
}

impl MirrorDoc {
    /// Lines as (start char index, content length in chars).
    pub fn lines(&self) -> Vec<(usize, usize)> {
        let chars: Vec<char> = self.text.chars().collect();
        let mut out = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < chars.len() {
            if chars[i] == '\r' && chars.get(i + 1) == Some(&'\n') {
                out.push((start, i - start));
                i += 2;
                start = i;
            } else if chars[i] == '\r' || chars[i] == '\n' {
                out.push((start, i - start));
                i += 1;
                start = i;
            } else {
                i += 1;
            }
        }
        out.push((start, chars.len() - start));
        out
    }

    /// The LSP position of char index `idx`.
    pub fn position(&self, idx: usize) -> (u32, u32) {
        let chars: Vec<char> = self.text.chars().collect();
        let lines = self.lines();
        let line = lines.iter().rposition(|(s, _)| *s <= idx).unwrap_or(0);
        let start = lines[line].0;
        let col: usize = chars[start..idx].iter().map(|c| units(*c, &self.encoding)).sum();
        (line as u32, col as u32)
    }

    /// The LSP position of byte offset `b` (a char boundary).
    pub fn position_of_byte(&self, b: usize) -> (u32, u32) {
        self.position(self.text[..b].chars().count())
    }

    /// Replaces chars `a..b` with `insert`; returns the LSP change event for it.
    pub fn edit(&mut self, a: usize, b: usize, insert: &str) -> Value {
        let (sl, sc) = self.position(a);
        let (el, ec) = self.position(b);
        let chars: Vec<char> = self.text.chars().collect();
        self.text = chars[..a].iter().collect::<String>() + insert + &chars[b..].iter().collect::<String>();
        json!({"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": insert})
    }
}

/// A small deterministic random generator (xorshift), so failures replay.
pub struct Rng(pub u64);

impl Rng {
    /// Next number.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A `file://` URI for `name` under `root`.
pub fn file_uri(root: &std::path::Path, name: &str) -> String {
    format!("file://{}/{}", root.display(), name)
}

/// Applies LSP text edits (positions in `enc`) to `text`, as an editor does.
pub fn apply_text_edits(text: &str, edits: &[Value], enc: &str) -> String {
    let offset = |line: u64, character: u64| -> usize {
        let mut start = 0;
        for _ in 0..line {
            match text[start..].find('\n') {
                Some(i) => start += i + 1,
                None => return text.len(),
            }
        }
        let mut counted = 0;
        for (i, c) in text[start..].char_indices() {
            if counted >= character as usize || c == '\n' {
                return start + i;
            }
            counted += units(c, enc);
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let r = &e["range"];
            let a = offset(r["start"]["line"].as_u64().unwrap(), r["start"]["character"].as_u64().unwrap());
            let b = offset(r["end"]["line"].as_u64().unwrap(), r["end"]["character"].as_u64().unwrap());
            (a, b, e["newText"].as_str().unwrap().to_string())
        })
        .collect();
    spans.sort_by_key(|x| std::cmp::Reverse(x.0));
    let mut out = text.to_string();
    for (a, b, t) in spans {
        out.replace_range(a..b, &t);
    }
    out
}

/// One line per message (method, then the progress or message text), so a timed-out
/// test shows how far the server got even when the output is cut.
fn inbox_summary(inbox: &VecDeque<Value>) -> String {
    inbox
        .iter()
        .map(|m| {
            let p = &m["params"];
            let text = [&p["value"]["message"], &p["value"]["title"], &p["message"], &p["diagnostics"]]
                .into_iter()
                .find(|v| !v.is_null())
                .map(|v| v.to_string())
                .unwrap_or_default();
            let text: String = text.chars().take(300).collect();
            format!("  {} {}", m["method"].as_str().unwrap_or("(reply)"), text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A response's result, or its JSON-RPC error object.
fn result_of(msg: &Value) -> Result<Value, Value> {
    match msg.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
    }
}
