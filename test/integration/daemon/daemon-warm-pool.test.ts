// The warm pool: a pooled child is initialized while it waits, before any client is known; the
// client whose session takes it still gets its own capabilities served (they come with the
// session's first request, spec/daemon.md §Warm pool).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, tempDir } from '../../support/daemon.js';

const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });

test('a pooled child initialized ahead serves the capabilities of the client whose session takes it', async (t) => {
  const d = await Daemon.start({ script: { replies: [[call('read_file', { path: 'a.txt' })], [{ text: 'read it' }]] }, env: { TROUPE_LOG: 'debug' } });
  t.after(() => d.stop());
  const deadline = Date.now() + 20_000;
  let ahead: RegExpExecArray | null;
  while (!(ahead = /pooled child initialized ahead \{"pid":(\d+)\}/.exec(d.stderr))) {
    if (Date.now() > deadline) throw new Error(`the pooled child was not initialized ahead: ${d.stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const reads: string[] = [];
  const c = d.connect('http', { readTextFile: (req) => (reads.push(req.path), { content: 'in the editor buffer\n' }) });
  t.after(() => c.close());
  await c.init({ fs: { readTextFile: true } });
  const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  const listed = (await d.api('GET', '/v1/sessions')).json.sessions.find((s: any) => s.id === sessionId);
  assert.equal(listed?.child?.pid, Number(ahead[1]), 'the session runs in the child initialized ahead');
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const r = await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
  assert.equal(r.stopReason, 'end_turn');
  assert.deepEqual(reads, [join(cwd, 'a.txt')], 'the file was read through the client, as its capabilities asked');
  const result = c.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput);
  assert.match(String(result?.rawOutput?.output), /in the editor buffer/);
});
