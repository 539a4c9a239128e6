import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ChatTranscript } from '../chatTranscript';
import { chatPage, transcriptHtml } from '../chatHtml';

test('deltas assemble per request id, interleaved', () => {
  const t = new ChatTranscript();
  t.ask('first?', 'r1');
  t.applyDelta({ requestId: 'r1', sessionId: 's1', delta: 'Hel' });
  t.applyDelta({ requestId: 'x9', sessionId: 'sx', delta: 'Explained' });
  t.applyDelta({ requestId: 'r1', sessionId: 's1', delta: 'lo' });
  assert.deepEqual(
    t.turns.map((turn) => (turn.role === 'user' ? `user:${turn.text}` : `${turn.requestId}:${turn.text}:${turn.chat}`)),
    ['user:first?', 'r1:Hello:true', 'x9:Explained:false'],
  );
  assert.equal(t.sessionId, 's1', 'an explain/ask answer does not take over the session');
});

test('the result replaces the streamed text and keeps the session across turns', () => {
  const t = new ChatTranscript();
  t.ask('a', 'r1');
  t.applyDelta({ requestId: 'r1', delta: 'partial' });
  const reply = t.complete({ sessionId: 's1', requestId: 'r1', reply: 'whole reply', contextTrimmed: true });
  assert.equal(reply.text, 'whole reply');
  assert.equal(reply.done, true);
  assert.match(reply.note ?? '', /summarized/);
  assert.equal(t.sessionId, 's1');
  t.ask('b', 'r2');
  t.fail('r2', 'model server down');
  assert.equal(t.sessionId, 's1');
  const last = t.turns[t.turns.length - 1];
  assert.equal(last.role === 'assistant' && last.error, 'model server down');
  t.clear();
  assert.equal(t.sessionId, undefined);
  assert.equal(t.turns.length, 0);
});

test('a delta that comes after the whole reply is not shown twice', () => {
  const t = new ChatTranscript();
  t.ask('shipping?', 'r1');
  t.applyDelta({ requestId: 'r1', delta: 'Doubled.' });
  const footer = '\n\nSources: [shop/shipping.py:4](file:///p/shop/shipping.py#L4)';
  t.complete({ sessionId: 's1', requestId: 'r1', reply: `Doubled.${footer}` });
  const late = t.applyDelta({ requestId: 'r1', sessionId: 's1', delta: footer });
  assert.equal(late.text, `Doubled.${footer}`);
  assert.equal(t.turns.length, 2, 'no new reply for the late delta');
});

test('request ids are unique', () => {
  const t = new ChatTranscript();
  assert.notEqual(t.nextRequestId(1), t.nextRequestId(1));
});

test('the transcript renders escaped, with citation links', () => {
  const t = new ChatTranscript();
  t.ask('<script>alert(1)</script>', 'r1');
  t.complete({ sessionId: 's', requestId: 'r1', reply: 'fix at src/lib.rs:3' });
  const html = transcriptHtml(t.turns);
  assert.ok(!html.includes('<script>'));
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(html.includes('data-path="src/lib.rs" data-line="3"'));
});

test('the page has a CSP allowing only the nonce script and the extension style', () => {
  const page = chatPage({ cspSource: 'vscode-resource:', nonce: 'abc', scriptUri: 'vscode-resource:/chat.js', styleUri: 'vscode-resource:/chat.css' });
  assert.match(page, /Content-Security-Policy" content="default-src 'none'; style-src vscode-resource:; script-src 'nonce-abc'/);
  assert.match(page, /<script nonce="abc" src="vscode-resource:\/chat.js"><\/script>/);
  assert.doesNotMatch(page, /<script>/);
  assert.doesNotMatch(page, /style="/);
});
