// What the management API and the inspector keep of a session once it is deleted, against a real
// daemon and its children: its feeds end (its events, and its transitions with `?session=`), a reader
// coming back is told it is gone, and no feed replays anything of it afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession, waitFor, type Daemon } from '../../support/daemon.js';
import { SessionIndex, sessionsDir } from '../../../src/store/index.js';
import { readSse, type SseMessage } from '../../../src/cli/sse.reader.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };

/** Opens a feed of the daemon's (no cursor: from its start) and reads it as it comes. */
async function openFeed(d: Daemon, path: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(d.url + path, { headers: { ...d.headers, Accept: 'text/event-stream', ...headers }, signal: AbortSignal.any([abort.signal, AbortSignal.timeout(60_000)]) });
  assert.equal(res.status, 200, path);
  const messages = readSse(res.body!, abort.signal);
  const got: SseMessage[] = [];
  return {
    got,
    /** Reads until `done` holds for a message (true), or the stream ends (false). */
    async until(done: (m: SseMessage) => boolean): Promise<boolean> {
      for (;;) {
        const r = await messages.next();
        if (r.done) return false;
        got.push(r.value);
        if (done(r.value)) return true;
      }
    },
    /** Reads to the stream's end. */
    async end(): Promise<void> {
      for (let r = await messages.next(); !r.done; r = await messages.next()) got.push(r.value);
    },
    close: () => abort.abort(),
  };
}

const refusal = async (d: Daemon, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(d.url + path, { headers: { ...d.headers, ...headers }, signal: AbortSignal.timeout(10_000) });
  // A stream opened where a refusal was due would never end: its status is enough to fail.
  if (res.status === 200) return void (await res.body!.cancel());
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
};

test("a session deleted: its transitions stream ends as its events stream does, after what came before, and a reader coming back is refused session_not_found", { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  const events = await openFeed(d, `/v1/sessions/${sessionId}/events`);
  const transitions = await openFeed(d, `/v1/inspect/transitions?session=${sessionId}`);
  // Both have sent what they had: their backlog is through (the turn's end; the session machine back at idle).
  assert.ok(await events.until((m) => m.event === 'event' && JSON.parse(m.data).type === 'turn_completed'));
  assert.ok(await transitions.until((m) => m.event === 'transition' && JSON.parse(m.data).machine === 'session' && JSON.parse(m.data).state === 'idle'));
  const seen = transitions.got.length;

  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  // Until 2026-12-07 the transitions stream stayed open, silent, for as long as its reader kept it.
  await Promise.all([events.end(), transitions.end()]);
  const after = transitions.got.slice(seen).map((m) => JSON.parse(m.data));
  assert.ok(after.length > 0 && after.every((x) => x.sessionId === sessionId), 'the transitions of the delete came first (its child stopped)');
  assert.deepEqual(after.filter((x) => x.machine === 'child').at(-1)?.state, 'exited', "the child machine's last state, then the end");
  // Neither says anything more than its events: a stream ends, no `event: error`.
  assert.deepEqual([...new Set(events.got.map((m) => m.event))], ['event']);
  assert.deepEqual([...new Set(transitions.got.map((m) => m.event))], ['transition']);

  // A reader coming back (an EventSource reconnects with its last id) is told the session is gone, on both.
  assert.deepEqual(await refusal(d, `/v1/sessions/${sessionId}/events`, { 'Last-Event-ID': events.got.at(-1)!.id! }), [404, 'session_not_found']);
  assert.deepEqual(await refusal(d, `/v1/inspect/transitions?session=${sessionId}`, { 'Last-Event-ID': transitions.got.at(-1)!.id! }), [404, 'session_not_found']);
});

test('after a delete no transitions feed replays the deleted session: not from its start, not to a reader resuming', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'ws', { script });
  const other: string = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  for (const id of [sessionId, other]) assert.equal((await c.agent.request('session/prompt', { sessionId: id, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  // The other session's latest transition: the feed's backlog goes at least that far.
  const latest = (await d.api('GET', `/v1/sessions/${other}`)).json.transitions.at(-1).n;
  for (const headers of [{}, { 'Last-Event-ID': '1' }] as Record<string, string>[]) {
    const feed = await openFeed(d, '/v1/inspect/transitions', headers);
    assert.ok(await feed.until((m) => m.event === 'transition' && JSON.parse(m.data).n >= latest));
    feed.close();
    const sessions = new Set(feed.got.map((m) => JSON.parse(m.data).sessionId));
    // Until 2026-12-07 the deleted session's transitions were sent to every reader from before them.
    assert.deepEqual([...sessions], [other], JSON.stringify(headers));
    assert.deepEqual([...new Set(feed.got.map((m) => m.event))], ['transition'], `no replay_gap for what went with the session ${JSON.stringify(headers)}`);
  }
});

test("a session whose log another process turned into a tombstone (the daemon's index not told): its inspector picture and replay are refused session_not_found, as its events are", { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script, args: ['--idle-ms', '300'] });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  // Its process stopped when idle: the log is free to be deleted by another process on this home.
  await waitFor('the idle stop', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.machines?.child === 'idleStopped');
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}/inspect`)).status, 200);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}/replay`)).status, 200, 'its replay kept for the page');
  await (await SessionIndex.open(sessionsDir(d.home))).tombstone(sessionId);
  // Until 2026-12-07 both were answered 200: the tombstone replayed as the session's machines, the
  // picture next to an index entry saying it was not deleted.
  assert.deepEqual(await refusal(d, `/v1/sessions/${sessionId}/inspect`), [404, 'session_not_found']);
  assert.deepEqual(await refusal(d, `/v1/sessions/${sessionId}/replay`), [404, 'session_not_found']);
  assert.deepEqual(await refusal(d, `/v1/sessions/${sessionId}/events`), [404, 'session_not_found']);
});
