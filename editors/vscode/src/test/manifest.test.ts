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
    configuration: { properties: Record<string, unknown> };
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

test("every server command the extension sends is one the server's commands.rs names", () => {
  const source = fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'server', 'src', 'lsp', 'commands.rs'), 'utf8');
  for (const id of Object.values(ServerCommand)) {
    assert.ok(source.includes(`=> "${id}"`), id);
  }
});
