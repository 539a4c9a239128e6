import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientCommand } from '../commandIds';
import { ServerCommand } from '../commandArgs';

interface Manifest {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command?: string; submenu?: string }[]>;
    keybindings: { command: string }[];
    configuration: { properties: Record<string, { scope?: string }> };
  };
  capabilities?: {
    untrustedWorkspaces?: { supported: boolean | 'limited'; restrictedConfigurations?: string[] };
  };
}

// out/test/ → the package root.
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as Manifest;

test('package.json contributes exactly the commands the extension registers', () => {
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, Object.values(ClientCommand).sort());
});

test('no extension command takes a server command id (the client registers those)', () => {
  const server = new Set<string>(Object.values(ServerCommand));
  for (const id of Object.values(ClientCommand)) {
    assert.ok(!server.has(id), id);
  }
});

test('menus and keybindings name contributed commands', () => {
  const known = new Set(manifest.contributes.commands.map((c) => c.command));
  const used = [
    ...Object.values(manifest.contributes.menus).flatMap((items) => items.flatMap((i) => (i.command ? [i.command] : []))),
    ...manifest.contributes.keybindings.map((k) => k.command),
  ];
  assert.ok(used.length > 10);
  for (const id of used) {
    assert.ok(known.has(id), id);
  }
});

test('the typed settings read by the extension are declared', () => {
  for (const key of ['serverPath', 'settings', 'backend.kind', 'backend.url', 'models.coder.name']) {
    assert.ok(`tinycoder.${key}` in manifest.contributes.configuration.properties, key);
  }
});

// Settings that pick an executable, a model server or a model: a cloned repository's
// .vscode/settings.json must not set them, so only the user's (machine) settings count.
const MACHINE_ONLY = ['serverPath', 'backend.kind', 'backend.url', 'models.coder.name'];

test('settings that pick the binary, the model server or a model are machine settings', () => {
  for (const key of MACHINE_ONLY) {
    const p = manifest.contributes.configuration.properties[`tinycoder.${key}`];
    assert.equal(p.scope, 'machine', key);
  }
});

test('untrusted workspaces are declared, and restricted mode ignores their values of those settings', () => {
  const untrusted = manifest.capabilities?.untrustedWorkspaces;
  assert.ok(untrusted, 'capabilities.untrustedWorkspaces must be declared');
  if (untrusted.supported === 'limited') {
    const restricted = new Set(untrusted.restrictedConfigurations ?? []);
    for (const key of [...MACHINE_ONLY, 'settings']) {
      assert.ok(restricted.has(`tinycoder.${key}`), key);
    }
  } else {
    assert.equal(untrusted.supported, false);
  }
});

test("every server command the extension sends is one the server's commands.rs names", () => {
  const source = fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'server', 'src', 'lsp', 'commands.rs'), 'utf8');
  for (const id of Object.values(ServerCommand)) {
    assert.ok(source.includes(`=> "${id}"`), id);
  }
});
