#!/usr/bin/env python3
"""A logging HTTP proxy in front of an OpenAI-compatible model server.

    python3 scripts/bench/llm_proxy.py --listen 127.0.0.1:8091 \
        --upstream http://127.0.0.1:8080 --log calls.jsonl

Every request is forwarded unchanged to the upstream server, except that a
streaming chat completion gets `"stream_options": {"include_usage": true}` so
that the server reports token counts at the end of the stream. Streaming (SSE)
responses are passed through chunk by chunk as they arrive.

For every /v1/chat/completions (and /v1/completions) call one JSON line is
appended to the log: wall time, prompt and completion tokens (from `usage`, or
llama-server's `timings` when there is no usage), the model, and the request's
size. Any agent pointed at the proxy is measured the same way, which is the
point: tinycoder and other agents are compared with one tool.

Python 3 stdlib only. Stop it with SIGTERM or Ctrl-C.
"""
import argparse
import http.client
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

MEASURED_SUFFIXES = ("/chat/completions", "/completions")
# Hop-by-hop headers are about one connection and must not be forwarded.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
}
UPSTREAM_TIMEOUT_S = 900


class CallLog:
    """Appends one JSON object per line; safe to use from handler threads."""

    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()

    def write(self, record):
        line = json.dumps(record, sort_keys=True)
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line + "\n")


# LLM_PROXY_DUMP=1 keeps every prompt and reply in the log (to read what a model saw and said).
DUMP = os.environ.get("LLM_PROXY_DUMP") == "1"


def usage_fields(obj, acc):
    """Fold token counts from one response object (or SSE chunk) into acc."""
    usage = obj.get("usage")
    if isinstance(usage, dict):
        if usage.get("prompt_tokens") is not None:
            acc["prompt_tokens"] = usage["prompt_tokens"]
            acc["tokens_from"] = "usage"
        if usage.get("completion_tokens") is not None:
            acc["completion_tokens"] = usage["completion_tokens"]
        details = usage.get("prompt_tokens_details") or {}
        if details.get("cached_tokens") is not None:
            acc["cached_tokens"] = details["cached_tokens"]
    timings = obj.get("timings")
    if isinstance(timings, dict):
        # llama-server: prompt_n counts only the tokens it had to evaluate (not
        # the cached prefix), so usage wins when both are present.
        if timings.get("prompt_n") is not None:
            acc["prompt_evaluated"] = timings["prompt_n"]
            if acc.get("tokens_from") != "usage":
                acc["prompt_tokens"] = timings["prompt_n"] + timings.get("cache_n", 0)
                acc["tokens_from"] = "timings"
        if timings.get("predicted_n") is not None and acc.get("tokens_from") != "usage":
            acc["completion_tokens"] = timings["predicted_n"]
    for choice in obj.get("choices") or []:
        if choice.get("finish_reason"):
            acc["finish_reason"] = choice["finish_reason"]
        delta = choice.get("delta") or choice.get("message") or {}
        content = delta.get("content") or choice.get("text") or ""
        acc["completion_chars"] = acc.get("completion_chars", 0) + len(content)
        if DUMP:
            acc["completion"] = acc.get("completion", "") + content
    if obj.get("model") and "response_model" not in acc:
        acc["response_model"] = obj["model"]


class ProxyHandler(BaseHTTPRequestHandler):
    # HTTP/1.0: the connection closes after each response, so a streamed body
    # needs neither Content-Length nor chunked encoding.
    protocol_version = "HTTP/1.0"
    server_version = "llm-proxy/1"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("[llm_proxy] " + (fmt % args) + "\n")

    def do_GET(self):
        self._forward()

    def do_POST(self):
        self._forward()

    def do_PUT(self):
        self._forward()

    def do_DELETE(self):
        self._forward()

    def do_OPTIONS(self):
        self._forward()

    def _forward(self):
        started = time.time()
        t0 = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        measured = self.command == "POST" and self.path.split("?")[0].endswith(MEASURED_SUFFIXES)
        record = {"ts": round(started, 3), "path": self.path}
        acc = {}
        if measured:
            body = self._prepare_request(body, record)
            self.server.track(self, record, acc, t0)

        up = self.server.upstream
        conn_cls = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(up.hostname, up.port or (443 if up.scheme == "https" else 80), timeout=UPSTREAM_TIMEOUT_S)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Content-Length"] = str(len(body))
        headers["Connection"] = "close"
        path = up.path.rstrip("/") + self.path if up.path not in ("", "/") else self.path
        try:
            conn.request(self.command, path, body=body, headers=headers)
            resp = conn.getresponse()
        except OSError as exc:
            self.send_error(502, f"upstream unreachable: {exc}")
            if measured and self.server.untrack(self):
                record.update(status=502, error=str(exc), seconds=round(time.monotonic() - t0, 3))
                self.server.call_log.write(record)
            return

        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()

        streaming = "text/event-stream" in (resp.getheader("Content-Type") or "")
        first_byte = None
        client_gone = False
        raw = bytearray()
        try:
            if streaming:
                pending = b""
                while True:
                    chunk = resp.read1(65536)
                    if not chunk:
                        break
                    if first_byte is None:
                        first_byte = time.monotonic() - t0
                    if not client_gone:
                        try:
                            self.wfile.write(chunk)
                            self.wfile.flush()
                        except OSError:
                            # Keep reading so the call is still measured.
                            client_gone = True
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self._sse_line(line, acc)
                if pending:
                    self._sse_line(pending, acc)
            else:
                data = resp.read()
                first_byte = time.monotonic() - t0
                raw += data
                try:
                    self.wfile.write(data)
                except OSError:
                    client_gone = True
        finally:
            conn.close()

        if not measured or not self.server.untrack(self):
            # Not a model call, or already logged as aborted by a stop.
            return
        if not streaming and raw:
            try:
                usage_fields(json.loads(raw), acc)
            except ValueError:
                acc["error"] = "response is not JSON"
        record.update(acc)
        record.update(
            status=resp.status,
            stream=streaming,
            seconds=round(time.monotonic() - t0, 3),
            first_byte_s=round(first_byte, 3) if first_byte is not None else None,
        )
        if client_gone:
            record["client_disconnected"] = True
        if resp.status >= 400 and raw:
            record["error"] = raw[:500].decode(errors="replace")
        self.server.call_log.write(record)

    def _prepare_request(self, body, record):
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            record["request_error"] = "request body is not JSON"
            return body
        record["model"] = req.get("model")
        messages = req.get("messages")
        if isinstance(messages, list):
            record["messages"] = len(messages)
            record["prompt_chars"] = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, dict))
            if DUMP:
                record["prompt_messages"] = messages
            if messages and isinstance(messages[0], dict):
                # Enough of the first message to tell an agent's kinds of call apart.
                record["first_message_head"] = _text(messages[0].get("content"))[:80]
        elif isinstance(req.get("prompt"), str):
            record["prompt_chars"] = len(req["prompt"])
        for key in ("max_tokens", "max_completion_tokens", "temperature"):
            if key in req:
                record[key] = req[key]
        if req.get("stream"):
            opts = req.get("stream_options") or {}
            if not opts.get("include_usage"):
                opts["include_usage"] = True
                req["stream_options"] = opts
                record["injected_include_usage"] = True
                body = json.dumps(req).encode()
        return body

    @staticmethod
    def _sse_line(line, acc):
        line = line.strip()
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        try:
            usage_fields(json.loads(payload), acc)
        except ValueError:
            pass


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inflight = {}
        self._inflight_lock = threading.Lock()

    def track(self, handler, record, acc, t0):
        with self._inflight_lock:
            self._inflight[id(handler)] = (record, acc, t0)

    def untrack(self, handler):
        """True when the call is still ours to log."""
        with self._inflight_lock:
            return self._inflight.pop(id(handler), None) is not None

    def log_aborted(self):
        with self._inflight_lock:
            pending, self._inflight = list(self._inflight.values()), {}
        for record, acc, t0 in pending:
            record.update(acc)
            record.update(aborted=True, seconds=round(time.monotonic() - t0, 3))
            self.call_log.write(record)


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def main(argv=None):
    parser = argparse.ArgumentParser(description="Logging proxy for an OpenAI-compatible model server.")
    parser.add_argument("--listen", default="127.0.0.1:8091", help="HOST:PORT to listen on (port 0: any free port)")
    parser.add_argument("--upstream", default="http://127.0.0.1:8080", help="base URL of the model server")
    parser.add_argument("--log", required=True, help="JSONL file to append one line per model call to")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)

    host, _, port = args.listen.rpartition(":")
    server = ProxyServer((host or "127.0.0.1", int(port)), ProxyHandler)
    server.upstream = urlsplit(args.upstream)
    server.call_log = CallLog(args.log)
    server.verbose = args.verbose
    # The bound address on one line on stdout, so a caller that asked for port 0 learns it.
    print(f"listening on http://{server.server_address[0]}:{server.server_address[1]}", flush=True)

    def stop(*_):
        # Calls still running (the agent was cut off by a wall-clock cap) are
        # logged with what is known so far; closing their upstream connections
        # on exit also stops the server from generating for nobody.
        server.log_aborted()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
