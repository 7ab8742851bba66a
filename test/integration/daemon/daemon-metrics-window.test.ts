// /metrics' event-loop gauges cover the window since the previous scrape (docs/daemon.md §Monitoring):
// a HEAD of /metrics, a probe checking that the route is up, is no scrape and starts no new window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon } from '../../support/daemon.js';

test('a HEAD of /metrics does not start a new window: the next scrape still reports the stall before it', async (t) => {
  const d = await Daemon.start({ args: ['--pool', '0'] });
  t.after(() => d.stop());
  const scrape = async (method = 'GET') => {
    const res = await fetch(`${d.url}/metrics`, { method, headers: d.headers });
    assert.equal(res.status, 200);
    return res.text();
  };
  const delayMax = (text: string) => Number(/^troupe_event_loop_delay_max_seconds (\S+)$/m.exec(text)![1]);
  await scrape();
  // The scrape reset the delay histogram, which then records nothing until its 10 ms timer has fired
  // once (it measures from that firing): a stall before it would be lost whatever HEAD does (the
  // full suite failed so once under load). Some 30 ms later, a request and then another: the loop
  // runs its due timers before the I/O of the turn that answers the second.
  await new Promise((r) => setTimeout(r, 30));
  for (let i = 0; i < 2; i++) assert.equal((await fetch(`${d.url}/v1/health`)).status, 200);
  // The daemon held still for 300 ms: its loop's timers run that late once it goes on. A request
  // answered first makes sure they have run (they come before the loop's next I/O) before the HEAD.
  d.proc.kill('SIGSTOP');
  await new Promise((r) => setTimeout(r, 300));
  d.proc.kill('SIGCONT');
  assert.equal((await fetch(`${d.url}/v1/health`)).status, 200);
  assert.equal(await scrape('HEAD'), '');
  // Until 2026-12-07 the HEAD ran the GET's scrape, which started a new window: the stall was lost.
  const max = delayMax(await scrape());
  assert.ok(max >= 0.25, `the 300 ms stall is in the window, got ${max} s`);
});
