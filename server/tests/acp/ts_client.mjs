// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk),
// acting as an editor's agent panel would: it starts `tinycoder acp`, asks about
// a file, fixes a failing test, cancels an answer and a test run, and loads the
// session back. It answers
// fs/read_text_file and fs/write_text_file from the disk, answers permission
// requests, and records every session/update. It prints one JSON report on
// stdout; the Rust test (acp_e2e.rs) checks it.
//
// usage: node ts_client.mjs SDK_DIR TINYCODER WORKSPACE SLOW_WORKSPACE
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, binary, workspace, slowWorkspace] = process.argv.slice(2);
const require = createRequire(join(sdkDir, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const agent = spawn(binary, ["acp"], { stdio: ["pipe", "pipe", "inherit"], env: process.env });
const log = (...a) => process.stderr.write(`[ts-client] ${a.join(" ")}\n`);

const updates = new Map(); // sessionId -> [update]
const reads = [];
const writes = [];
const permissions = [];
const listeners = [];
let permissionAnswer = "allow_once";

const app = acp
  .client({ name: "tinycoder-e2e-ts" })
  .onNotification("session/update", ({ params }) => {
    const list = updates.get(params.sessionId) ?? [];
    list.push(params.update);
    updates.set(params.sessionId, list);
    for (const l of listeners) l(params);
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    writes.push(params.path);
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push({ toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.optionId) });
    log("permission asked for", params.toolCall.title ?? params.toolCall.toolCallId, "->", permissionAnswer);
    return { outcome: { outcome: "selected", optionId: permissionAnswer } };
  });

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const text = (list) =>
  list
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
    .map((u) => u.content.text)
    .join("");

// Sends a prompt; `onUpdate` may return "cancel" to send session/cancel (once).
async function prompt(ctx, sessionId, words, onUpdate) {
  const before = (updates.get(sessionId) ?? []).length;
  let cancelledAt = null;
  let scheduled = false; // one session/cancel per turn, timed from when it is sent
  const listener = (p) => {
    if (p.sessionId !== sessionId || scheduled || !onUpdate) return;
    const wait = onUpdate(p.update);
    if (wait !== undefined && wait !== false) {
      scheduled = true;
      setTimeout(() => {
        cancelledAt = Date.now();
        log("sending session/cancel");
        ctx.notify("session/cancel", { sessionId });
      }, typeof wait === "number" ? wait : 0);
    }
  };
  listeners.push(listener);
  const started = Date.now();
  const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: words }] });
  const ended = Date.now();
  listeners.splice(listeners.indexOf(listener), 1);
  const turn = (updates.get(sessionId) ?? []).slice(before);
  return {
    stopReason: response.stopReason,
    ms: ended - started,
    cancelToResponseMs: cancelledAt === null ? null : ended - cancelledAt,
    text: text(turn),
    updates: turn,
  };
}

const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "tinycoder-e2e-ts", version: "1" },
  });
  log("initialized:", JSON.stringify(init.agentInfo));
  const { sessionId } = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  log("session", sessionId);

  const ask = await prompt(ctx, sessionId, "What does total_price in shop/prices.py do?");
  log("ask:", ask.stopReason, ask.ms, "ms");
  const askReads = reads.map((p) => relative(workspace, p));

  // A fix of the failing test: tool calls, a diff, a permission asked before the write.
  const fixWritesFrom = writes.length;
  const fixPermissionsFrom = permissions.length;
  const fix = await prompt(ctx, sessionId, "fix the failing test");
  log("fix:", fix.stopReason, fix.ms, "ms");
  const fixReport = {
    stopReason: fix.stopReason,
    text: fix.text,
    toolCalls: fix.updates
      .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
      .map((u) => ({ update: u.sessionUpdate, kind: u.kind, status: u.status, title: u.title })),
    diffs: fix.updates
      .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
      .flatMap((u) => u.content ?? [])
      .filter((c) => c.type === "diff")
      .map((c) => ({ path: relative(workspace, c.path), oldText: c.oldText, newText: c.newText })),
    permissions: permissions.slice(fixPermissionsFrom),
    writes: writes.slice(fixWritesFrom).map((p) => relative(workspace, p)),
  };

  // Cancel while a model streams an answer.
  const cancelAsk = await prompt(ctx, sessionId, "Explain every function in shop/prices.py in detail.", (u) =>
    u.sessionUpdate === "agent_message_chunk" ? 0 : false,
  );
  log("cancel during the answer:", cancelAsk.stopReason, cancelAsk.cancelToResponseMs, "ms after the cancel");

  // Cancel while the project's tests run (a test there sleeps for a minute).
  const slow = await ctx.request("session/new", { cwd: slowWorkspace, mcpServers: [] });
  const cancelTests = await prompt(ctx, slow.sessionId, "fix the failing test", (u) =>
    u.sessionUpdate === "tool_call" && u.kind === "execute" ? 1500 : false,
  );
  log("cancel during the tests:", cancelTests.stopReason, cancelTests.cancelToResponseMs, "ms after the cancel");

  // The same session again, from the store.
  const loadedUpdates = [];
  const before = (updates.get(sessionId) ?? []).length;
  await ctx.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
  loadedUpdates.push(...(updates.get(sessionId) ?? []).slice(before));

  return {
    initialize: init,
    sessionId,
    ask: { ...ask, reads: askReads },
    fix: fixReport,
    cancelAsk: { ...cancelAsk, updates: undefined },
    cancelTests: { ...cancelTests, updates: undefined },
    loaded: loadedUpdates.map((u) => u.sessionUpdate),
    permissions,
    writes: writes.map((p) => relative(workspace, p)),
  };
});

agent.stdin.end();
const code = await new Promise((resolve) => agent.on("exit", (c) => resolve(c)));
process.stdout.write(JSON.stringify({ ...report, agentExit: code }) + "\n");
