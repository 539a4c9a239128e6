// Finds the tinycoder binary before the client starts it, so a missing one is
// reported as such rather than as a crashed server. No `vscode` import.
import * as fs from 'fs';
import * as path from 'path';

export type Resolution = { found: true; path: string } | { found: false; reason: string };

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The binary `configured` names: a path (absolute, `~/`, or relative to
 * `workspaceRoot`) is checked as is; a bare name is looked up in `PATH`.
 */
export function resolveServerPath(
  configured: string,
  env: NodeJS.ProcessEnv = process.env,
  workspaceRoot?: string,
): Resolution {
  const name = configured.trim() || 'tinycoder';
  const exts = process.platform === 'win32' ? ['', '.exe'] : [''];
  if (name.includes('/') || name.includes('\\')) {
    let file = name.startsWith('~/') ? path.join(env.HOME ?? '', name.slice(2)) : name;
    if (!path.isAbsolute(file) && workspaceRoot) {
      file = path.join(workspaceRoot, file);
    }
    for (const ext of exts) {
      if (isExecutable(file + ext)) {
        return { found: true, path: file + ext };
      }
    }
    return { found: false, reason: `${file} does not exist or is not executable` };
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (isExecutable(file)) {
        return { found: true, path: file };
      }
    }
  }
  return { found: false, reason: `\`${name}\` is not on PATH` };
}
