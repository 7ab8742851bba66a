// What an editor offered at `initialize` decides which of its own methods the agent calls (file
// reads and writes through its buffers, commands in its terminals), by one rule wherever the offer
// came from: an ACP client's initialize, a daemon's `_meta.troupe.clientCapabilities` to a pooled
// child, or a later initialize; and for every session, open or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const workspace = () => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  return cwd;
};
const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });
/** One turn: a read, a write and a command; then a closing reply. */
const toolTurn = (n: number) => [
  [call('read_file', { path: 'a.txt' }), call('write_file', { path: `b${n}.txt`, content: 'new\n' }), call('run_command', { command: 'echo ran' })],
  [{ text: 'done' }],
];
/** Which of the client's methods a turn of `toolTurn` called. */
const used = (c: AcpChild) => ({ fs: c.fsCalls.map((f) => f.method), terminals: c.terminalCalls.filter((x) => x.startsWith('create')).length });

test('an offer that is not `true` is no offer, from initialize and from a daemon\'s _meta alike (a warm-pool child served what a spawned one refused)', async (t) => {
  // Not what ACP's schema says (booleans): the SDK reads these at initialize as not offered, but
  // read from a daemon's _meta as they were, "yes" and {} offered a read and a terminal.
  const offered = { fs: { readTextFile: 'yes', writeTextFile: true }, terminal: {} };
  const seen: unknown[] = [];
  for (const supervised of [false, true]) {
    const c = AcpChild.start({ script: { replies: toolTurn(1) }, supervised });
    t.after(() => c.close());
    const cwd = workspace();
    // A pooled child is initialized with nothing; the request that opens a session carries the offer.
    await c.initialize((supervised ? {} : offered) as never);
    const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [], ...(supervised ? { _meta: { troupe: { clientCapabilities: offered } } } : {}) })).sessionId;
    assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
    seen.push(used(c));
    assert.deepEqual(used(c), { fs: ['write'], terminals: 0 }, `supervised: ${supervised}: only the write, the one offered as ACP says`);
    assert.ok(c.updatesFor(sessionId, 'tool_call_update').some((u) => u.rawOutput?.output?.includes('on disk')), 'the read went to the disk');
    assert.deepEqual(c.schemaErrors, []);
    await c.close();
  }
  assert.deepEqual(seen[0], seen[1]);
});

test('a second initialize that withdraws fs and terminal: a session already open stops asking the editor for them', async (t) => {
  const c = AcpChild.start({ script: { replies: [...toolTurn(1), ...toolTurn(2)] } });
  t.after(() => c.close());
  const cwd = workspace();
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
  const sessionId = await c.newSession(cwd);
  await c.prompt(sessionId, 'first');
  // a.txt read; b1.txt, with nothing on disk, asked for (an unsaved buffer it would replace) by the
  // permission prompt's preview and by the write, then written.
  const first = { fs: ['read', 'read', 'read', 'write'], terminals: 1 };
  assert.deepEqual(used(c), first);
  await c.initialize({});
  await c.prompt(sessionId, 'second');
  assert.deepEqual(used(c), first, 'nothing more asked of the editor');
  assert.equal(readFileSync(join(cwd, 'b2.txt'), 'utf8'), 'new\n', 'the write went to the disk');
  assert.ok(c.updatesFor(sessionId, 'tool_call_update').some((u) => /ran/.test(u.rawOutput?.output ?? '')), 'the command ran here');
  assert.deepEqual(c.schemaErrors, []);
});
