// An MCP server's large results in a real `troupe acp` process (spec/tools.md §7, "Run"): under a
// small heap budget (as a daemon child runs under one, serving every session of its editor), results
// near the 10 MB a message may have are read one after another, each answered cut to what the model
// reads, and none is kept once read; and a result is cut to what the session's log holds of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
/** The agent's heap: under what the results below took before 2026-12-07, over what they take now. */
const HEAP_MB = 52;
const LIMIT = 262_144; // readMaxBytes: the bytes of a call's output the model reads (as JSON)
const note = (more: number) => `\n[… ${more} more characters cut]`;

test(`results near the 10 MB an MCP message may have, one a turn, in an agent with a ${HEAP_MB} MB heap: each answered cut, none kept once read`, async (t) => {
  // 340000 blocks of one character (9.5 MB of JSON): checked into copies and joined whole, it took
  // more than the heap; then six results of one 9.5 MB block: each was kept until the agent exited.
  // (Its output: x, new line, x, …, each new line two bytes of JSON: 87381 of each and an x make 262144.)
  const many = { input: { chars: 340_000, blocks: 340_000 }, output: 'x\n'.repeat(87_381) + 'x' + note(340_000 * 2 - 1 - (87_381 * 2 + 1)) };
  const whole = { input: { chars: 9_500_000, blocks: 1 }, output: 'x'.repeat(LIMIT) + note(9_500_000 - LIMIT) };
  const turns = [many, ...Array.from({ length: 6 }, () => whole)];
  const c = AcpChild.start({
    nodeOptions: [`--max-old-space-size=${HEAP_MB}`],
    script: { replies: turns.flatMap(({ input }) => [[{ tool_call: { name: 'mcp__test__big', input } }], [{ text: 'read' }]]) },
  });
  t.after(() => c.close());
  await c.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const server = { name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_BIG', value: '1' }] };
  const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [server] })) as { sessionId: string };
  for (const [i, { output }] of turns.entries()) {
    const died = () => `the agent died in turn ${i + 1} (exit ${c.proc.exitCode ?? c.proc.signalCode}): ${c.stderr.slice(-1500)}`;
    const { stopReason } = await c.prompt(sessionId, `turn ${i + 1}`).catch((err: unknown) => assert.fail(`${String(err)}; ${died()}`));
    assert.equal(stopReason, 'end_turn');
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.equal(done.status, 'completed', `turn ${i + 1}`);
    assert.ok(done.rawOutput.output === output, `turn ${i + 1}: the output cut, with its note (${String(done.rawOutput.output).slice(-60)})`);
  }
});

test("a result of characters JSON writes wide (中, a control character) is cut to the bytes the log holds, not a turn failed by the log's event limit", async (t) => {
  // Cut to 262144 characters, 100000 control characters were 600 KB of JSON, twice in the call's
  // last event (what the model reads, what the client is shown): over the log's 1 MiB, the whole
  // turn failed (event_too_large), and so did 200000 of 中 (3 bytes each).
  const turns = [
    { input: { chars: 200_000, char: '中' }, kept: Math.floor(LIMIT / 3) },
    { input: { chars: 100_000, char: '\u0001' }, kept: Math.floor(LIMIT / 6) },
  ];
  const c = AcpChild.start({ script: { replies: turns.flatMap(({ input }) => [[{ tool_call: { name: 'mcp__test__big', input } }], [{ text: 'read' }]]) } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const server = { name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_BIG', value: '1' }] };
  const { sessionId } = (await c.agent.request('session/new', { cwd, mcpServers: [server] })) as { sessionId: string };
  for (const { input, kept } of turns) {
    assert.equal((await c.prompt(sessionId, `read ${input.chars} of ${JSON.stringify(input.char)}`)).stopReason, 'end_turn');
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.equal(done.status, 'completed');
    assert.ok(done.rawOutput.output === input.char.repeat(kept) + note(input.chars - kept), `${JSON.stringify(input.char)}: ${String(done.rawOutput.output).slice(-60)}`);
  }
});
