// Relay edge cases found by an audit: who a child's request goes to while prompts of two
// connections are queued.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, tempDir, waitFor } from '../../support/daemon.js';

const script = {
  replies: [
    { when: 'write twice', items: [{ tool_call: { name: 'write_file', input: { path: 'one.txt', content: '1' } } }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
    // After write twice's first tool result: a second write, which asks again.
    [{ tool_call: { name: 'write_file', input: { path: 'two.txt', content: '2' } } }],
    [{ text: 'both written' }],
  ],
};

test('a permission asked in the running turn goes to the connection that prompted it, not to one whose prompt is queued behind it', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const b = d.connect('http');
  let queuedB: Promise<unknown> | undefined;
  const sessionBox: { id?: string } = {};
  // A holds its first permission answer until B's prompt waits in the session's queue.
  const a = d.connect('http', {
    permission: async () => {
      if (!queuedB) {
        queuedB = b.agent.request('session/prompt', { sessionId: sessionBox.id!, prompt: [{ type: 'text', text: 'hello' }] });
        await waitFor('B queued', async () => ((await a.agent.request('_troupe/session_state', { sessionId: sessionBox.id! })) as any).queue?.length === 1);
      }
      return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
    },
  });
  t.after(() => (a.close(), b.close()));
  await a.init();
  await b.init();
  const cwd = tempDir();
  const sessionId = (sessionBox.id = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId);
  // B attaches (it sees the session's updates from here on).
  await b.agent.request('_troupe/session_state', { sessionId });
  const r = await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write twice' }] });
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(((await queuedB) as any).stopReason, 'end_turn');
  assert.equal(a.permissions.length, 2, 'both permissions of A turn went to A');
  assert.equal(b.permissions.length, 0, 'B, whose prompt waited behind, was asked nothing');
});

