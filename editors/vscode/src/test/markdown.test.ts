import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { inlineHtml, markdownHtml } from '../markdown';
import { turnHtml } from '../chatHtml';

test('a reply with prose, a list, a fenced block and a Sources line', () => {
  const reply = [
    '## The bug',
    '`total_price` in shop/prices.py:9 **overwrites** the total:',
    '',
    '- it assigns with `=`',
    '- it should add with `+=`',
    '',
    '```python',
    'total += item_price(unit_price, quantity)  # <b>not html</b>',
    '```',
    'Sources: [shop/prices.py:9](file:///w/shop/prices.py#L9)',
  ].join('\n');
  assert.equal(
    markdownHtml(reply),
    '<h4>The bug</h4>' +
      '<p><code>total_price</code> in <a href="#" class="citation" data-path="shop/prices.py" data-line="9">shop/prices.py:9</a> <strong>overwrites</strong> the total:</p>' +
      '<ul><li>it assigns with <code>=</code></li><li>it should add with <code>+=</code></li></ul>' +
      '<pre><code class="language-python">total += item_price(unit_price, quantity)  # &lt;b&gt;not html&lt;/b&gt;</code></pre>' +
      '<p>Sources: <a href="#" class="citation" data-path="/w/shop/prices.py" data-line="9">shop/prices.py:9</a></p>',
  );
});

test('nothing the model writes becomes HTML', () => {
  const html = markdownHtml('<script>alert(1)</script>\n**<img src=x onerror=y>**\n`<i>`');
  assert.ok(!html.includes('<script') && !html.includes('<img') && !html.includes('<i>'), html);
  assert.ok(html.includes('&lt;script&gt;') && html.includes('<strong>&lt;img'), html);
});

test('a fence still open while streaming shows as code to the end', () => {
  assert.equal(markdownHtml('Fix:\n```py\ndef f():\n    return 1'), '<p>Fix:</p><pre><code class="language-py">def f():\n    return 1</code></pre>');
});

test('numbered lists, continued items, line breaks and citations in code spans', () => {
  assert.equal(markdownHtml('1. one\n   more\n2) two\nafter'), '<ol><li>one more</li><li>two</li></ol><p>after</p>');
  assert.equal(markdownHtml('a\nb'), '<p>a<br>b</p>');
  assert.equal(
    inlineHtml('see `main.py:3` and a*b*c'),
    'see <code><a href="#" class="citation" data-path="main.py" data-line="3">main.py:3</a></code> and a*b*c',
  );
});

test('the user sees their own words as typed, the reply as Markdown', () => {
  const user = turnHtml({ role: 'user', text: '**why** `x`?' });
  assert.ok(user.includes('**why** `x`?'), user);
  const reply = turnHtml({ role: 'assistant', requestId: 'r1', chat: true, text: '**because**', done: true });
  assert.ok(reply.includes('<div class="text md"><p><strong>because</strong></p></div>'), reply);
});
