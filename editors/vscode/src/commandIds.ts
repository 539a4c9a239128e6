// The extension's command ids, as package.json contributes them. No `vscode` import.

/** The VS Code command ids; the server's own ids (tinycoder.fix, ...) are registered by the client. */
export const ClientCommand = {
  fix: 'tinycoder.vscode.fix',
  edit: 'tinycoder.vscode.edit',
  document: 'tinycoder.vscode.document',
  generateTests: 'tinycoder.vscode.generateTests',
  explain: 'tinycoder.vscode.explain',
  ask: 'tinycoder.vscode.ask',
  run: 'tinycoder.vscode.run',
  runTests: 'tinycoder.vscode.runTests',
  cancel: 'tinycoder.vscode.cancel',
  undo: 'tinycoder.vscode.undo',
  commit: 'tinycoder.vscode.commit',
  index: 'tinycoder.vscode.index',
  chat: 'tinycoder.vscode.chat',
  restart: 'tinycoder.vscode.restart',
  menu: 'tinycoder.vscode.menu',
  toggleSuggestions: 'tinycoder.vscode.toggleSuggestions',
  toggleSuggestionsForLanguage: 'tinycoder.vscode.toggleSuggestionsForLanguage',
} as const;
