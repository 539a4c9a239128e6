import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plainValue, statusText, summaryFromEntries, summaryFromSettings } from '../configurationSummary';
import { ProgressTracker } from '../progressTracker';
import { resolveServerPath } from '../serverPath';

test('the backend summary comes from the server configuration entries', () => {
  const entries = [
    { key: 'backend.kind', value: '"ollama"', origin: 'default' },
    { key: 'backend.url', value: '"http://127.0.0.1:11434"', origin: 'default' },
    { key: 'models.coder.name', value: '"qwen2.5-coder:1.5b"', origin: 'editor' },
  ];
  assert.deepEqual(summaryFromEntries(entries), { kind: 'ollama', model: 'qwen2.5-coder:1.5b', url: 'http://127.0.0.1:11434' });
  assert.equal(plainValue('42'), '42');
  assert.equal(statusText(summaryFromEntries(entries)), '$(hubot) tinycoder: ollama · qwen2.5-coder:1.5b');
  assert.equal(statusText(summaryFromEntries(entries), 'tinycoder: fix'), '$(sync~spin) tinycoder: fix');
});

test('without the server, the summary comes from the settings sent', () => {
  assert.deepEqual(summaryFromSettings({ backend: { kind: 'embedded' } }), { kind: 'embedded', model: 'default model', url: undefined });
});

test('progress labels follow begin, report and end per token', () => {
  const p = new ProgressTracker();
  assert.equal(p.apply('a', { kind: 'begin', title: 'tinycoder: fix' }), 'tinycoder: fix');
  assert.equal(p.apply('a', { kind: 'report', message: 'attempt 2' }), 'tinycoder: fix — attempt 2');
  assert.equal(p.apply(7, { kind: 'begin', title: 'tinycoder: ask' }), 'tinycoder: ask (+1)');
  assert.deepEqual(p.running(), ['a', '7']);
  assert.equal(p.apply(7, { kind: 'end' }), 'tinycoder: fix — attempt 2');
  assert.equal(p.apply('a', { kind: 'end' }), undefined);
});

test('the server binary is found on PATH or at a path, and reported when missing', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinycoder-path-'));
  const bin = path.join(dir, 'tinycoder');
  fs.writeFileSync(bin, '#!/bin/sh\n');
  fs.chmodSync(bin, 0o755);
  fs.writeFileSync(path.join(dir, 'plain'), 'not executable');
  assert.deepEqual(resolveServerPath('tinycoder', { PATH: `/nonexistent${path.delimiter}${dir}` }), { found: true, path: bin });
  assert.deepEqual(resolveServerPath(bin, {}), { found: true, path: bin });
  assert.deepEqual(resolveServerPath('./tinycoder', {}, dir), { found: true, path: bin });
  assert.equal(resolveServerPath('tinycoder', { PATH: '/nonexistent' }).found, false);
  const missing = resolveServerPath(path.join(dir, 'plain'), {});
  assert.equal(missing.found, false);
  assert.match(missing.found ? '' : missing.reason, /not executable/);
});
