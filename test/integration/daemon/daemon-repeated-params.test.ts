// A query parameter given more than once to a management or inspector route, against a real daemon:
// refused with a typed 400 before anything is done (no stream opened), as `after` on the event feeds
// is; until 2026-12-07 most routes took the first value and ignored the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession } from '../../support/daemon.js';

test('a query parameter given more than once is a typed 400 on every route that reads one, and once it is answered', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http');
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
  const ask = async (path: string) => {
    const res = await fetch(d.url + path, { headers: d.headers, signal: AbortSignal.timeout(10_000) });
    // A stream opened where a refusal was due would never end: its status is enough to fail.
    if (res.status === 200) return void (await res.body!.cancel());
    const { error } = (await res.json()) as { error: { code: string; data: unknown } };
    return [res.status, error.code, error.data];
  };
  const replayId = (await d.api('GET', `/v1/sessions/${sessionId}/replay`)).json.replayId;
  for (const [path, code, data] of [
    [`/v1/inspect/transitions?session=${sessionId}&session=ses_0other`, 'invalid_params', { session: [sessionId, 'ses_0other'] }],
    [`/v1/inspect/transitions?session=${sessionId}&session=${sessionId}`, 'invalid_params', { session: [sessionId, sessionId] }],
    [`/v1/sessions/${sessionId}/inspect?last=1&last=500`, 'invalid_params', { last: ['1', '500'] }],
    [`/v1/sessions/${sessionId}/replay?since=${replayId}&since=other&after=1`, 'invalid_params', { since: [replayId, 'other'] }],
    [`/v1/sessions/${sessionId}/replay?since=${replayId}&after=1&after=2`, 'invalid_cursor', { after: ['1', '2'] }],
    ['/v1/sessions?all=1&all=0', 'invalid_params', { all: ['1', '0'] }],
    ['/v1/sessions?cwd=/a&cwd=/b', 'invalid_params', { cwd: ['/a', '/b'] }],
  ] as const) {
    // Until 2026-12-07 the transitions, inspect and replay routes took the first and ignored the others.
    assert.deepEqual(await ask(path), [400, code, data], path);
  }
  for (const path of [`/v1/inspect/transitions?session=${sessionId}`, `/v1/sessions/${sessionId}/inspect?last=1`, `/v1/sessions/${sessionId}/replay?since=${replayId}&after=1`, '/v1/sessions?all=1']) {
    assert.equal(await ask(path), undefined, `${path}: once, it is answered`);
  }
});
