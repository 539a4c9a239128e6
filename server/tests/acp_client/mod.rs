//! A bare ACP client for tests: starts `tinycoder acp` with its cache, data and
//! user config inside a temporary home, writes newline-delimited JSON-RPC and
//! reads the agent's messages on a thread, answering the agent's own requests
//! (`fs/read_text_file`, `fs/write_text_file`, `session/request_permission`)
//! from the disk and a fixed permission choice.
#![allow(dead_code)] // each test binary uses a different part

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A running `tinycoder acp` and what it sent.
pub struct AcpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: u64,
    /// Messages read but not yet taken (notifications, answers to other requests).
    pub inbox: VecDeque<Value>,
    /// Every `session/update` seen, in order.
    pub updates: Vec<Value>,
    /// The option the client picks when asked for permission.
    pub permission_answer: String,
    /// Where its cache, data and (absent) user config live.
    pub home: std::path::PathBuf,
    _owned_home: Option<tempfile::TempDir>,
}

impl AcpClient {
    /// Starts the agent in a fresh temporary home, with `env` added.
    pub fn spawn(env: &[(String, String)]) -> Self {
        let owned = tempfile::tempdir().expect("temp home");
        let mut c = Self::spawn_in(owned.path(), env);
        c._owned_home = Some(owned);
        c
    }

    /// Starts the agent with its cache, data and user config under `home`, with `env` added.
    pub fn spawn_in(home: &std::path::Path, env: &[(String, String)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tinycoder"));
        cmd.arg("acp")
            .env("TINYCODER_CACHE_DIR", home.join("cache"))
            .env("TINYCODER_DATA_DIR", home.join("data"))
            .env("TINYCODER_CONFIG", home.join("no-user-config.toml"))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start tinycoder acp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            break;
                        }
                    }
                    Err(e) => panic!("the agent wrote a line that is not JSON ({e}): {line}"),
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            rx,
            next_id: 1,
            inbox: VecDeque::new(),
            updates: Vec::new(),
            permission_answer: "allow_once".into(),
            home: home.to_path_buf(),
            _owned_home: None,
        }
    }

    /// Writes one raw line (no framing beyond the newline).
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush())
            .expect("write");
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Sends a request and returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// The next message within `timeout`, answering the agent's requests on the way.
    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        let m = self.rx.recv_timeout(timeout).ok()?;
        if m["method"] == "session/update" {
            self.updates.push(m["params"].clone());
        }
        if m.get("id").is_some() && m.get("method").is_some() {
            self.answer(&m);
        }
        Some(m)
    }

    fn answer(&mut self, m: &Value) {
        let p = &m["params"];
        let result = match m["method"].as_str().unwrap_or("") {
            "fs/read_text_file" => match std::fs::read_to_string(p["path"].as_str().unwrap_or("")) {
                Ok(content) => json!({"content": content}),
                Err(e) => {
                    let err = json!({"code": -32002, "message": e.to_string()});
                    return self.send_raw(&json!({"jsonrpc": "2.0", "id": m["id"], "error": err}).to_string());
                }
            },
            "fs/write_text_file" => {
                std::fs::write(p["path"].as_str().unwrap_or(""), p["content"].as_str().unwrap_or("")).expect("write");
                json!({})
            }
            "session/request_permission" => {
                json!({"outcome": {"outcome": "selected", "optionId": self.permission_answer}})
            }
            _ => {
                let err = json!({"code": -32601, "message": "not supported by this test client"});
                return self.send_raw(&json!({"jsonrpc": "2.0", "id": m["id"], "error": err}).to_string());
            }
        };
        self.send_raw(&json!({"jsonrpc": "2.0", "id": m["id"], "result": result}).to_string());
    }

    /// Waits for the answer to request `id` (other messages go to the inbox); `Err` holds a JSON-RPC error.
    pub fn wait(&mut self, id: u64, timeout: Duration) -> Result<Value, Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.recv(left).unwrap_or_else(|| panic!("no answer to request {id} in {timeout:?}"));
            if m["id"] == json!(id) && m.get("method").is_none() {
                return match m.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(m["result"].clone()),
                };
            }
            self.inbox.push_back(m);
        }
    }

    /// Sends a request and waits for its answer.
    pub fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, Value> {
        let id = self.send_request(method, params);
        self.wait(id, timeout)
    }

    /// `initialize` with file-system capabilities.
    pub fn initialize(&mut self) -> Value {
        let params =
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}});
        self.request("initialize", params, Duration::from_secs(30)).expect("initialize")
    }

    /// True while the agent process runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Closes stdin and waits for the agent to end.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the agent did not end after stdin closed");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for AcpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
