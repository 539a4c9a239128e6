// What the status bar says about the backend: from `tinycoder/configuration`
// (the server's effective keys) when it answers, else from the settings sent.
// No `vscode` import: unit-tested.
import { lookup } from './settings';

/** One entry of `tinycoder/configuration` (values rendered as TOML: strings quoted). */
export interface ConfigurationEntry {
  key: string;
  value: string;
  origin: string;
}

export interface BackendSummary {
  kind: string;
  model: string;
  url?: string;
}

/** A TOML-rendered value as plain text (`"ollama"` → `ollama`). */
export function plainValue(rendered: string): string {
  if (rendered.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(rendered);
      if (typeof v === 'string') {
        return v;
      }
    } catch {
      // Not JSON after all (a TOML escape JSON lacks): keep the text between the quotes.
      return rendered.replace(/^"|"$/g, '');
    }
  }
  return rendered;
}

/** The backend and coder model from the server's effective configuration. */
export function summaryFromEntries(entries: ReadonlyArray<ConfigurationEntry>): BackendSummary {
  const get = (key: string) => {
    const e = entries.find((x) => x.key === key);
    return e ? plainValue(e.value) : undefined;
  };
  return { kind: get('backend.kind') ?? 'auto', model: get('models.coder.name') ?? '?', url: get('backend.url') };
}

/** The same from the initializationOptions sent (the server's defaults fill the gaps). */
export function summaryFromSettings(settings: unknown): BackendSummary {
  const str = (key: string) => {
    const v = lookup(settings, key);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  return { kind: str('backend.kind') ?? 'auto', model: str('models.coder.name') ?? 'default model', url: str('backend.url') };
}

/** The status bar text: `$(hubot) ollama · qwen2.5-coder:1.5b`, then the running job's title. */
export function statusText(summary: BackendSummary, progressTitle?: string): string {
  const base = `tinycoder: ${summary.kind} · ${summary.model}`;
  return progressTitle ? `$(sync~spin) ${progressTitle}` : `$(hubot) ${base}`;
}
