// A child whose session log cannot be written (a full disk; here the kernel's file-size limit, set
// on that one real child with prlimit, makes its writes fail with EFBIG) is not a crash: its prompt
// fails with log_write_failed, the child is neither killed nor restarted, the other session's child
// streams on, and once writes work the session goes on in the same child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { daemonWithClients, tempDir } from '../../support/daemon.js';

const longReply = Array.from({ length: 2000 }, (_, i) => ({ text: `chunk ${i} of a reply longer than the file size limit. ` }));
const script = { replies: [{ when: 'long', items: longReply }, { when: 'short', items: [{ text: 'a short answer' }] }] };

test('a session whose log cannot be written fails its prompt with log_write_failed; its child is not restarted and the other session is untouched', async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script });
  const cwd = tempDir();
  const sa = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const sb = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const child = async (sessionId: string) => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  const { pid } = await child(sa);
  execFileSync('prlimit', ['--pid', String(pid), '--fsize=65536:unlimited']);

  const [failed, other] = await Promise.all([
    a.agent.request('session/prompt', { sessionId: sa, prompt: [{ type: 'text', text: 'long' }] }).catch((e) => e),
    b.agent.request('session/prompt', { sessionId: sb, prompt: [{ type: 'text', text: 'long' }] }),
  ]);
  assert.equal(failed?.data?.code, 'log_write_failed', JSON.stringify(failed));
  assert.equal(failed.code, -32026);
  assert.equal(other.stopReason, 'end_turn');
  assert.equal(b.updatesFor(sb, 'agent_message_chunk').length, longReply.length, 'the other session got every update');

  const after = await child(sa);
  assert.equal(after.pid, pid, 'the same child');
  assert.equal(after.restarts, 0);

  execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:unlimited']);
  const next = await a.agent.request('session/prompt', { sessionId: sa, prompt: [{ type: 'text', text: 'short' }] });
  assert.equal(next.stopReason, 'end_turn');
  assert.equal((await child(sa)).pid, pid);
  // The events the failed writes lost had been sent: the next ones take their seqs. The client is
  // told, and is sent them (the relay used to drop them as already sent: the next turn went unseen).
  await a.until(() => a.updatesFor(sa, 'agent_message_chunk').some((u) => u.content.text === 'a short answer'), 'the next turn, live');
  const lost = a.notifications.filter((n) => n.method === '_troupe/updates_lost');
  assert.equal(lost.length, 1, JSON.stringify(lost));
  const { keptSeq, sentSeq } = lost[0]!.params as { keptSeq: number; sentSeq: number };
  assert.ok(keptSeq < sentSeq);
  const reader = d.connect('http');
  t.after(() => reader.close());
  await reader.init();
  await reader.agent.request('session/load', { sessionId: sa, cwd, mcpServers: [] });
  // From there on the client was sent the history as it is (besides what was lost).
  const seen = new Set(a.updatesFor(sa).map((u) => JSON.stringify(u)));
  const replayedSince = reader.updatesFor(sa).filter((u: any) => u._meta?.troupe?.seq > keptSeq);
  assert.ok(replayedSince.length > 0);
  // All but the prompt a sent, which it is not sent back.
  const unseen = replayedSince.filter((u: any) => !seen.has(JSON.stringify(u)));
  assert.deepEqual(unseen.map((u: any) => [u.sessionUpdate, u.content?.text]), [['user_message_chunk', 'short']]);
});
