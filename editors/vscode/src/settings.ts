// The server's initializationOptions: the raw `tinycoder.settings` object
// (shaped like tinycoder.toml) with the typed settings laid over it.
// No `vscode` import: unit-tested without an editor.

export type TomlTable = { [key: string]: unknown };

/** The typed settings that map onto tinycoder.toml keys; empty = not set. */
export interface TypedSettings {
  backendKind?: string;
  backendUrl?: string;
  coderModel?: string;
}

/** Where each typed setting lands in tinycoder.toml. */
export const TYPED_KEYS: ReadonlyArray<[keyof TypedSettings, string[]]> = [
  ['backendKind', ['backend', 'kind']],
  ['backendUrl', ['backend', 'url']],
  ['coderModel', ['models', 'coder', 'name']],
];

function isTable(v: unknown): v is TomlTable {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy of a JSON-shaped value (settings come from JSON). */
function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v ?? {})) as T;
}

/**
 * `raw` with every set typed setting written at its key. The raw object is not
 * modified; a typed setting replaces a non-table value found on its path.
 */
export function mergeSettings(raw: unknown, typed: TypedSettings): TomlTable {
  const merged: TomlTable = isTable(raw) ? copy(raw) : {};
  for (const [name, path] of TYPED_KEYS) {
    const value = typed[name];
    // "auto" is the server's default kind, but a user who picks it means it: write it too.
    if (value === undefined || value === null || String(value).trim() === '') {
      continue;
    }
    let table = merged;
    for (const key of path.slice(0, -1)) {
      if (!isTable(table[key])) {
        table[key] = {};
      }
      table = table[key] as TomlTable;
    }
    table[path[path.length - 1]] = String(value).trim();
  }
  return merged;
}

/** The value at a dotted `key` of `table` (undefined when absent). */
export function lookup(table: unknown, key: string): unknown {
  let v: unknown = table;
  for (const part of key.split('.')) {
    if (!isTable(v)) {
      return undefined;
    }
    v = v[part];
  }
  return v;
}
