// session/close from one of several connections attached to a session (an editor watching a session
// the CLI runs, `troupe attach`, a second editor window) ends that connection's use of it only: the
// other clients' turns and prompts go on, and the child keeps the session loaded. Until 2026-12-07
// the close went to the child, which cancelled the running turn whoever started it and unloaded the
// session: closing an editor tab on a session the CLI ran cancelled the CLI's turn. The last
// connection's close still goes to the child, which then stops (spec/daemon.md §Relay, Close stop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, daemonWithClients, printDaemonIfFailed, tempDir, waitFor } from '../../support/daemon.js';

const script = {
  replies: [
    { when: 'write once', items: [{ tool_call: { name: 'write_file', input: { path: 'w.txt', content: 'x' } } }] },
    { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
    // After write once's tool result.
    [{ text: 'done' }],
  ],
};

/** A daemon with no warm pool: its only child is the session's. */
const noPool = { script, args: ['--pool', '0'] };

/** A prompt of one text block. */
const prompt = (sessionId: string, t: string): acp.PromptRequest => ({ sessionId, prompt: [{ type: 'text', text: t }] });

test("B's running turn goes on and ends end_turn when A, also attached, closes the session; A is answered {}", { timeout: 60_000 }, async (t) => {
  let closedByA: unknown;
  // B (the CLI) is asked a permission in its turn: A (an editor watching) closes the session meanwhile.
  const permission = async (req: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> => {
    closedByA = await a.agent.request('session/close', { sessionId: req.sessionId });
    return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
  };
  const { d, a, b } = await daemonWithClients(t, noPool, { handlers: { b: { permission } } });
  const cwd = tempDir();
  const sessionId = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await a.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const pids = d.childPids();
  assert.equal(pids.length, 1);
  const r = await b.agent.request('session/prompt', prompt(sessionId, 'write once'));
  assert.deepEqual(closedByA, {}, "A's close is answered {}");
  assert.equal(r.stopReason, 'end_turn', "B's turn was not cancelled by A's close");
  assert.equal(b.permissions.length, 1);
  assert.deepEqual(d.childPids(), pids, 'the child still serves the session');
});

test("A's queued prompt is answered cancelled when A closes while B stays attached; B's turn goes on", { timeout: 60_000 }, async (t) => {
  const box: { sessionId?: string; queuedA?: Promise<any>; closedByA?: unknown } = {};
  const permission = async (): Promise<acp.RequestPermissionResponse> => {
    // A's prompt waits behind B's turn; then A closes the session.
    box.queuedA = a.agent.request('session/prompt', prompt(box.sessionId!, 'hello')).then((x) => x, (e) => e);
    await waitFor("A's prompt queued", async () => ((await b.agent.request('_troupe/session_state', { sessionId: box.sessionId! })) as any).queue?.length === 1);
    box.closedByA = await a.agent.request('session/close', { sessionId: box.sessionId! });
    // A's queued prompt is answered before B's turn goes on.
    assert.equal((await box.queuedA).stopReason, 'cancelled');
    return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
  };
  const { a, b } = await daemonWithClients(t, noPool, { handlers: { b: { permission } } });
  const cwd = tempDir();
  const sessionId = (box.sessionId = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId);
  await a.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const r = await b.agent.request('session/prompt', prompt(sessionId, 'write once'));
  assert.deepEqual(box.closedByA, {});
  assert.equal((await box.queuedA).stopReason, 'cancelled', "A's own prompt is withdrawn with its close");
  assert.equal(r.stopReason, 'end_turn', "B's turn is not");
  assert.equal(b.permissions.length, 1);
});

test("A's running prompt is answered cancelled when A closes while B stays attached; the session stays loaded for B, and B's close (the last) stops the child", { timeout: 60_000 }, async (t) => {
  const { d, a, b } = await daemonWithClients(t, noPool);
  const cwd = tempDir();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const running = a.agent.request('session/prompt', prompt(sessionId, 'hang'));
  await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length > 0, "A's turn running");
  await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const pids = d.childPids();
  assert.equal(pids.length, 1);
  assert.deepEqual(await a.agent.request('session/close', { sessionId }), {});
  assert.equal((await running).stopReason, 'cancelled', "A's own running prompt is withdrawn with its close");
  assert.equal((await b.agent.request('session/prompt', prompt(sessionId, 'hello'))).stopReason, 'end_turn');
  assert.deepEqual(d.childPids(), pids, 'the same child still serves the session: it was not closed in it, nor stopped');
  // B is the last attached: its close goes to the child, which stops (Close stop).
  assert.deepEqual(await b.agent.request('session/close', { sessionId }), {});
  await waitFor('the child to stop after the last close', () => d.childPids().length === 0);
});

test("a file read of B's turn asked of A, which closes the session without answering it, is asked of B instead: B's turn ends", { timeout: 60_000 }, async (t) => {
  const d = await Daemon.start({ script: { replies: [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' } } }], [{ text: 'read it' }]] } });
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  let closedByA: unknown;
  // A (an editor) reads files through its buffers, so the read of B's turn is asked of it; it closes
  // the session instead of answering (its tab closed), and never answers.
  const a = d.connect('http', {
    readTextFile: ((req: acp.ReadTextFileRequest) =>
      a.agent.request('session/close', { sessionId: req.sessionId }).then((x) => ((closedByA = x), new Promise(() => undefined)))) as never,
  });
  const b = d.connect('ws');
  t.after(() => (a.close(), b.close()));
  await a.init({ fs: { readTextFile: true } });
  await b.init({});
  const sessionId = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await a.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const r = await b.agent.request('session/prompt', prompt(sessionId, 'read a.txt'));
  assert.deepEqual(closedByA, {});
  assert.equal(r.stopReason, 'end_turn', "B's turn does not wait for a client that closed the session");
});
