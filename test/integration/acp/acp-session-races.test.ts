// Requests for one session sent all at once, as a busy client (or several editor panes) may: a
// delete racing a load, a prompt, a close, a fork and a resume. Each is answered with a result or
// a clear error, the delete wins in the end, and nothing is left locked or misread. Found with a
// random request mix (28 of them, 25,000 requests): a reopen racing the delete's tombstone read the
// new file at the old one's offsets (log_corrupt) and left the log open, so the session stayed
// "open for writing in this process" (session_locked) for the life of the agent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const ROUNDS = 25;
const script = { replies: [{ when: 'hi', items: [{ text: 'hello' }] }, { when: 'again', items: [{ text: 'hello again' }] }] };

test('a delete racing load, prompt, close, fork and resume of its session: every request answered, no log_corrupt or session_locked, no lock left', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const agent = AcpChild.start({ script });
  t.after(() => agent.close());
  await agent.initialize();
  const seen = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const sessionId = await agent.newSession(cwd);
    await agent.prompt(sessionId, 'hi');
    // Half the rounds start from a session at rest (closed): the racing requests then reopen it from its log.
    if (round % 2 === 1) await agent.agent.request('session/close', { sessionId });
    const params = { sessionId, cwd, mcpServers: [] };
    const answers = await Promise.all(
      [
        agent.agent.request('session/load', params),
        agent.agent.request('session/delete', { sessionId }),
        agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] }),
        agent.agent.request('session/close', { sessionId }),
        agent.agent.request('session/fork', params),
        agent.agent.request('session/resume', params),
      ].map((p) => p.then(() => 'ok', (e: any) => String(e?.data?.code ?? e?.message))),
    );
    for (const a of answers) seen.set(a, (seen.get(a) ?? 0) + 1);
    // The delete is done: the session is gone for every later request.
    const after: any = await agent.agent.request('session/load', params).catch((e) => e);
    assert.equal(after?.data?.code, 'session_not_found', `round ${round}: ${JSON.stringify(after)}`);
  }
  const outcomes = Object.fromEntries(seen);
  assert.equal(outcomes.log_corrupt, undefined, JSON.stringify(outcomes));
  assert.equal(outcomes.session_locked, undefined, JSON.stringify(outcomes));
  assert.deepEqual(Object.keys(outcomes).filter((k) => !['ok', 'session_not_found', 'session_closed'].includes(k)), [], JSON.stringify(outcomes));
  assert.deepEqual(readdirSync(join(agent.home, 'sessions')).filter((f) => f.endsWith('.lock') && f !== 'index.json.lock'), [], 'no session lock left');
  assert.equal(agent.proc.exitCode, null);
  assert.deepEqual(agent.schemaErrors, []);
});
