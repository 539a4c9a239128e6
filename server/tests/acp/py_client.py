"""An ACP client built on the Python SDK (`agent-client-protocol` from PyPI),
a second client independent of the TypeScript one. It keeps an unsaved buffer
of shop/prices.py (a constant the disk does not have) and asks about it: the
answer must come from the buffer, read through fs/read_text_file. Prints one JSON report on stdout; the Rust
test (acp_e2e.rs) checks it.

usage: python py_client.py TINYCODER WORKSPACE
"""

import asyncio
import json
import os
import sys

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

BINARY, WORKSPACE = sys.argv[1], sys.argv[2]
BUFFER_FILE = os.path.join(WORKSPACE, "shop", "prices.py")
EXTRA = "\n\nSHIPPING_FLAT = 5  # euros per parcel, whatever it weighs\n"


def log(*a):
    print("[py-client]", *a, file=sys.stderr, flush=True)


class Editor:
    """The client side: buffers over the disk, permission answers, a log of updates."""

    def __init__(self):
        with open(BUFFER_FILE) as f:
            self.buffers = {BUFFER_FILE: f.read() + EXTRA}  # unsaved: the disk lacks SHIPPING_FLAT
        self.updates = []
        self.reads = []
        self.writes = []
        self.permissions = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(os.path.relpath(path, WORKSPACE))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        with open(path) as f:
            return ReadTextFileResponse(content=f.read())

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes.append(os.path.relpath(path, WORKSPACE))
        self.buffers[path] = content
        with open(path, "w") as f:  # the editor saves the buffer
            f.write(content)
        return WriteTextFileResponse()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        ids = [o.option_id for o in options]
        self.permissions.append({"toolCallId": tool_call.tool_call_id, "options": ids})
        log("permission asked:", tool_call.title, "->", "allow_always")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_always"))


def text_of(updates):
    return "".join(
        u["content"]["text"]
        for u in updates
        if u.get("sessionUpdate") == "agent_message_chunk" and u["content"].get("type") == "text"
    )


async def main():
    editor = Editor()
    async with acp.spawn_agent_process(editor, BINARY, "acp", env=dict(os.environ)) as (conn, proc):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)),
        )
        session = await conn.new_session(cwd=WORKSPACE, mcp_servers=[])
        sid = session.session_id
        log("session", sid)

        start = len(editor.updates)
        ask = await conn.prompt(session_id=sid, prompt=[acp.text_block("What is SHIPPING_FLAT in shop/prices.py?")])
        ask_updates = editor.updates[start:]
        log("ask:", ask.stop_reason)

        report = {
            "agent": init.agent_info.name if init.agent_info else None,
            "ask": {"stopReason": ask.stop_reason, "text": text_of(ask_updates), "reads": editor.reads[:]},
            "permissions": editor.permissions,
            "writes": editor.writes,
            "buffer": editor.buffers[BUFFER_FILE],
        }
    print(json.dumps(report))


asyncio.run(main())
