//! Byte-level readers for streamed replies: NDJSON (Ollama) and SSE (OpenAI).
//!
//! Network chunks split lines and multi-byte UTF-8 characters anywhere, so the
//! readers buffer raw bytes and decode UTF-8 only once a whole line is in.
//! (ollama-rs's reader decodes per chunk and has been seen to drop such chunks.)

use super::LlmError;

/// What one decoded line of a streamed reply means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Reply text, in order.
    Delta(String),
    /// The server says the reply is complete.
    Done,
    /// The server's accounting of the prompt (sent with the last chunk).
    Usage(super::PromptUsage),
}

/// Splits a byte stream into complete lines, keeping any partial tail for the next chunk.
#[derive(Debug, Default)]
pub struct LineBuffer {
    pending: Vec<u8>,
}

impl LineBuffer {
    /// Adds `chunk` and returns every line it completed (without `\n` / `\r\n`), decoded as UTF-8.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Result<String, LlmError>> {
        self.pending.extend_from_slice(chunk);
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            lines.push(decode_line(&self.pending[start..end]));
            start = end + 1;
        }
        self.pending.drain(..start);
        lines
    }

    /// The last line when the stream ended without a final newline.
    pub fn finish(&mut self) -> Option<Result<String, LlmError>> {
        if self.pending.iter().all(|b| b.is_ascii_whitespace()) {
            self.pending.clear();
            return None;
        }
        let line = decode_line(&self.pending);
        self.pending.clear();
        Some(line)
    }
}

fn decode_line(bytes: &[u8]) -> Result<String, LlmError> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec())
        .map_err(|e| LlmError::Protocol(format!("a streamed line is not valid UTF-8: {e}")))
}

/// Turns the text of one `{"error": ...}` object (Ollama or OpenAI shape) into a message.
pub fn error_message(value: &serde_json::Value) -> Option<String> {
    let err = value.get("error")?;
    Some(match err {
        serde_json::Value::String(s) => s.clone(),
        other => other.get("message").and_then(|m| m.as_str()).map(str::to_string).unwrap_or_else(|| other.to_string()),
    })
}

/// A decoder of one streaming wire format: bytes in, events out.
pub trait StreamDecoder: Send + 'static {
    /// Feeds one network chunk.
    fn feed(&mut self, chunk: &[u8]) -> Vec<Result<StreamEvent, LlmError>>;
    /// The body ended; flushes a trailing partial line.
    fn finish(&mut self) -> Vec<Result<StreamEvent, LlmError>>;
}

/// Ollama's `/api/chat` stream: one JSON object per line.
#[derive(Debug, Default)]
pub struct NdjsonChatDecoder {
    lines: LineBuffer,
}

impl NdjsonChatDecoder {
    fn line(line: Result<String, LlmError>, out: &mut Vec<Result<StreamEvent, LlmError>>) {
        let line = match line {
            Ok(l) => l,
            Err(e) => return out.push(Err(e)),
        };
        if line.trim().is_empty() {
            return;
        }
        let value: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                return out.push(Err(LlmError::Protocol(format!("bad JSON line from Ollama ({e}): {}", clip(&line)))))
            }
        };
        if let Some(message) = error_message(&value) {
            return out.push(Err(LlmError::Server { status: None, message }));
        }
        if let Some(text) = value.pointer("/message/content").and_then(|c| c.as_str()) {
            if !text.is_empty() {
                out.push(Ok(StreamEvent::Delta(text.to_string())));
            }
        }
        // The final object (`done: true`) may still carry text, pushed above.
        if value.get("done").and_then(|d| d.as_bool()) == Some(true) {
            if let Some(u) = super::PromptUsage::from_reply(&value) {
                out.push(Ok(StreamEvent::Usage(u)));
            }
            out.push(Ok(StreamEvent::Done));
        }
    }
}

impl StreamDecoder for NdjsonChatDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Result<StreamEvent, LlmError>> {
        let mut out = Vec::new();
        for line in self.lines.push(chunk) {
            Self::line(line, &mut out);
        }
        out
    }

    fn finish(&mut self) -> Vec<Result<StreamEvent, LlmError>> {
        let mut out = Vec::new();
        if let Some(line) = self.lines.finish() {
            Self::line(line, &mut out);
        }
        out
    }
}

/// An OpenAI-style Server-Sent Events stream of `chat.completion.chunk`s (or of
/// `/v1/completions` chunks, whose text is `choices[0].text`).
#[derive(Debug, Default)]
pub struct SseChatDecoder {
    lines: LineBuffer,
    /// `data:` lines of the event being assembled (an event ends at a blank line).
    data: Vec<String>,
    /// The current event's `event:` name, if any.
    event: Option<String>,
}

impl SseChatDecoder {
    fn line(&mut self, line: Result<String, LlmError>, out: &mut Vec<Result<StreamEvent, LlmError>>) {
        let line = match line {
            Ok(l) => l,
            Err(e) => return out.push(Err(e)),
        };
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return; // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => self.data.push(value.to_string()),
            "event" => self.event = Some(value.to_string()),
            // llama-server has sent errors as `error: {json}` lines outside any event.
            "error" => out.push(Err(LlmError::Server { status: None, message: sse_error_text(value) })),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Result<StreamEvent, LlmError>>) {
        if self.data.is_empty() {
            self.event = None;
            return;
        }
        let data = self.data.join("\n");
        self.data.clear();
        let event = self.event.take();
        if data.trim() == "[DONE]" {
            return out.push(Ok(StreamEvent::Done));
        }
        let value: serde_json::Value = match serde_json::from_str(&data) {
            Ok(v) => v,
            Err(e) => return out.push(Err(LlmError::Protocol(format!("bad JSON event ({e}): {}", clip(&data))))),
        };
        if let Some(message) = error_message(&value) {
            return out.push(Err(LlmError::Server { status: None, message }));
        }
        if event.as_deref() == Some("error") {
            return out.push(Err(LlmError::Server { status: None, message: data }));
        }
        // A chat chunk's delta, or a streamed `/v1/completions` chunk's text.
        let text = value.pointer("/choices/0/delta/content").or_else(|| value.pointer("/choices/0/text"));
        if let Some(text) = text.and_then(|c| c.as_str()) {
            if !text.is_empty() {
                out.push(Ok(StreamEvent::Delta(text.to_string())));
            }
        }
        if let Some(u) = super::PromptUsage::from_reply(&value) {
            out.push(Ok(StreamEvent::Usage(u)));
        }
    }
}

fn sse_error_text(value: &str) -> String {
    serde_json::from_str::<serde_json::Value>(value)
        .ok()
        .and_then(|v| error_message(&v).or_else(|| v.get("message").and_then(|m| m.as_str()).map(str::to_string)))
        .unwrap_or_else(|| value.to_string())
}

impl StreamDecoder for SseChatDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Result<StreamEvent, LlmError>> {
        let mut out = Vec::new();
        for line in self.lines.push(chunk) {
            self.line(line, &mut out);
        }
        out
    }

    fn finish(&mut self) -> Vec<Result<StreamEvent, LlmError>> {
        let mut out = Vec::new();
        if let Some(line) = self.lines.finish() {
            self.line(line, &mut out);
        }
        self.dispatch(&mut out);
        out
    }
}

/// Where the first of `stops` starts in `text`, if any does (a completion ends before it).
pub fn first_stop(text: &str, stops: &[String]) -> Option<usize> {
    stops.iter().filter(|s| !s.is_empty()).filter_map(|s| text.find(s.as_str())).min()
}

/// At most 200 characters of `s`, for error messages.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` to a fresh decoder, then finishes it.
    fn run<D: StreamDecoder + Default>(chunks: &[&[u8]]) -> Vec<Result<StreamEvent, String>> {
        let mut d = D::default();
        let mut out: Vec<_> = chunks.iter().flat_map(|c| d.feed(c)).collect();
        out.extend(d.finish());
        out.into_iter().map(|r| r.map_err(|e| e.to_string())).collect()
    }

    /// Every way of cutting `bytes` into two chunks, and into single bytes.
    fn cuts(bytes: &[u8]) -> Vec<Vec<&[u8]>> {
        let mut all: Vec<Vec<&[u8]>> = (0..=bytes.len()).map(|i| vec![&bytes[..i], &bytes[i..]]).collect();
        all.push(bytes.chunks(1).collect());
        all
    }

    fn text(events: &[Result<StreamEvent, String>]) -> String {
        events.iter().filter_map(|e| if let Ok(StreamEvent::Delta(t)) = e { Some(t.as_str()) } else { None }).collect()
    }

    const NDJSON: &str = concat!(
        "{\"message\":{\"role\":\"assistant\",\"content\":\"caf\"},\"done\":false}\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"é 🦀\"},\"done\":false}\r\n",
        "\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"eval_count\":2}\n",
    );

    #[test]
    fn a_completion_is_cut_before_the_earliest_stop_string() {
        let stops = ["\n\n".to_string(), "<|endoftext|>".to_string(), String::new()];
        assert_eq!(first_stop("x + 1\n\ny", &stops), Some(5));
        assert_eq!(first_stop("a<|endoftext|>b\n\n", &stops), Some(1));
        assert_eq!(first_stop("return a + b", &stops), None, "an empty stop string never matches");
    }

    #[test]
    fn a_streamed_completion_chunk_yields_its_text() {
        let body = "data: {\"choices\":[{\"text\":\"a + \",\"index\":0}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n";
        let events = run::<SseChatDecoder>(&[body.as_bytes()]);
        assert_eq!(text(&events), "a + b");
        assert_eq!(events.last(), Some(&Ok(StreamEvent::Done)));
    }

    #[test]
    fn ndjson_keeps_utf8_split_anywhere() {
        for chunks in cuts(NDJSON.as_bytes()) {
            let events = run::<NdjsonChatDecoder>(&chunks);
            assert_eq!(text(&events), "café 🦀", "cut {:?}", chunks.iter().map(|c| c.len()).collect::<Vec<_>>());
            assert_eq!(events.last(), Some(&Ok(StreamEvent::Done)));
            assert!(events.iter().all(|e| e.is_ok()));
        }
    }

    #[test]
    fn ndjson_error_line_mid_stream_is_a_server_error() {
        let body =
            "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"model runner has unexpectedly stopped\"}\n";
        for chunks in cuts(body.as_bytes()) {
            let events = run::<NdjsonChatDecoder>(&chunks);
            assert_eq!(events.first(), Some(&Ok(StreamEvent::Delta("a".into()))));
            match events.get(1) {
                Some(Err(msg)) => assert!(msg.contains("unexpectedly stopped"), "{msg}"),
                other => panic!("expected an error, got {other:?}"),
            }
        }
        let mut d = NdjsonChatDecoder::default();
        assert!(matches!(d.feed(b"{\"error\":\"x\"}\n").as_slice(), [Err(LlmError::Server { .. })]));
    }

    #[test]
    fn ndjson_final_line_without_newline_and_bad_lines() {
        let events = run::<NdjsonChatDecoder>(&[b"{\"message\":{\"content\":\"hi\"},\"done\":true}"]);
        assert_eq!(events, vec![Ok(StreamEvent::Delta("hi".into())), Ok(StreamEvent::Done)]);
        let events = run::<NdjsonChatDecoder>(&[b"not json\n"]);
        assert!(matches!(events.as_slice(), [Err(m)] if m.contains("bad JSON")));
        let events = run::<NdjsonChatDecoder>(&[b"{\"message\":{\"content\":\"\xff\"}}\n"]);
        assert!(matches!(events.as_slice(), [Err(m)] if m.contains("UTF-8")));
    }

    const SSE: &str = concat!(
        ": keep-alive\n\n",
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"Fran\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"ç🦀is\"}}]}\n\n",
        "data: {\"choices\":[{\"finish_reason\":\"stop\",\"delta\":{}}]}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn sse_keeps_utf8_split_anywhere() {
        for chunks in cuts(SSE.as_bytes()) {
            let events = run::<SseChatDecoder>(&chunks);
            assert_eq!(text(&events), "Franç🦀is", "cut {:?}", chunks.iter().map(|c| c.len()).collect::<Vec<_>>());
            assert_eq!(events.last(), Some(&Ok(StreamEvent::Done)));
        }
    }

    #[test]
    fn sse_error_event_mid_stream_is_a_server_error() {
        let bodies = [
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"code\":500,\"message\":\"slot failed\"}}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nerror: {\"code\":500,\"message\":\"slot failed\"}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nevent: error\ndata: {\"message\":\"slot failed\"}\n\n",
        ];
        for body in bodies {
            for chunks in cuts(body.as_bytes()) {
                let events = run::<SseChatDecoder>(&chunks);
                assert_eq!(events.first(), Some(&Ok(StreamEvent::Delta("a".into()))), "{body}");
                match events.get(1) {
                    Some(Err(msg)) => assert!(msg.contains("slot failed"), "{msg}"),
                    other => panic!("{body}: expected an error, got {other:?}"),
                }
            }
        }
    }

    #[test]
    fn sse_multi_line_data_joins_and_last_event_flushes_at_end() {
        let events =
            run::<SseChatDecoder>(&[b"data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"x\"}}]}\n\ndata: [DONE]"]);
        assert_eq!(events, vec![Ok(StreamEvent::Delta("x".into())), Ok(StreamEvent::Done)]);
    }
}
