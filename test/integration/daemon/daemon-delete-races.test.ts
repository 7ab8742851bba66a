// A delete racing other requests for its session through the daemon: every request is answered (a
// load sent while the child stopped for the delete used to wait in its queue for ever), two deletes
// of one session are one, and nothing is refused session_locked. Found with a random request mix
// against a daemon (close, load and delete: a few requests a run never answered).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClients, tempDir } from '../../support/daemon.js';

const ROUNDS = 12;

// The timeout is a hang detector: before the fix, some of these requests were never answered.
test('delete racing load, close and another delete of its session: all answered, no session_locked, the session gone', { timeout: 120_000 }, async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }] } });
  const cwd = tempDir();
  const seen = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    const params = { sessionId, cwd, mcpServers: [] };
    const answers = await Promise.all(
      [
        a.agent.request('session/delete', { sessionId }),
        b.agent.request('session/load', params),
        a.agent.request('session/close', { sessionId }),
        b.agent.request('session/delete', { sessionId }),
        a.agent.request('session/load', params),
      ].map((p) => p.then(() => 'ok', (e: any) => String(e?.data?.code ?? e?.message))),
    );
    for (const x of answers) seen.set(x, (seen.get(x) ?? 0) + 1);
    assert.deepEqual([answers[0], answers[3]], ['ok', 'ok'], `round ${round}: both deletes succeed (${answers})`);
    const after: any = await b.agent.request('session/load', params).catch((e) => e);
    assert.equal(after?.data?.code, 'session_not_found', `round ${round}: ${JSON.stringify(after)}`);
  }
  const outcomes = Object.fromEntries(seen);
  assert.deepEqual(Object.keys(outcomes).filter((k) => !['ok', 'session_not_found', 'agent_crashed'].includes(k)), [], JSON.stringify(outcomes));
  assert.equal(d.proc.exitCode, null);
});
