// Management event streams hold a socket, a feed subscription and a buffer each, so the daemon caps
// them (`--max-streams`): one more is refused with 503 `capacity_exceeded` before anything is
// streamed and holds nothing; a freed place serves the next one, and ACP is served meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession, waitFor } from '../../support/daemon.js';

test('--max-streams caps open event streams with 503 capacity_exceeded, and a closed one frees its place', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { args: ['--max-streams', '2'] });
  const open = async (path: string) => {
    const aborter = new AbortController();
    t.after(() => aborter.abort());
    const res = await fetch(d.url + path, { headers: { ...d.headers, Accept: 'text/event-stream' }, signal: aborter.signal });
    return { res, aborter };
  };
  const events = await open(`/v1/sessions/${sessionId}/events?after=0`);
  const transitions = await open('/v1/inspect/transitions');
  assert.equal(events.res.status, 200);
  assert.equal(transitions.res.status, 200);
  await waitFor('two streams', async () => (await d.metric('troupe_sse_streams')) === 2);
  assert.equal(await d.metric('troupe_event_feeds_open'), 1);

  for (const path of [`/v1/sessions/${sessionId}/events?after=0`, '/v1/inspect/transitions']) {
    const refused = await open(path);
    assert.equal(refused.res.status, 503, path);
    const body = (await refused.res.json()) as { error: { code: string; message: string; data?: { limit?: number } } };
    assert.equal(body.error.code, 'capacity_exceeded');
    assert.match(body.error.message, /--max-streams/);
    assert.equal(body.error.data?.limit, 2);
  }
  assert.equal(await d.metric('troupe_sse_streams'), 2);
  // ACP is served meanwhile.
  const r = await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  assert.equal(r.stopReason, 'end_turn');

  events.aborter.abort();
  await waitFor('the closed stream to free its place', async () => (await d.metric('troupe_sse_streams')) === 1);
  // Its session's feed closed with it: the refused stream of that session held no subscription.
  await waitFor('the session feed to close', async () => (await d.metric('troupe_event_feeds_open')) === 0);
  const again = await open(`/v1/sessions/${sessionId}/events?after=0`);
  assert.equal(again.res.status, 200);
  // The new stream replays the log from the cursor: its first event is seq 1 (its id `1-<mark>`).
  const reader = again.res.body!.getReader();
  let text = '';
  while (!/\nid: 1-[0-9a-f]{12}\n/.test('\n' + text)) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'stream ended early');
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
});
