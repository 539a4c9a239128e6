#!/usr/bin/env python3
"""Drives `tinycoder lsp` the way an editor does, on a copy of an example
project with a failing test: runs the tests, takes the quick-fix on the failing
test's diagnostic, shows the patch the server proposes as a diff, accepts it,
and runs the tests again.

usage: lsp_demo.py TINYCODER_BINARY PROJECT_DIR
(PROJECT_DIR is changed in place: pass a copy.)
"""

import difflib
import json
import os
import subprocess
import sys
import threading
import queue
import time

FIX_DEADLINE_S = 1800


class Client:
    """A JSON-RPC client over the server's stdio, with Content-Length framing."""

    def __init__(self, binary, root):
        self.proc = subprocess.Popen([binary, "lsp"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        self.inbox = queue.Queue()
        self.replies = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.inbox.put(json.loads(out.read(length)))

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answer(self, msg, result):
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def messages(self, deadline):
        while time.time() < deadline:
            try:
                msg = self.inbox.get(timeout=1)
            except queue.Empty:
                continue
            if msg is None:
                raise SystemExit("the language server exited")
            yield msg
        raise SystemExit("timed out")


def show_progress(msg):
    if msg.get("method") == "$/progress":
        v = msg["params"]["value"]
        text = v.get("message") or v.get("title")
        if text:
            print(f"  [progress] {text}", flush=True)
    elif msg.get("method") == "window/showMessage":
        print(f"  [message] {msg['params']['message']}", flush=True)


def offset(text, line, character):
    """A byte offset in `text` of an LSP position (UTF-16 columns)."""
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    units = 0
    for i, ch in enumerate(text[start:]):
        if units >= character or ch == "\n":
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text)


def apply_edits(text, edits):
    spans = []
    for e in edits:
        r = e["range"]
        spans.append((offset(text, r["start"]["line"], r["start"]["character"]),
                      offset(text, r["end"]["line"], r["end"]["character"]), e["newText"]))
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def main():
    binary, root = sys.argv[1], os.path.abspath(sys.argv[2])
    c = Client(binary, root)
    uri_root = "file://" + root
    rid = c.request("initialize", {
        "processId": os.getpid(), "rootUri": uri_root,
        "workspaceFolders": [{"uri": uri_root, "name": os.path.basename(root)}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": True},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True, "changeAnnotationSupport": {}}},
        },
    })
    pending = {rid}
    deadline = time.time() + 120
    for m in c.messages(deadline):
        if m.get("id") in pending and "method" not in m:
            break
    c.notify("initialized", {})
    print("== the editor runs the tests (tinycoder.runTests)", flush=True)
    rid = c.request("workspace/executeCommand", {"command": "tinycoder.runTests", "arguments": []})
    diagnostic, uri, result = None, None, None
    for m in c.messages(time.time() + 600):
        if "method" in m and "id" in m:
            c.answer(m, None)
        show_progress(m)
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["diagnostics"]:
            uri, diagnostic = m["params"]["uri"], m["params"]["diagnostics"][0]
        if m.get("id") == rid and "method" not in m:
            result = m.get("result") or {}
        if result is not None and diagnostic:
            break
        if result is not None and result.get("passed"):
            print("the tests already pass; nothing to fix")
            return 0
    print(f"  {result.get('summary')}")
    print(f"  diagnostic at {uri.replace(uri_root + '/', '')}:{diagnostic['range']['start']['line'] + 1}: {diagnostic['message']}")
    print("== the editor lists code actions there and takes the quick-fix", flush=True)
    rid = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diagnostic["range"],
                                                 "context": {"diagnostics": [diagnostic]}})
    actions = None
    for m in c.messages(time.time() + 60):
        if m.get("id") == rid and "method" not in m:
            actions = m["result"]
            break
    fix = next(a for a in actions if a.get("kind") == "quickfix")
    print(f"  {fix['title']}", flush=True)
    c.request("workspace/executeCommand", {"command": fix["command"]["command"], "arguments": fix["command"]["arguments"]})
    outcome = 1
    for m in c.messages(time.time() + FIX_DEADLINE_S):
        show_progress(m)
        if m.get("method") == "workspace/applyEdit":
            edit = m["params"]["edit"]
            label = (edit.get("changeAnnotations") or {}).get("tinycoder.patch", {}).get("label", "")
            print(f"== the server proposes a patch ({label}); the editor previews it:", flush=True)
            for doc in edit["documentChanges"]:
                path = doc["textDocument"]["uri"][len("file://"):]
                before = open(path, encoding="utf-8").read()
                after = apply_edits(before, doc["edits"])
                rel = os.path.relpath(path, root)
                sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}"))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(after)
            print("== the user accepts it", flush=True)
            c.answer(m, {"applied": True})
        elif m.get("method") == "window/showMessageRequest":
            # A failed fix ends with a question (look at the best attempt?) or, first, the
            # strategy question after the last attempt: the demo says what it was asked
            # and answers "no" (dismissed), which stops the task.
            text = m["params"]["message"]
            print(f"  [question] {text}", flush=True)
            c.answer(m, None)
            if "could not do it" in text:
                break
        elif "method" in m and "id" in m:
            c.answer(m, None)
        if m.get("method") == "window/showMessage":
            text = m["params"]["message"]
            if "applied" in text or "could not" in text or "nothing to fix" in text:
                outcome = 0 if "tests pass" in text else 1
                break
    print("== the tests on the project after the fix (pytest)", flush=True)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    rid = c.request("shutdown", None)
    c.notify("exit", None)
    return 0 if outcome == 0 and tests.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
