// The chat webview: renders the HTML the extension sends (already escaped and
// linkified there), sends messages, and asks the extension to open citations.
(function () {
  const vscode = acquireVsCodeApi();
  const transcript = document.getElementById('transcript');
  const form = document.getElementById('composer');
  const input = document.getElementById('message');

  function atBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  }

  window.addEventListener('message', (event) => {
    const msg = event.data;
    const follow = atBottom();
    if (msg.type === 'transcript') {
      transcript.innerHTML = msg.html;
    } else if (msg.type === 'turn') {
      const existing = transcript.querySelector(`[data-request="${CSS.escape(msg.requestId)}"]`);
      const holder = document.createElement('div');
      holder.innerHTML = msg.html;
      const node = holder.firstElementChild;
      if (existing && node) {
        existing.replaceWith(node);
      } else if (node) {
        transcript.appendChild(node);
      }
    } else if (msg.type === 'focus') {
      input.focus();
    }
    if (follow) {
      window.scrollTo(0, document.body.scrollHeight);
    }
  });

  transcript.addEventListener('click', (event) => {
    const link = event.target.closest('a.citation');
    if (link) {
      event.preventDefault();
      vscode.postMessage({ type: 'open', path: link.dataset.path, line: Number(link.dataset.line) });
    }
  });

  function send() {
    const text = input.value.trim();
    if (text) {
      vscode.postMessage({ type: 'send', text });
      input.value = '';
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      send();
    }
  });
  document.getElementById('clear').addEventListener('click', () => vscode.postMessage({ type: 'clear' }));
  vscode.postMessage({ type: 'ready' });
})();
