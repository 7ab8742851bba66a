// session/close racing other requests of its session through the daemon. The relay stops a closed
// session's child, and used to do it at the close's answer: a request sent after the close (which
// opened the session again in the child) or a prompt the close ended, not answered yet, died with
// the process and was answered agent_crashed ("the session process stopped"), a second close too.
// Found with a random request mix against a daemon. Over stdio the same requests are answered by the
// agent (ok, or session_closed for one the close ended), and so they must be here.
// A close from A while B is attached (B's load came first) is A's only (answered by the daemon, A's
// prompt withdrawn: ok:cancelled or ok:end_turn); one that came first goes to the child, as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClients, tempDir, waitFor } from '../../support/daemon.js';

const ROUNDS = 8;

test("close racing load, prompts, set_mode and another close: each answered by the agent, none agent_crashed; the last connection's close stops the child", { timeout: 120_000 }, async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }] }, args: ['--pool', '0'] });
  const cwd = tempDir();
  const seen = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    const prompt = { sessionId, prompt: [{ type: 'text' as const, text: 'hi' }] };
    const answers = await Promise.all(
      [
        a.agent.request('session/close', { sessionId }),
        b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }),
        a.agent.request('session/prompt', prompt),
        b.agent.request('session/set_mode', { sessionId, modeId: 'default' }),
        a.agent.request('session/close', { sessionId }),
        b.agent.request('session/prompt', prompt),
      ].map((p: Promise<any>) => p.then((r) => (r?.stopReason ? `ok:${r.stopReason}` : 'ok'), (e: any) => String(e?.data?.code ?? e?.message))),
    );
    for (const x of answers) seen.set(x, (seen.get(x) ?? 0) + 1);
    assert.deepEqual([answers[0], answers[4]], ['ok', 'ok'], `round ${round}: both closes succeed (${answers})`);
    // A close that is the last request of its session, from the last connection attached to it,
    // stops the child (the session rests). B loaded the session: A's close only ends A's use of it,
    // B's goes to the child (spec/daemon.md §Relay, Close stop).
    assert.deepEqual(await a.agent.request('session/close', { sessionId }), {});
    assert.deepEqual(await b.agent.request('session/close', { sessionId }), {});
    await waitFor(`round ${round}: the closed session's child to exit`, () => d.childPids().length === 0);
  }
  const outcomes = Object.fromEntries(seen);
  assert.deepEqual(Object.keys(outcomes).filter((k) => !['ok', 'ok:end_turn', 'ok:cancelled', 'session_closed'].includes(k)), [], JSON.stringify(outcomes));
  assert.equal(d.proc.exitCode, null);
});
