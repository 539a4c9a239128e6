"""Unit tests of scripts/bench/llm_proxy.py's control flow.

The upstream is a ScriptedUpstream (a stdlib HTTP server answering like
llama-server does, with canned replies): these tests check what the proxy
forwards and what it logs, not any model. The proxy runs as a real process.
"""
import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PROXY = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "llm_proxy.py"


class ScriptedUpstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = []
    # Servers that ignore stream_options send only llama-server's timings.
    send_usage = True

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"data": [{"id": "qwen2.5-coder:0.5b"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ScriptedUpstream.seen.append(req)
        if req["model"] == "slow":
            time.sleep(3)  # a long prompt evaluation: nothing is sent meanwhile
        if not req.get("stream"):
            body = json.dumps({
                "model": req["model"],
                "choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunks = [{"choices": [{"delta": {"content": w}}]} for w in ("a", "b", "c")]
        last = {"choices": [{"delta": {}, "finish_reason": "stop"}],
                "timings": {"prompt_n": 7, "cache_n": 93, "predicted_n": 3}}
        if req.get("stream_options", {}).get("include_usage") and ScriptedUpstream.send_usage:
            chunks.append(last)
            last = {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 3}}
        chunks.append(last)
        for c in chunks:
            self._chunk(f"data: {json.dumps(c)}\n\n".encode())
            time.sleep(0.01)
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


@pytest.fixture()
def proxy(tmp_path):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedUpstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    log = tmp_path / "calls.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(PROXY), "--listen", "127.0.0.1:0",
         "--upstream", f"http://127.0.0.1:{upstream.server_address[1]}", "--log", str(log)],
        stdout=subprocess.PIPE, text=True,
    )
    url = proc.stdout.readline().split()[-1]
    ScriptedUpstream.seen = []
    ScriptedUpstream.send_usage = True
    yield url, log, proc
    proc.terminate()
    proc.wait(timeout=10)
    upstream.shutdown()


def post(url, payload):
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(payload).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()


def records(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_plain_call_is_forwarded_and_logged(proxy):
    url, log, _ = proxy
    reply = json.loads(post(url, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    assert reply["choices"][0]["message"]["content"] == "hello"
    (rec,) = records(log)
    assert (rec["prompt_tokens"], rec["completion_tokens"], rec["tokens_from"]) == (42, 3, "usage")
    assert rec["messages"] == 1 and rec["prompt_chars"] == 2 and rec["stream"] is False


def test_stream_gets_usage_injected_and_passed_through(proxy):
    url, log, _ = proxy
    body = post(url, {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert ScriptedUpstream.seen[0]["stream_options"] == {"include_usage": True}
    assert body.count("data: ") == 6 and body.rstrip().endswith("data: [DONE]")
    (rec,) = records(log)
    assert (rec["prompt_tokens"], rec["completion_tokens"]) == (100, 3)
    assert rec["prompt_evaluated"] == 7 and rec["completion_chars"] == 3
    assert rec["stream"] is True and rec["injected_include_usage"] is True


def test_stream_without_usage_falls_back_to_timings(proxy):
    url, log, _ = proxy
    ScriptedUpstream.send_usage = False
    post(url, {"model": "m", "stream": True, "stream_options": {"include_usage": False},
               "messages": [{"role": "user", "content": "x"}]})
    # The caller's explicit choice is overridden: usage is what gets measured.
    assert ScriptedUpstream.seen[0]["stream_options"] == {"include_usage": True}
    (rec,) = records(log)
    assert rec["tokens_from"] == "timings"
    assert (rec["prompt_tokens"], rec["completion_tokens"]) == (100, 3)


def test_other_paths_pass_through_unlogged(proxy):
    url, log, _ = proxy
    with urllib.request.urlopen(url + "/v1/models", timeout=10) as resp:
        assert json.loads(resp.read())["data"][0]["id"] == "qwen2.5-coder:0.5b"
    assert not log.exists()


def test_call_in_flight_is_logged_as_aborted_on_stop(proxy):
    url, log, proc = proxy
    caller = threading.Thread(
        target=lambda: pytest.raises(Exception, post, url, {"model": "slow", "stream": True, "messages": []}),
        daemon=True,
    )
    caller.start()
    deadline = time.monotonic() + 5
    while not ScriptedUpstream.seen and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=10)
    (rec,) = records(log)
    assert rec["aborted"] is True and rec["model"] == "slow"
    assert "prompt_tokens" not in rec
