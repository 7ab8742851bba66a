// SSE resume through the real daemon: a client whose session stream broke reconnects with
// Last-Event-ID and gets exactly the messages it missed, in order (raw HTTP: the SDK client has no
// resume). The gap case is covered against the same transport in test/integration/transport/resume.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawInitialize, rawPost, SseReader, type Harness } from '../../support/transport/harness.js';
import { Daemon, tempDir } from '../../support/daemon.js';

test('Last-Event-ID on a session stream of the daemon resumes exactly after the last event seen', async (t) => {
  const d = await Daemon.start({ script: { replies: [{ when: 'go', items: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] }] } });
  t.after(() => d.stop());
  const h = { fetch: (path: string, init: RequestInit = {}) => fetch(d.url + path, { ...init, headers: { ...(init.headers as Record<string, string>), ...d.headers } }) } as unknown as Harness;
  const conn = await rawInitialize(h);
  const control = await SseReader.open(h, conn);
  await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } });
  const [created] = await control.waitFor(1);
  const sessionId = (created!.json as any).result.sessionId as string;
  const prompt = (id: number) => ({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } });
  const first = await SseReader.open(h, conn, { sessionId });
  await rawPost(h, conn, prompt(2), sessionId);
  const seen = await first.waitUntil(() => first.events.some((e) => (e.json as any).id === 2)).then(() => first.events);
  first.close();
  assert.deepEqual(seen.map((e) => Number(e.id)), seen.map((_, i) => i + 1), 'events are numbered per stream');
  // A second turn while nobody listens on the session stream.
  await rawPost(h, conn, prompt(3), sessionId);
  const deadline = Date.now() + 10_000;
  const turnsDone = async () => (await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions.filter((x: any) => x.machine === 'turn' && x.state === 'done').length;
  while ((await turnsDone()) < 2) {
    if (Date.now() > deadline) throw new Error('second turn did not finish');
    await new Promise((r) => setTimeout(r, 20));
  }
  const from = 2;
  const resumed = await SseReader.open(h, conn, { sessionId, lastEventId: String(from) });
  await resumed.waitUntil(() => resumed.events.some((e) => (e.json as any).id === 3));
  const ids = resumed.events.map((e) => Number(e.id));
  assert.equal(ids[0], from + 1, 'starts right after the last event seen');
  assert.ok(ids.every((id, i) => i === 0 || id === ids[i - 1]! + 1), 'no hole, no duplicate');
  assert.deepEqual(resumed.events.slice(0, seen.length - from).map((e) => e.data), seen.slice(from).map((e) => e.data), 'the missed events, byte for byte');
  assert.ok(!resumed.events.some((e) => (e.json as any).method === '_troupe/replay_gap'));
  resumed.close();
  control.close();
});
