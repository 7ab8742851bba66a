// How the management API and the inspector refuse a session id that names no session, against a
// real daemon: the transition feed's `?session=` as every per-session route does (404
// session_not_found, no stream) (spec/daemon.md §Management API).
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
