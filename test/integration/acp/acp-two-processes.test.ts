// Two editors' `troupe acp` processes on one TROUPE_HOME (two windows, or an editor and the daemon):
// a session is written by one process at a time, so that no turn is lost; the other is told why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const script = { replies: [{ when: 'one', items: [{ text: 'first answer' }] }, { when: 'two', items: [{ text: 'second answer' }] }, { when: 'three', items: [{ text: 'third answer' }] }] };

test('a session open in one troupe acp is refused to another (session_locked, naming its pid) until closed there; no turn is lost', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const a = AcpChild.start({ home, script });
  const b = AcpChild.start({ home, script });
  t.after(() => Promise.all([a.close(), b.close()]));
  await Promise.all([a.initialize(), b.initialize()]);
  const sessionId = await a.newSession(cwd);
  assert.equal((await a.prompt(sessionId, 'one')).stopReason, 'end_turn');

  for (const method of ['session/load', 'session/resume'] as const) {
    const refused: any = await b.agent.request(method, { sessionId, cwd, mcpServers: [] }).catch((e) => e);
    assert.equal(refused?.data?.code, 'session_locked', `${method}: ${JSON.stringify(refused)}`);
    assert.equal(refused.data.pid, a.proc.pid);
  }
  const deleted: any = await b.agent.request('session/delete', { sessionId }).catch((e) => e);
  assert.equal(deleted?.data?.code, 'session_locked', 'nor can it be deleted under the writer');
  // A goes on writing its session meanwhile.
  assert.equal((await a.prompt(sessionId, 'two')).stopReason, 'end_turn');

  await a.agent.request('session/close', { sessionId });
  await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await b.prompt(sessionId, 'three')).stopReason, 'end_turn');
  const refusedToA: any = await a.agent.request('session/load', { sessionId, cwd, mcpServers: [] }).catch((e) => e);
  assert.equal(refusedToA?.data?.code, 'session_locked', 'now B holds it');
  await b.agent.request('session/close', { sessionId });

  // Every turn is in the session, as a third editor sees it.
  const c = AcpChild.start({ home, script });
  t.after(() => c.close());
  await c.initialize();
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const said = c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('|');
  assert.equal(said, 'first answer|second answer|third answer');
});

test('a session another troupe acp on the home makes afterwards is in this one\'s session/list, with its title', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const a = AcpChild.start({ home, script });
  const b = AcpChild.start({ home, script });
  t.after(() => Promise.all([a.close(), b.close()]));
  await Promise.all([a.initialize(), b.initialize()]);
  const listed = async () => ((await b.agent.request('session/list', { cwd })) as { sessions: { sessionId: string; title?: string }[] }).sessions;
  assert.deepEqual(await listed(), [], 'B has read the index before A made anything');
  const sessionId = await a.newSession(cwd);
  assert.equal((await a.prompt(sessionId, 'one')).stopReason, 'end_turn');
  // A writes its index entry after the turn, not before the answer: wait for it (bounded).
  let sessions = await listed();
  for (let i = 0; i < 200 && !sessions.some((s) => s.sessionId === sessionId && s.title === 'one'); i++) {
    await new Promise((r) => setTimeout(r, 25));
    sessions = await listed();
  }
  assert.deepEqual(sessions.map((s) => [s.sessionId, s.title]), [[sessionId, 'one']]);
});
