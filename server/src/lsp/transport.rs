//! A guard in front of tower-lsp-server's framing: its decoder ends the whole
//! input stream after one malformed message (tokio-util stops a `FramedRead`
//! after an error), which would stop the server. Here each frame is read and
//! checked first; a malformed one gets its JSON-RPC error (-32700 / -32600)
//! and the server reads on. Valid frames pass through unchanged.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Largest header block accepted, in bytes (a protocol sanity limit, not a tunable).
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// One complete `Content-Length` frame body read from `r`; `Ok(None)` at end of input.
async fn read_frame<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> std::io::Result<Option<Result<Vec<u8>, String>>> {
    let mut len: Option<usize> = None;
    let mut header_bytes = 0;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).await?;
        if n == 0 {
            return Ok(None);
        }
        header_bytes += n;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = trimmed.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                len = value.trim().parse().ok();
            }
        }
        if header_bytes > MAX_HEADER_BYTES {
            return Ok(Some(Err("header block too long".into())));
        }
    }
    let Some(len) = len else {
        return Ok(Some(Err("frame without a valid Content-Length header".into())));
    };
    let mut body = vec![0; len];
    r.read_exact(&mut body).await?;
    Ok(Some(Ok(body)))
}

/// The error response for a body tower-lsp-server would choke on, or `None` if it is a valid message.
fn check_body(body: &[u8]) -> Option<Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Some(error_response(Value::Null, -32700, &format!("Parse error: {e}"))),
    };
    let Some(obj) = value.as_object() else {
        return Some(error_response(Value::Null, -32600, "Invalid request: expected a JSON-RPC object"));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let valid_id = matches!(id, Value::Null | Value::Number(_) | Value::String(_));
    let is_request = obj.get("method").is_some_and(Value::is_string);
    let is_response = obj.contains_key("id") && (obj.contains_key("result") || obj.contains_key("error"));
    if obj.get("jsonrpc") != Some(&json!("2.0")) || !valid_id || !(is_request || is_response) {
        let id = if valid_id { id } else { Value::Null };
        return Some(error_response(id, -32600, "Invalid request: not a JSON-RPC 2.0 message"));
    }
    None
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads framed messages from `input`; valid ones go to `to_server`, errors for malformed ones to `errors`.
pub async fn filter_input<R, W>(input: R, mut to_server: W, errors: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(input);
    loop {
        match read_frame(&mut reader).await {
            Ok(None) => break,
            Ok(Some(Ok(body))) => match check_body(&body) {
                None => {
                    if to_server.write_all(&frame(&body)).await.is_err() {
                        break;
                    }
                }
                Some(err) => {
                    tracing::warn!("malformed JSON-RPC message answered with an error: {}", err["error"]["message"]);
                    let _ = errors.send(frame(&serde_json::to_vec(&err).unwrap_or_default()));
                }
            },
            Ok(Some(Err(why))) => {
                tracing::warn!("unreadable frame skipped: {why}");
                let err = error_response(Value::Null, -32700, &format!("Parse error: {why}"));
                let _ = errors.send(frame(&serde_json::to_vec(&err).unwrap_or_default()));
            }
            Err(e) => {
                tracing::warn!("reading the client's input failed: {e}");
                break;
            }
        }
    }
    let _ = to_server.shutdown().await;
}

/// Forwards whole frames written by the server on `from_server` to `out`; sends an empty frame at the end.
pub async fn forward_server_frames<R: AsyncRead + Unpin>(from_server: R, out: mpsc::UnboundedSender<Vec<u8>>) {
    let mut reader = BufReader::new(from_server);
    loop {
        match read_frame(&mut reader).await {
            Ok(Some(Ok(body))) => {
                if out.send(frame(&body)).is_err() {
                    break;
                }
            }
            Ok(Some(Err(why))) => tracing::error!("server produced an unreadable frame: {why}"),
            Ok(None) | Err(_) => break,
        }
    }
    let _ = out.send(Vec::new());
}

/// Writes frames from `frames` to `output` one whole frame at a time, until the empty end marker.
pub async fn write_frames<W: AsyncWrite + Unpin>(mut frames: mpsc::UnboundedReceiver<Vec<u8>>, mut output: W) {
    while let Some(bytes) = frames.recv().await {
        if bytes.is_empty() {
            break;
        }
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_classified() {
        assert!(check_body(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).is_none());
        assert!(check_body(br#"{"jsonrpc":"2.0","method":"x"}"#).is_none());
        assert!(check_body(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_none());
        assert_eq!(check_body(b"{not json").unwrap()["error"]["code"], json!(-32700));
        assert_eq!(check_body(b"[]").unwrap()["error"]["code"], json!(-32600));
        let e = check_body(br#"{"jsonrpc":"2.0","id":7}"#).unwrap();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(7), json!(-32600)));
    }
}
