#!/usr/bin/env python3
"""Next chat-turn latency while a session summary is due.

Drives `tinycoder lsp` over stdio as an editor does, against a real Ollama:
turns 1 and 2 of a chat session go to the coder model; with a tiny history
budget, turn 2 makes a summary due, written by a *different* summarizer model.
Turn 3 follows GAP seconds later and is timed (first delta and whole reply).
The baseline, in the same run and with the same binary, is the same session
with a history budget large enough that no summary is due.

Usage:
  scripts/bench_next_turn.py --bin LABEL=PATH [--bin LABEL=PATH ...]
      [--url http://127.0.0.1:11434] [--trials 5] [--gap 3]
      [--coder qwen2.5-coder:1.5b] [--summarizer qwen2.5-coder:0.5b]

Each binary runs with its own defaults (no setting a binary does not know is
sent), so an older build can be compared with a newer one.
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import tempfile
import time

TURNS = [
    "My function total() adds an int and a str and fails with TypeError.",
    "How do I convert the str first?",
    "Thanks. Should I use int() or float() for prices?",
]


class Lsp:
    """A minimal LSP client over the server's stdio."""

    def __init__(self, binary, root):
        env = dict(os.environ)
        env.update(
            TINYCODER_CACHE_DIR=os.path.join(root, ".bench-cache"),
            TINYCODER_DATA_DIR=os.path.join(root, ".bench-data"),
            TINYCODER_CONFIG=os.path.join(root, "no-user-config.toml"),
            RUST_LOG="warn",
        )
        self.proc = subprocess.Popen(
            [binary, "lsp"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.buf = b""
        self.next_id = 0

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self, timeout):
        """The next message, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end >= 0:
                length = next(
                    int(line.split(b":")[1])
                    for line in self.buf[:head_end].split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(self.buf) >= head_end + 4 + length:
                    body = self.buf[head_end + 4 : head_end + 4 + length]
                    self.buf = self.buf[head_end + 4 + length :]
                    return json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("the server closed its stdout")
                self.buf += chunk

    def request(self, method, params, on_message=None, timeout=600):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                raise RuntimeError(f"no answer to {method} within {timeout} s")
            if "method" in msg and "id" in msg:  # a server->client request: accept it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return msg.get("result")
            elif on_message:
                on_message(msg)

    def close(self):
        try:
            self.request("shutdown", None, timeout=30)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def session_run(binary, url, coder, summarizer, history_tokens, gap):
    """One session: turns 1 and 2, then GAP seconds, then turn 3 timed; (first delta s, whole s)."""
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "prices.py"), "w") as f:
            f.write("def total(a, b):\n    return a + b\n")
        lsp = Lsp(binary, root)
        uri = "file://" + root
        options = {
            "backend": {"kind": "ollama", "url": url},
            "models": {
                "coder": {"name": coder, "num_ctx": 4096, "max_output_tokens": 60, "temperature": 0.0},
                "summarizer": {"name": summarizer, "num_ctx": 4096, "max_output_tokens": 80, "temperature": 0.0},
            },
            "store": {
                "session_history_tokens": history_tokens,
                "session_keep_recent_turns": 1,
                "session_summary_tokens": 30,
            },
        }
        lsp.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "bench"}],
                "initializationOptions": options,
                "capabilities": {"window": {"workDoneProgress": True}},
            },
        )
        lsp.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        session = None
        for i, text in enumerate(TURNS[:2]):
            params = {"requestId": f"t{i}", "message": text}
            if session:
                params["sessionId"] = session
            session = lsp.request("tinycoder/chat", params)["sessionId"]
        # Read (and answer) what the server sends while the user reads the reply.
        until = time.monotonic() + gap
        while time.monotonic() < until:
            msg = lsp.read(until - time.monotonic())
            if msg and "method" in msg and "id" in msg:
                lsp.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        first = []
        start = time.monotonic()

        def on_message(msg):
            if msg.get("method") == "tinycoder/chatDelta" and not first:
                first.append(time.monotonic() - start)

        lsp.request("tinycoder/chat", {"sessionId": session, "requestId": "t2", "message": TURNS[2]}, on_message)
        whole = time.monotonic() - start
        lsp.close()
        return (first[0] if first else whole), whole


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", required=True, help="LABEL=PATH of a tinycoder binary")
    ap.add_argument("--url", default=os.environ.get("TINYCODER_TEST_OLLAMA_URL", "http://127.0.0.1:11434"))
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--gap", type=float, default=3.0)
    ap.add_argument("--coder", default="qwen2.5-coder:1.5b")
    ap.add_argument("--summarizer", default="qwen2.5-coder:0.5b")
    args = ap.parse_args()
    bins = [b.split("=", 1) for b in args.bin]
    rows = {(label, kind): [] for label, _ in bins for kind in ("summary due", "no summary")}
    # Alternate binaries and cases trial by trial, so drift in the machine's load hits all alike.
    for trial in range(args.trials):
        for label, path in bins:
            for kind, budget in (("summary due", 40), ("no summary", 100000)):
                got = session_run(path, args.url, args.coder, args.summarizer, budget, args.gap)
                rows[(label, kind)].append(got)
                print(f"trial {trial + 1} {label} {kind}: first delta {got[0]:.2f} s, reply {got[1]:.2f} s", flush=True)
    print()
    print("| binary | case | first delta p50 / max | whole reply p50 / max | ratio to no summary (p50 reply) |")
    print("|---|---|---|---|---|")
    for label, _ in bins:
        base = statistics.median(w for _, w in rows[(label, "no summary")])
        for kind in ("summary due", "no summary"):
            firsts = [f for f, _ in rows[(label, kind)]]
            wholes = [w for _, w in rows[(label, kind)]]
            print(
                f"| {label} | {kind} | {statistics.median(firsts):.2f} / {max(firsts):.2f} s "
                f"| {statistics.median(wholes):.2f} / {max(wholes):.2f} s | {statistics.median(wholes) / base:.2f}× |"
            )


if __name__ == "__main__":
    main()
