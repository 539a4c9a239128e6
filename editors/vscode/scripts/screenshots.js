// The screenshots of docs/vscode.md: drives a running code-server (with this
// extension installed and a workspace holding calc.py) in headless Chromium
// through the status bar, a chat turn with citations, and an edit shown in the
// refactor preview. Needs playwright-core (NODE_PATH) and a Chromium binary.
//   URL=http://127.0.0.1:8443 FOLDER=/path/to/ws OUT=docs CHROMIUM=/usr/bin/chromium node scripts/screenshots.js
const { chromium } = require('playwright-core');
const OUT = process.env.OUT || '.';
const URL = process.env.URL || 'http://127.0.0.1:8443';
const FOLDER = process.env.FOLDER || process.cwd();
const step = (m) => console.log(new Date().toISOString().slice(11, 19), m);
(async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  page.setDefaultTimeout(60000);
  await page.goto(`${URL}/?folder=${encodeURIComponent(FOLDER)}`);
  await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 120000 });
  step('workbench up');
  await page.waitForTimeout(3000);
  const palette = async (text) => {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget .quick-input-box input');
    await page.keyboard.type(text);
    await page.waitForTimeout(800);
    await page.keyboard.press('Enter');
  };
  // Open calc.py through quick open.
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('calc.py');
  await page.waitForTimeout(1000);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-lines');
  step('calc.py open');
  const status = page.locator('.statusbar-item', { hasText: 'tinycoder' }).first();
  await status.waitFor({ timeout: 60000 });
  await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /tinycoder: \w+ · [^…]/.test(e.textContent || '')), null, { timeout: 60000 }).catch(() => step('status bar has no summary'));
  step('status: ' + (await status.textContent()));
  // The chat.
  await palette('tinycoder: Open Chat');
  const outer = page.frameLocator('iframe.webview.ready');
  const chat = outer.frameLocator('iframe#active-frame');
  await chat.locator('textarea#message').waitFor();
  step('chat open');
  // Put the cursor in median() so the turn is about it.
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('10');
  await page.keyboard.press('Enter');
  await chat.locator('textarea#message').click();
  await chat.locator('textarea#message').fill('Is median() right for lists of even length? Cite the line.');
  await page.keyboard.press('Enter');
  step('chat sent');
  await chat.locator('.turn.assistant:not(.streaming)').first().waitFor({ timeout: 240000 });
  await page.waitForTimeout(500);
  step('chat reply: ' + (await chat.locator('.turn.assistant .text').first().textContent()).slice(0, 300));
  step('citation links: ' + (await chat.locator('a.citation').count()));
  await page.screenshot({ path: `${OUT}/vscode-chat.png` });
  if (await chat.locator('a.citation').count()) {
    await chat.locator('a.citation').first().click();
    await page.waitForTimeout(1500);
    step('after citation click, active line: ' + (await page.locator('.statusbar-item', { hasText: 'Ln ' }).first().textContent()));
  }
  if (process.env.SKIP_EDIT) {
    await browser.close();
    return;
  }
  // An edit of median(), shown in the refactor preview.
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('8');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await palette('tinycoder: Edit Selection');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('add a docstring');
  await page.keyboard.press('Enter');
  step('edit sent');
  await page.screenshot({ path: `${OUT}/vscode-progress.png` });
  await page.waitForSelector('.refactor-preview, [id="workbench.view.bulkEdit"], .bulk-edit-panel', { timeout: 400000 }).catch(async (e) => { step('no preview: ' + e.message); });
  await page.waitForTimeout(2000);
  // Open the diff of the file from the preview's tree.
  const row = page.locator('.monaco-list-row', { hasText: 'calc.py' }).last();
  if (await row.count()) {
    // The server's annotated edits need confirmation: VS Code lists them unchecked; tick the file.
    await row.locator('input[type=checkbox], .codicon-check, .monaco-custom-toggle').first().click().catch((e) => step('no checkbox: ' + e.message));
    await page.waitForTimeout(500);
    await row.click();
    await page.waitForTimeout(2500);
    await page.screenshot({ path: `${OUT}/vscode-preview-diff.png` });
  }
  step('done');
  await browser.close();
})().catch((e) => { console.error('FAIL', e); process.exit(1); });
