// GET /v1/sessions reads its query as session/list reads its params: `cwd` filters by an absolute
// directory, and `all` adds closed and deleted sessions. What it cannot read is refused, not ignored:
// a relative or empty `cwd` (resolved against the daemon's own directory it listed nothing, and an
// empty one listed everything) and an `all` that is neither 1/true nor 0/false (`?all` or `all=yes`
// listed without the deleted ones, as if not asked).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { daemonWithSession, tempDir } from '../../support/daemon.js';

test('GET /v1/sessions filters by an absolute cwd and refuses a query it cannot read', async (t) => {
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'http');
  const other = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  assert.equal((await d.api('DELETE', `/v1/sessions/${other}`)).status, 200);
  const ids = async (query: string) => {
    const r = await d.api('GET', `/v1/sessions${query}`);
    assert.equal(r.status, 200, `${query}: ${JSON.stringify(r.json)}`);
    return r.json.sessions.map((s: { id: string }) => s.id).sort();
  };
  assert.deepEqual(await ids(`?cwd=${encodeURIComponent(cwd)}`), [sessionId]);
  assert.deepEqual(await ids(`?cwd=${encodeURIComponent(`${cwd}/`)}`), [sessionId], 'a trailing slash names the same directory');
  assert.deepEqual(await ids(''), [sessionId]);
  assert.deepEqual(await ids('?all=0'), [sessionId]);
  assert.deepEqual(await ids('?all=false'), [sessionId]);
  assert.deepEqual(await ids('?all=1'), [sessionId, other].sort());
  assert.deepEqual(await ids('?all=true'), [sessionId, other].sort());
  for (const query of ['?cwd=relative/dir', '?cwd=.', '?cwd=', '?all', '?all=yes', '?all=2', '?all=1&all=0']) {
    const r = await d.api('GET', `/v1/sessions${query}`);
    assert.deepEqual([r.status, r.json?.error?.code], [400, 'invalid_params'], `${query}: ${JSON.stringify(r.json)}`);
  }
});

test("GET /v1/sessions and the daemon's session/list filter a cwd with `..` after a symlink by the directory the kernel reaches", async (t) => {
  // `${hold}/link/..`, `link -> ${cwd}/sub`, is `cwd` (as `cd` there and the session's tools take it),
  // as the session is stored. Until 2026-12-07 the daemon compared it as text (`hold`): it listed nothing.
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'http');
  const hold = tempDir();
  mkdirSync(join(cwd, 'sub'));
  symlinkSync(join(cwd, 'sub'), join(hold, 'link'));
  const given = `${hold}/link/..`;
  const ids = async (filter: string) => {
    const r = await d.api('GET', `/v1/sessions?cwd=${encodeURIComponent(filter)}`);
    assert.equal(r.status, 200, `${filter}: ${JSON.stringify(r.json)}`);
    return r.json.sessions.map((s: { id: string }) => s.id);
  };
  const listed = async (filter: string) => (await c.agent.request('session/list', { cwd: filter })).sessions.map((s) => s.sessionId);
  for (const filter of [cwd, given, `${given}/`]) {
    assert.deepEqual(await ids(filter), [sessionId], `GET /v1/sessions?cwd=${filter}`);
    assert.deepEqual(await listed(filter), [sessionId], `session/list {cwd: ${filter}}`);
  }
  assert.deepEqual(await ids(hold), [], "the text's parent is another directory");
  assert.deepEqual(await listed(hold), []);
});
