import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { suggestionsOn, toggled, toggleLabel } from '../suggestions';

test('suggestions are on unless a setting turns them off', () => {
  assert.equal(suggestionsOn({ effective: undefined, global: undefined, language: undefined }), true);
  assert.equal(suggestionsOn({ effective: true, global: true, language: undefined }), true);
  assert.equal(suggestionsOn({ effective: false, global: true, language: false }), false);
});

test('toggling for every language flips the general value only', () => {
  assert.deepEqual(toggled({ effective: true, global: undefined, language: undefined }, false), { value: false, forLanguage: false });
  assert.deepEqual(toggled({ effective: false, global: false, language: undefined }, false), { value: true, forLanguage: false });
  // A language switched off stays off when the general value is flipped on.
  assert.deepEqual(toggled({ effective: false, global: true, language: false }, false), { value: false, forLanguage: false });
});

test('toggling for a language flips what that language sees', () => {
  assert.deepEqual(toggled({ effective: true, global: true, language: undefined }, true), { value: false, forLanguage: true });
  assert.deepEqual(toggled({ effective: false, global: true, language: false }, true), { value: true, forLanguage: true });
  assert.deepEqual(toggled({ effective: false, global: false, language: undefined }, true), { value: true, forLanguage: true });
});

test('the menu line says the state and what a click does', () => {
  assert.equal(toggleLabel(true, 'python'), '$(sparkle) Suggestions on in python: turn off');
  assert.equal(toggleLabel(false, undefined), '$(circle-slash) Suggestions off: turn on');
});
