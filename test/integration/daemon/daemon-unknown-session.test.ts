// How the management API and the inspector refuse a session id that names no session, against a
// real daemon: the transition feed's `?session=` as every per-session route does (404
// session_not_found, no stream), and an id longer than any session's quoted by its start and its
// length rather than repeated in full (spec/daemon.md §Management API).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession } from '../../support/daemon.js';

test('GET /v1/inspect/transitions?session= an unknown, deleted or empty id is 404 session_not_found, as its events feed is', async (t) => {
  const { d, sessionId } = await daemonWithSession(t, 'http');
  // A known session's feed opens (the status is read before any body: a stream never ends).
  const known = await fetch(`${d.url}/v1/inspect/transitions?session=${sessionId}`, { headers: d.headers, signal: AbortSignal.timeout(10_000) });
  assert.equal(known.status, 200);
  await known.body!.cancel();
  const refused = async (id: string) => {
    const res = await fetch(`${d.url}/v1/inspect/transitions?session=${encodeURIComponent(id)}`, { headers: d.headers, signal: AbortSignal.timeout(10_000) });
    const body = res.status === 200 ? (await res.body!.cancel(), undefined) : await res.json();
    return [res.status, body?.error?.code, body?.error?.data];
  };
  // Until 2026-12-07 each of these opened a stream that never sent anything.
  assert.deepEqual(await refused('ses_0nosuchsession'), [404, 'session_not_found', { sessionId: 'ses_0nosuchsession' }]);
  assert.deepEqual(await refused(''), [404, 'session_not_found', { sessionId: '' }], 'an empty id names no session (it watched every session)');
  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  assert.equal((await fetch(`${d.url}/v1/sessions/${sessionId}/events`, { headers: d.headers, signal: AbortSignal.timeout(10_000) })).status, 404, 'the events feed of a deleted session');
  assert.deepEqual(await refused(sessionId), [404, 'session_not_found', { sessionId }], 'a deleted session too');
});

test('an id longer than any session\'s is quoted by its start and length in a 404, not repeated in full', async (t) => {
  const { d, sessionId } = await daemonWithSession(t, 'http');
  const long = `ses_${'x'.repeat(6000)}`;
  const start = `${long.slice(0, 64)}…`;
  const routes: [method: string, path: string][] = [
    ['GET', `/v1/sessions/${long}`],
    ['GET', `/v1/sessions/${long}/transitions`],
    ['GET', `/v1/sessions/${long}/events`],
    ['POST', `/v1/sessions/${long}/cancel`],
    ['POST', `/v1/sessions/${long}/steer`],
    ['POST', `/v1/sessions/${long}/revive`],
    ['DELETE', `/v1/sessions/${long}`],
    ['GET', `/v1/sessions/${long}/inspect`],
    ['GET', `/v1/sessions/${long}/replay`],
    ['GET', `/v1/inspect/transitions?session=${long}`],
  ];
  for (const [method, path] of routes) {
    const res = await fetch(d.url + path, { method, headers: d.headers, signal: AbortSignal.timeout(10_000) });
    const what = `${method} ${path.replace(long, 'LONG')}`;
    assert.equal(res.status, 404, what);
    const text = await res.text();
    assert.ok(!text.includes('x'.repeat(100)), `${what} repeats the id: ${text.length} characters`);
    const { error } = JSON.parse(text);
    assert.equal(error.code, 'session_not_found', what);
    assert.ok(error.message.includes(`${start} (${long.length} characters)`), `${what}: ${error.message}`);
    assert.deepEqual(error.data, { sessionId: start, sessionIdLength: long.length }, what);
  }
  // An id as long as a session's can be (1024, the ACP transport's limit) is named whole, as before.
  const most = `ses_${'y'.repeat(1020)}`;
  const res = await d.api('GET', `/v1/sessions/${most}`);
  assert.deepEqual([res.status, res.json.error.message, res.json.error.data], [404, `no session ${most}`, { sessionId: most }]);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).status, 200, 'the daemon serves on');
});
