// The arguments of the server's `workspace/executeCommand` commands, shaped as
// server/src/lsp/ reads them. No `vscode` import: unit-tested without an editor.
import type { CodeAction, Command, Range } from './lspTypes';

/** The server's command names (see server/src/lsp/commands.rs). */
export const ServerCommand = {
  fix: 'tinycoder.fix',
  edit: 'tinycoder.edit',
  document: 'tinycoder.document',
  generateTests: 'tinycoder.generateTests',
  explain: 'tinycoder.explain',
  ask: 'tinycoder.ask',
  run: 'tinycoder.run',
  runTests: 'tinycoder.runTests',
  cancel: 'tinycoder.cancel',
  undo: 'tinycoder.undo',
  commit: 'tinycoder.commit',
  tasks: 'tinycoder.tasks',
  index: 'tinycoder.index',
} as const;

/** A document as the commands name it. */
export interface DocumentRef {
  uri: string;
  version?: number;
}

/** `{uri, range, version, instruction?}`: edit, document, generateTests and explain (TargetArgs). */
export interface TargetArgs {
  uri: string;
  range: Range;
  version?: number;
  instruction?: string;
}

export function targetArgs(doc: DocumentRef, range: Range, instruction?: string): TargetArgs {
  const args: TargetArgs = { uri: doc.uri, range };
  if (doc.version !== undefined) {
    args.version = doc.version;
  }
  const text = instruction?.trim();
  if (text) {
    args.instruction = text;
  }
  return args;
}

/** `tinycoder.ask [{question, uri?}]`; undefined for a blank question. */
export function askArgs(question: string | undefined, doc?: DocumentRef): { question: string; uri?: string } | undefined {
  const text = question?.trim();
  if (!text) {
    return undefined;
  }
  return doc ? { question: text, uri: doc.uri } : { question: text };
}

/** `tinycoder.run [{request}]`; undefined for a blank request. */
export function runArgs(request: string | undefined): { request: string } | undefined {
  const text = request?.trim();
  return text ? { request: text } : undefined;
}

/** `tinycoder.cancel [{jobId}]`. */
export function cancelArgs(jobId: string): { jobId: string } {
  return { jobId };
}

/** `tinycoder.commit [{message}]`, or no argument: the server then writes the message from the change. */
export function commitArgs(message: string | undefined): unknown[] {
  const text = message?.trim();
  return text ? [{ message: text }] : [];
}

/**
 * The `tinycoder.fix` action's ActionData when the server lists no quick-fix
 * (no diagnostic here): a fix of the line at `range`.
 */
export function fixArgsAt(doc: DocumentRef, range: Range): Record<string, unknown> {
  return { action: 'fix', uri: doc.uri, version: doc.version ?? null, range };
}

/** The server's `tinycoder.fix` command among `actions`: the preferred one if several. */
export function pickFixCommand(actions: ReadonlyArray<CodeAction | Command> | null | undefined): Command | undefined {
  let chosen: { command: Command; preferred: boolean } | undefined;
  for (const a of actions ?? []) {
    const command = 'title' in a && typeof a.command === 'object' ? a.command : (a as Command);
    if (!command || command.command !== ServerCommand.fix) {
      continue;
    }
    const preferred = 'isPreferred' in a && a.isPreferred === true;
    if (!chosen || (preferred && !chosen.preferred)) {
      chosen = { command, preferred };
    }
  }
  return chosen?.command;
}

/** What the agent commands answer: `{taskId, jobId}` (the job id is the progress token). */
export function jobIdOf(result: unknown): string | undefined {
  if (typeof result === 'object' && result !== null && 'jobId' in result) {
    const id = result.jobId;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  }
  return undefined;
}
