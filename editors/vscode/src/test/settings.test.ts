import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { lookup, mergeSettings } from '../settings';

test('typed settings override the raw object at their keys and keep its others', () => {
  const raw = { backend: { kind: 'ollama', url: 'http://a:1', connect_timeout_ms: 10 }, models: { coder: { name: 'x', num_ctx: 4096 } } };
  const merged = mergeSettings(raw, { backendKind: 'openai', coderModel: 'qwen2.5-coder:7b' });
  assert.deepEqual(merged, {
    backend: { kind: 'openai', url: 'http://a:1', connect_timeout_ms: 10 },
    models: { coder: { name: 'qwen2.5-coder:7b', num_ctx: 4096 } },
  });
  assert.equal(raw.backend.kind, 'ollama', 'the raw settings are not modified');
});

test('unset typed settings (empty or undefined) leave the raw object alone', () => {
  const raw = { backend: { kind: 'embedded' } };
  assert.deepEqual(mergeSettings(raw, { backendKind: '', backendUrl: '  ', coderModel: undefined }), raw);
});

test('typed settings create the tables they need', () => {
  assert.deepEqual(mergeSettings(undefined, { backendUrl: ' http://127.0.0.1:8080 ', coderModel: 'm' }), {
    backend: { url: 'http://127.0.0.1:8080' },
    models: { coder: { name: 'm' } },
  });
  assert.deepEqual(mergeSettings({ backend: 'bogus' }, { backendKind: 'auto' }), { backend: { kind: 'auto' } });
  assert.deepEqual(mergeSettings(['not', 'a', 'table'], {}), {});
});

test('lookup follows dotted keys', () => {
  assert.equal(lookup({ models: { coder: { name: 'm' } } }, 'models.coder.name'), 'm');
  assert.equal(lookup({ models: 'x' }, 'models.coder.name'), undefined);
});
