import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { findCitations, linkifyCitations } from '../citations';
import { escapeHtml } from '../html';

test('escapeHtml escapes every special character', () => {
  assert.equal(escapeHtml(`<img src=x onerror="a('b')">&`), '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;');
});

test('citations are found with their line, range and offsets', () => {
  const text = 'See src/lib.rs:12 and (tests/test_a.py:3-9), not 10:30 or http://host:80.';
  const found = findCitations(text);
  assert.deepEqual(
    found.map((c) => [c.path, c.line, c.endLine]),
    [
      ['src/lib.rs', 12, undefined],
      ['tests/test_a.py', 3, 9],
    ],
  );
  assert.equal(text.slice(found[0].start, found[0].end), 'src/lib.rs:12');
  assert.equal(text.slice(found[1].start, found[1].end), 'tests/test_a.py:3-9');
});

test('citations in backticks, at the start, and Windows paths', () => {
  assert.deepEqual(
    findCitations('`main.py:1` C:\\w\\a.rs:2').map((c) => `${c.path}@${c.line}`),
    ['main.py@1', 'C:\\w\\a.rs@2'],
  );
  assert.deepEqual(findCitations('line 0 is not one: a.rs:0'), []);
});

test('linkify escapes the text and turns citations into links', () => {
  const html = linkifyCitations('<b>bug</b> & co in src/a-b.rs:4\nok');
  assert.equal(
    html,
    '&lt;b&gt;bug&lt;/b&gt; &amp; co in <a href="#" class="citation" data-path="src/a-b.rs" data-line="4">src/a-b.rs:4</a>\nok',
  );
  assert.equal(linkifyCitations('no links "here"'), 'no links &quot;here&quot;');
});

test('Markdown links to file: URIs with a line anchor are one citation, shown by their label', () => {
  const text = 'Sources: [calc.py:1](file:///tmp/w/calc.py#L1), [my file.py:8](file:///tmp/w/my%20file.py#L8-L9) and a.rs:2';
  const found = findCitations(text);
  assert.deepEqual(
    found.map((c) => [c.path, c.line, c.endLine, c.label]),
    [
      ['/tmp/w/calc.py', 1, undefined, 'calc.py:1'],
      ['/tmp/w/my file.py', 8, 9, 'my file.py:8'],
      ['a.rs', 2, undefined, undefined],
    ],
  );
  assert.equal(
    linkifyCitations('[calc.py:1](file:///tmp/w/calc.py#L1).'),
    '<a href="#" class="citation" data-path="/tmp/w/calc.py" data-line="1">calc.py:1</a>.',
  );
  assert.equal(findCitations('[x](file:///C:/w/a.rs#L3)')[0].path, 'C:/w/a.rs');
});
