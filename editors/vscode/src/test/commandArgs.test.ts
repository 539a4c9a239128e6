import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { askArgs, cancelArgs, commitArgs, fixArgsAt, jobIdOf, pickFixCommand, runArgs, targetArgs } from '../commandArgs';

const range = { start: { line: 3, character: 0 }, end: { line: 5, character: 2 } };
const doc = { uri: 'file:///w/src/lib.rs', version: 7 };

test('target arguments carry uri, range, version and a trimmed instruction', () => {
  assert.deepEqual(targetArgs(doc, range, '  add a timeout '), { uri: doc.uri, range, version: 7, instruction: 'add a timeout' });
  assert.deepEqual(targetArgs({ uri: doc.uri }, range), { uri: doc.uri, range });
  assert.deepEqual(targetArgs(doc, range, '   '), { uri: doc.uri, range, version: 7 }, 'a blank instruction lets the server offer presets');
});

test('ask, run and commit drop blank text', () => {
  assert.deepEqual(askArgs(' why? ', doc), { question: 'why?', uri: doc.uri });
  assert.deepEqual(askArgs('why?'), { question: 'why?' });
  assert.equal(askArgs('  '), undefined);
  assert.equal(askArgs(undefined), undefined);
  assert.deepEqual(runArgs('rename fetch to get'), { request: 'rename fetch to get' });
  assert.equal(runArgs(''), undefined);
  assert.deepEqual(commitArgs(''), []);
  assert.deepEqual(commitArgs(' fix: x '), [{ message: 'fix: x' }]);
  assert.deepEqual(cancelArgs('job-1'), { jobId: 'job-1' });
});

test('the fix command is picked from code actions, preferred first', () => {
  const data = (n: number) => [{ action: 'fix', uri: doc.uri, range, n }];
  const actions = [
    { title: 'Explain', command: { title: 'Explain', command: 'tinycoder.explain', arguments: [] } },
    { title: 'Fix A', command: { title: 'Fix A', command: 'tinycoder.fix', arguments: data(1) } },
    { title: 'Fix B', isPreferred: true, command: { title: 'Fix B', command: 'tinycoder.fix', arguments: data(2) } },
    { title: 'Fix C', command: { title: 'Fix C', command: 'tinycoder.fix', arguments: data(3) } },
  ];
  assert.deepEqual(pickFixCommand(actions)?.arguments, data(2));
  assert.deepEqual(pickFixCommand([actions[1], actions[3]])?.arguments, data(1));
  assert.deepEqual(pickFixCommand([{ title: 'bare', command: 'tinycoder.fix', arguments: data(4) }])?.arguments, data(4));
  assert.equal(pickFixCommand([actions[0]]), undefined);
  assert.equal(pickFixCommand(null), undefined);
});

test('a fix without a listed action targets the cursor as ActionData', () => {
  assert.deepEqual(fixArgsAt(doc, range), { action: 'fix', uri: doc.uri, version: 7, range });
  assert.deepEqual(fixArgsAt({ uri: doc.uri }, range), { action: 'fix', uri: doc.uri, version: null, range });
});

test('job ids are read from command results', () => {
  assert.equal(jobIdOf({ taskId: 't', jobId: 'tinycoder-3' }), 'tinycoder-3');
  assert.equal(jobIdOf({ jobId: 4 }), '4');
  assert.equal(jobIdOf({ undone: true }), undefined);
  assert.equal(jobIdOf(null), undefined);
});
