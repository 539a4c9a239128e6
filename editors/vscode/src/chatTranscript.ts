// The chat's conversation: user turns, and replies assembled from
// `tinycoder/chatDelta` notifications keyed by requestId (a reply may also come
// from tinycoder.explain / tinycoder.ask, whose request ids the client did not
// choose). Keeps the session id across turns. No `vscode` import: unit-tested.

export interface ChatDeltaParams {
  sessionId?: string;
  requestId?: string;
  delta: string;
}

export interface ChatResult {
  sessionId: string;
  requestId: string;
  reply: string;
  contextTrimmed?: boolean;
}

export type Turn =
  | { role: 'user'; text: string }
  | {
      role: 'assistant';
      requestId: string;
      /** A reply to a chat turn (not an explain/ask answer): it carries the conversation's session. */
      chat: boolean;
      text: string;
      done: boolean;
      error?: string;
      note?: string;
    };

type Reply = Extract<Turn, { role: 'assistant' }>;

export class ChatTranscript {
  readonly turns: Turn[] = [];
  /** The server's session id, once a reply named it; sent with every later turn. */
  sessionId: string | undefined;
  private counter = 0;

  /** A fresh request id for a turn the client starts. */
  nextRequestId(now: number = Date.now()): string {
    this.counter += 1;
    return `vscode-${now.toString(36)}-${this.counter}`;
  }

  /** Adds the user's message and an empty reply for `requestId`; returns the reply. */
  ask(message: string, requestId: string): Reply {
    this.turns.push({ role: 'user', text: message });
    const reply = this.replyFor(requestId);
    reply.chat = true;
    return reply;
  }

  /** Shows what the user asked for outside the chat (explain, ask), whose reply streams in by itself. */
  note(text: string): void {
    this.turns.push({ role: 'user', text });
  }

  /**
   * Appends a delta to its reply (creating it for an unknown request id). A delta for
   * a finished reply is dropped: the server's notifications and responses are separate
   * queues, so a last delta can come after the whole reply, which already holds it.
   */
  applyDelta(params: ChatDeltaParams): Reply {
    const reply = this.replyFor(params.requestId ?? '');
    if (reply.done) {
      return reply;
    }
    reply.text += params.delta;
    if (params.sessionId && reply.chat) {
      this.sessionId = params.sessionId;
    }
    return reply;
  }

  /** The whole reply arrived: it wins over the deltas (a missed notification is not lost). */
  complete(result: ChatResult): Reply {
    const reply = this.replyFor(result.requestId);
    reply.text = result.reply;
    reply.done = true;
    if (result.contextTrimmed) {
      reply.note = 'Older turns were summarized to fit the model context.';
    }
    if (reply.chat) {
      this.sessionId = result.sessionId;
    }
    return reply;
  }

  /** The request failed. */
  fail(requestId: string, message: string): Reply {
    const reply = this.replyFor(requestId);
    reply.done = true;
    reply.error = message;
    return reply;
  }

  /** Forgets the conversation: the next turn starts a new session. */
  clear(): void {
    this.turns.length = 0;
    this.sessionId = undefined;
  }

  private replyFor(requestId: string): Reply {
    for (let i = this.turns.length - 1; i >= 0; i--) {
      const t = this.turns[i];
      if (t.role === 'assistant' && t.requestId === requestId) {
        return t;
      }
    }
    const reply: Reply = { role: 'assistant', requestId, chat: false, text: '', done: false };
    this.turns.push(reply);
    return reply;
  }
}
