//! HTTP plumbing shared by both adapters: the client with its connect
//! timeout, error mapping, and the streaming driver that applies the
//! first-token / idle / whole-request timeouts and cancellation.

use super::wire::{clip, error_message, StreamDecoder, StreamEvent};
use super::{ChatStream, LlmError};
use crate::config::BackendConfig;
use futures::StreamExt;
use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Timeouts of one backend, from `[backend]`.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub first_token: Duration,
    pub idle: Duration,
    pub request: Duration,
}

impl Timeouts {
    /// The timeouts configured in `[backend]`.
    pub fn from_config(b: &BackendConfig) -> Self {
        Self {
            connect: Duration::from_millis(b.connect_timeout_ms),
            first_token: Duration::from_millis(b.first_token_timeout_ms),
            idle: Duration::from_millis(b.idle_timeout_ms),
            request: Duration::from_millis(b.request_timeout_ms),
        }
    }
}

/// A reqwest client that only bounds connecting; streams are bounded by the driver.
pub fn build_client(t: &Timeouts) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(t.connect)
        .build()
        .map_err(|e| LlmError::Protocol(format!("cannot build the HTTP client: {e}")))
}

/// Maps a transport error to what the user can do about it.
pub fn map_reqwest(err: reqwest::Error, url: &str, what: &str, after: Duration) -> LlmError {
    if err.is_connect() {
        LlmError::ServerDown { url: url.to_string(), detail: root_cause(&err) }
    } else if err.is_timeout() {
        LlmError::Timeout { what: what.to_string(), after_ms: after.as_millis() as u64 }
    } else if err.is_decode() {
        LlmError::Protocol(format!("{what}: {}", root_cause(&err)))
    } else {
        LlmError::Server { status: err.status().map(|s| s.as_u16()), message: format!("{what}: {}", root_cause(&err)) }
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    msg
}

/// The message inside an error body (`{"error": "..."}` or `{"error": {"message": ...}}`), else the body.
pub fn body_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| error_message(&v))
        .unwrap_or_else(|| clip(body.trim()))
}

/// Sends `req`, racing it against cancellation and `limit`; a non-2xx status becomes `Err((status, message))`.
pub async fn send(
    req: reqwest::RequestBuilder,
    url: &str,
    what: &str,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<Result<reqwest::Response, (u16, String)>, LlmError> {
    let resp = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        _ = tokio::time::sleep(limit) => return Err(LlmError::Timeout { what: what.to_string(), after_ms: limit.as_millis() as u64 }),
        r = req.send() => r.map_err(|e| map_reqwest(e, url, what, limit))?,
    };
    if resp.status().is_success() {
        return Ok(Ok(resp));
    }
    let status = resp.status().as_u16();
    let body = tokio::select! {
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        _ = tokio::time::sleep(limit) => String::new(),
        b = resp.text() => b.unwrap_or_default(),
    };
    Ok(Err((status, body_message(&body))))
}

/// Reads a whole JSON body, racing cancellation and `limit`.
pub async fn read_json(
    resp: reqwest::Response,
    url: &str,
    what: &str,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<serde_json::Value, LlmError> {
    let bytes = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        _ = tokio::time::sleep(limit) => return Err(LlmError::Timeout { what: what.to_string(), after_ms: limit.as_millis() as u64 }),
        b = resp.bytes() => b.map_err(|e| map_reqwest(e, url, what, limit))?,
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| LlmError::Protocol(format!("{what}: not JSON ({e}): {}", clip(&String::from_utf8_lossy(&bytes)))))
}

/// What a stream keeps beside its bytes: the model gate's lock and where the
/// server's prompt accounting goes.
pub struct StreamHold {
    pub guard: Option<Box<dyn Send + Sync>>,
    pub usage: Option<super::PromptUsageSink>,
}

type Body = Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

struct Driver<D> {
    body: Body,
    decoder: D,
    queue: VecDeque<Result<String, LlmError>>,
    cancel: CancellationToken,
    timeouts: Timeouts,
    url: String,
    started: Instant,
    last_chunk: Instant,
    got_text: bool,
    finished: bool,
    /// Held for the stream's life: the model gate's lock (released on end or drop).
    _guard: Option<Box<dyn Send + Sync>>,
    /// Where the server's prompt accounting goes.
    usage: Option<super::PromptUsageSink>,
}

/// Turns a successful streaming response into a [`ChatStream`] of text deltas.
///
/// The stream ends on the server's done marker, on an error (yielded once), on
/// cancellation (yields [`LlmError::Cancelled`]) or on a timeout. Dropping it
/// drops the response, which closes the connection and stops generation.
pub fn drive<D: StreamDecoder>(
    resp: reqwest::Response,
    decoder: D,
    cancel: CancellationToken,
    timeouts: Timeouts,
    url: &str,
    started: Instant,
    held: StreamHold,
) -> ChatStream {
    let state = Driver {
        body: Box::pin(resp.bytes_stream()),
        decoder,
        queue: VecDeque::new(),
        cancel,
        timeouts,
        url: url.to_string(),
        started,
        last_chunk: Instant::now(),
        got_text: false,
        finished: false,
        _guard: held.guard,
        usage: held.usage,
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        let item = s.next_item().await?;
        Some((item, s))
    }))
}

impl<D: StreamDecoder> Driver<D> {
    async fn next_item(&mut self) -> Option<Result<String, LlmError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                if item.is_err() {
                    self.stop();
                }
                return Some(item);
            }
            if self.finished {
                return None;
            }
            let (deadline, what, limit) = self.deadline();
            let chunk = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => {
                    self.stop();
                    return Some(Err(LlmError::Cancelled));
                }
                _ = tokio::time::sleep_until(deadline) => {
                    self.stop();
                    return Some(Err(LlmError::Timeout { what: what.to_string(), after_ms: limit.as_millis() as u64 }));
                }
                c = self.body.next() => c,
            };
            self.last_chunk = Instant::now();
            let events = match chunk {
                Some(Ok(bytes)) => self.decoder.feed(&bytes),
                Some(Err(e)) => vec![Err(map_reqwest(e, &self.url, "the streamed reply", limit))],
                None => {
                    let mut evs = self.decoder.finish();
                    if !evs.iter().any(|e| matches!(e, Ok(StreamEvent::Done) | Err(_))) {
                        evs.push(Err(LlmError::Protocol(
                            "the server closed the stream before the reply was complete".into(),
                        )));
                    }
                    evs
                }
            };
            for ev in events {
                match ev {
                    Ok(StreamEvent::Delta(t)) => {
                        self.got_text = true;
                        self.queue.push_back(Ok(t));
                    }
                    Ok(StreamEvent::Usage(u)) => {
                        if let Some(slot) = &self.usage {
                            if let Ok(mut s) = slot.lock() {
                                *s = Some(u);
                            }
                        }
                    }
                    Ok(StreamEvent::Done) => {
                        self.stop(); // releases the gate as soon as the reply is complete
                        break;
                    }
                    Err(e) => {
                        self.queue.push_back(Err(e));
                        break;
                    }
                }
            }
        }
    }

    /// The nearest deadline: the whole request's, and the first-token or idle one.
    fn deadline(&self) -> (Instant, &'static str, Duration) {
        let whole = self.started + self.timeouts.request;
        let (chunk, what, limit) = if self.got_text {
            (self.last_chunk + self.timeouts.idle, "the next chunk of the reply", self.timeouts.idle)
        } else {
            (self.started + self.timeouts.first_token, "the first token of the reply", self.timeouts.first_token)
        };
        if whole < chunk {
            (whole, "the whole reply", self.timeouts.request)
        } else {
            (chunk, what, limit)
        }
    }

    /// Ends the stream now: drops the body (closing the connection) and the gate lock.
    fn stop(&mut self) {
        self.finished = true;
        self.body = Box::pin(futures::stream::empty());
        self._guard = None;
    }
}
