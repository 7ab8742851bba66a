/**
 * The delay a retry waits (src/core/model-stream.ts retryDelayMs, src/core/provider.ts retryAfterMs):
 * the vendor's, when it asked for one over 0; else troupe's backoff. A delay of 0 or less, from a
 * header or from any adapter's failure, was waited as 0 ms until 2026-12-07: every retry at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryDelayMs, streamWithWatchdog, type VendorStreamCall } from '../../../src/core/model-stream.js';
import { ProviderError, retryAfterMs, type ProviderEvent } from '../../../src/core/provider.js';

const headers = (h: Record<string, string>) => new Headers(h);

test('retryAfterMs: a delay over 0 is read; 0, less, a date now or past, and words are none', () => {
  assert.equal(retryAfterMs(headers({ 'retry-after-ms': '250' })), 250);
  assert.equal(retryAfterMs(headers({ 'retry-after': '2' })), 2000);
  assert.equal(retryAfterMs(headers({ 'retry-after': '0.5' })), 500);
  const none: Record<string, string>[] = [{ 'retry-after': '0' }, { 'retry-after-ms': '0' }, { 'retry-after': '-1' }, { 'retry-after-ms': '-1' }, { 'retry-after': 'soon' }, { 'retry-after': '' }, { 'retry-after': 'Thu, 01 Jan 1970 00:00:00 GMT' }, {}];
  for (const h of none)
    assert.equal(retryAfterMs(headers(h)), undefined, JSON.stringify(h));
  // A retry-after-ms of no use falls to retry-after.
  assert.equal(retryAfterMs(headers({ 'retry-after-ms': '0', 'retry-after': '3' })), 3000);
  // A date to come: its distance (an HTTP date has whole seconds, so up to a second less than asked).
  const ahead = retryAfterMs(headers({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }));
  assert.ok(ahead !== undefined && ahead > 28_000 && ahead <= 30_000, String(ahead));
});

test('retryDelayMs: the delay asked when over 0, in whole ms; else the backoff of the attempt', () => {
  assert.equal(retryDelayMs(30, 0), 30);
  assert.equal(retryDelayMs(0.2, 0), 1);
  for (const asked of [undefined, 0, -5, Number.NaN]) {
    const first = retryDelayMs(asked, 0);
    assert.ok(first >= 375 && first <= 500, `${asked}: ${first}`);
    const third = retryDelayMs(asked, 2);
    assert.ok(third >= 1500 && third <= 2000, `${asked}: ${third}`);
  }
});

test('streamWithWatchdog: a failure that keeps a delay of 0 is retried after the backoff, not at once', async () => {
  let calls = 0;
  const call: VendorStreamCall<string> = {
    open: async () => {
      calls++;
      if (calls === 1) throw new ProviderError('overloaded', 'busy', { status: 503, retryAfterMs: 0 });
      return (async function* () {
        yield 'done';
      })();
    },
    async *map(chunks) {
      for await (const c of chunks) yield { type: 'text_delta', text: c };
    },
    classify: (err) => (err instanceof ProviderError ? err : new ProviderError('network', String(err))),
  };
  const events: ProviderEvent[] = [];
  for await (const e of streamWithWatchdog(call, { idleMs: 0, setting: 'streamIdleTimeoutMs', maxRetries: 1 }, new AbortController().signal)) events.push(e);
  const retry = events[0];
  assert.ok(retry?.type === 'retry' && retry.delayMs >= 375 && retry.delayMs <= 500, JSON.stringify(retry));
  assert.deepEqual(events[1], { type: 'text_delta', text: 'done' });
  assert.equal(calls, 2);
});
