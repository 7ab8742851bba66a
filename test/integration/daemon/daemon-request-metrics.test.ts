// troupe_acp_request_duration_seconds counts every ACP request the daemon answers, under its method
// and outcome: those a session's process answers and those the daemon answers itself (initialize,
// session/list, session/delete, the session/close of one of several connections, its refusals).
// Until 2026-12-07 only the process's answers were counted: a session/close answered by the daemon
// (another client stayed attached) was missing from it, while the same close answered by the
// process was there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClients, tempDir, type Daemon } from '../../support/daemon.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';

/** `method outcome` → the histogram's count, from a scrape of /metrics. */
async function requestCounts(d: Daemon): Promise<Map<string, number>> {
  const text = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  const family = parsePrometheusText(text).get('troupe_acp_request_duration_seconds');
  const counts = new Map<string, number>();
  for (const s of family?.samples ?? []) if (s.name.endsWith('_count')) counts.set(`${s.labels.method} ${s.labels.outcome}`, s.value);
  return counts;
}

/** What grew from `before` to `after`, by series. */
function grown(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [series, n] of after) if (n !== (before.get(series) ?? 0)) out[series] = n - (before.get(series) ?? 0);
  return out;
}

test('every request the daemon answers is counted under its method, whether its session process answered it or the daemon itself', async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script: { replies: [] }, args: ['--pool', '0'] });
  const cwd = tempDir();
  const { sessionId } = await a.agent.request('session/new', { cwd, mcpServers: [] });
  await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });

  let before = await requestCounts(d);
  // A stays attached: B's close is answered by the daemon, the process is not sent it.
  await b.agent.request('session/close', { sessionId });
  assert.deepEqual(grown(before, await requestCounts(d)), { 'session/close ok': 1 });

  before = await requestCounts(d);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  await a.agent.request('session/list', {});
  await assert.rejects(a.agent.request('session/load', { sessionId: 'ses_nope', cwd, mcpServers: [] }), (e: any) => e.data?.code === 'session_not_found');
  await assert.rejects(a.agent.request('no/such_method', {}), (e: any) => e.code === -32601);
  await a.agent.request('session/delete', { sessionId });
  assert.deepEqual(grown(before, await requestCounts(d)), {
    'initialize ok': 1,
    'session/list ok': 1,
    'session/load error': 1,
    'other error': 1,
    'session/delete ok': 1,
  });
});
