// Whether ghost text (inline completion) is on, globally and per language.
// No `vscode` import: unit-tested without an editor.

/** What `tinycoder.suggestions.enabled` says, as VS Code's `inspect()` reports it. */
export interface SuggestionSetting {
  /** The value for the document's language where one is set, else the general one. */
  effective: boolean | undefined;
  /** The user's general (not language-specific) value. */
  global: boolean | undefined;
  /** The user's value for the language. */
  language: boolean | undefined;
}

/** Whether the extension asks the server for a suggestion (on unless a setting says off). */
export function suggestionsOn(setting: SuggestionSetting): boolean {
  return setting.effective !== false;
}

/** What a toggle writes, and where: for the language, or for every language. */
export function toggled(setting: SuggestionSetting, forLanguage: boolean): { value: boolean; forLanguage: boolean } {
  if (forLanguage) {
    return { value: !suggestionsOn({ ...setting, effective: setting.language ?? setting.effective }), forLanguage };
  }
  return { value: setting.global === false, forLanguage };
}

/** The status bar menu's line for the toggle. */
export function toggleLabel(on: boolean, language: string | undefined): string {
  const where = language ? ` in ${language}` : '';
  return on ? `$(sparkle) Suggestions on${where}: turn off` : `$(circle-slash) Suggestions off${where}: turn on`;
}
