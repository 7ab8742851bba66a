// The daemon is transparent to an editor: one scripted session run over stdio against `troupe acp`,
// and through `troupe serve` with the SDK's HTTP and WebSocket clients, gives the same updates (ids
// aside), live and in a later session/load, and the same permission prompts. A relay that drops,
// repeats, reorders or alters an update fails it (the relay once sent only the first block of a
// prompt: test/integration/daemon/daemon-prompt-content.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { Daemon, tempDir, daemonWithClient } from '../../support/daemon.js';

const script = {
  replies: [
    { when: 'first', items: [{ thought: 'Let me read.' }, { text: 'Reading a.txt.' }, { tool_call: { name: 'read_file', input: { path: 'a.txt' } } }] },
    { when: 'write', items: [{ text: 'Writing.' }, { tool_call: { name: 'write_file', input: { path: 'b.txt', content: 'bee' } } }] },
    { when: 'run', items: [{ tool_call: { name: 'run_command', input: { command: 'echo hi' } } }] },
    [{ text: 'Done: ' }, { text: 'all good.' }],
    [{ text: 'Wrote it.' }],
    [{ text: 'Ran it.' }],
  ],
};
const prompts = [
  [
    { type: 'text', text: 'first: read a.txt' },
    { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
    { type: 'resource', resource: { uri: 'file:///c.txt', text: 'sea', mimeType: 'text/plain' } },
  ],
  [{ type: 'text', text: 'write it' }],
  [{ type: 'text', text: '/mode plan' }],
  [{ type: 'text', text: '/mode default' }],
  [{ type: 'text', text: 'run it' }],
];

interface Client {
  agent: { request(method: string, params: unknown): Promise<any> };
  updatesFor(sessionId: string): any[];
  permissions: unknown[];
}

/** Updates with their random ids numbered by first appearance, and paths and times taken out. */
function normalized(updates: any[], cwd: string): unknown[] {
  const ids = new Map<string, string>();
  const text = JSON.stringify(
    updates.filter((u) => u.sessionUpdate !== 'available_commands_update'),
    (k, v) => {
      if (['toolCallId', 'messageId', 'turnId', 'terminalId', 'sessionId'].includes(k) && typeof v === 'string') return ids.get(v) ?? (ids.set(v, `#${ids.size}`), `#${ids.size - 1}`);
      if (k === 'updatedAt') return undefined;
      return typeof v === 'string' ? v.split(cwd).join('<cwd>') : v;
    },
  );
  return JSON.parse(text);
}

/** The scripted session on `client`: its updates live, and the updates of a load by `loader`. */
async function session(client: Client, newSession: (cwd: string) => Promise<string>, loader: () => Promise<Client>) {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'hello\n');
  const sessionId = await newSession(cwd);
  const stops = [];
  for (const prompt of prompts) stops.push((await client.agent.request('session/prompt', { sessionId, prompt })).stopReason);
  const live = normalized(client.updatesFor(sessionId), cwd);
  const other = await loader();
  await other.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  return { stops, live, loaded: normalized(other.updatesFor(sessionId), cwd), permissions: normalized(client.permissions, cwd) };
}

test('an editor sees the same session through the daemon (HTTP and WebSocket) as over stdio, live and loaded', { timeout: 90_000 }, async (t) => {
  const stdio = AcpChild.start({ script });
  t.after(() => stdio.close());
  await stdio.initialize();
  let loader: AcpChild | undefined;
  t.after(() => loader?.close());
  const direct = await session(stdio, (cwd) => stdio.newSession(cwd), async () => {
    await stdio.close();
    loader = AcpChild.start({ script, home: stdio.home });
    await loader.initialize();
    return loader;
  });
  assert.deepEqual(direct.stops, Array(prompts.length).fill('end_turn'));
  assert.ok(direct.live.length > 25 && direct.permissions.length >= 1, `${direct.live.length} updates, ${direct.permissions.length} permission prompts`);

  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  for (const kind of ['http', 'ws'] as const) {
    const client = d.connect(kind);
    const other = d.connect(kind);
    t.after(() => (client.close(), other.close()));
    await client.init();
    const relayed = await session(client, async (cwd) => (await client.agent.request('session/new', { cwd, mcpServers: [] })).sessionId, async () => (await other.init(), other));
    assert.deepEqual(relayed.stops, direct.stops, kind);
    assert.deepEqual(relayed.live, direct.live, `${kind}: live`);
    assert.deepEqual(relayed.loaded, direct.loaded, `${kind}: loaded`);
    assert.deepEqual(relayed.permissions, direct.permissions, `${kind}: permission prompts`);
  }
});

test('a session an editor\'s own troupe acp makes on the daemon\'s home is in the daemon\'s session/list and /v1/sessions', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script: { replies: [[{ text: 'ok' }]] } });
  const cwd = tempDir();
  assert.deepEqual((await c.agent.request('session/list', { cwd })).sessions, [], 'the daemon read its index before the editor made anything');
  const editor = AcpChild.start({ home: d.home, script: { replies: [[{ text: 'ok' }]] } });
  t.after(() => editor.close());
  await editor.initialize();
  const sessionId = await editor.newSession(cwd);
  assert.equal((await editor.prompt(sessionId, 'from the editor')).stopReason, 'end_turn');
  const titled = (s: { sessionId?: string; id?: string; title?: string }) => (s.sessionId ?? s.id) === sessionId && s.title === 'from the editor';
  // The editor's agent writes its index entry after the turn: wait for it (bounded).
  let listed: any[] = [];
  for (let i = 0; i < 200 && !listed.some(titled); i++) {
    if (i) await new Promise((r) => setTimeout(r, 25));
    listed = (await c.agent.request('session/list', { cwd })).sessions;
  }
  assert.deepEqual(listed.map((s) => s.sessionId), [sessionId]);
  assert.ok(listed.some(titled), JSON.stringify(listed));
  assert.ok((await d.api('GET', '/v1/sessions')).json.sessions.some(titled), 'and the management API');
});
