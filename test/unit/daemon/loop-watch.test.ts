import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopWatch } from '../../../src/daemon/loop-watch.js';
import { Metrics } from '../../../src/daemon/metrics.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

test('a loop held busy shows as a stall and a delay; a new window starts empty', async () => {
  const watch = new LoopWatch();
  try {
    await sleep(60);
    const until = performance.now() + 150;
    while (performance.now() < until); // the loop is blocked, as by a long synchronous task
    await sleep(60);
    const w = watch.read();
    assert.ok(w.delayMaxMs >= 100, `delay max ${w.delayMaxMs}`);
    assert.ok(Math.max(w.blockedMaxMs, w.starvedMaxMs) >= 100, 'the stall is recorded');
    // At least this one: on a loaded machine other processes may starve the loop past 50 ms too.
    assert.ok(watch.stallsOver50.blocked + watch.stallsOver50.starved >= 1, JSON.stringify(watch.stallsOver50));
    watch.reset();
    const fresh = watch.read();
    assert.equal(fresh.blockedMaxMs, 0);
    assert.equal(fresh.starvedMaxMs, 0);
  } finally {
    watch.stop();
  }
});

test('metrics: hooks run after each render, so windowed gauges restart per scrape', () => {
  const m = new Metrics();
  let value = 5;
  m.gauge('g', 'a windowed gauge', () => value);
  m.afterScrape(() => (value = 0));
  assert.match(m.render(), /^g 5$/m);
  assert.match(m.render(), /^g 0$/m);
});
