// What `troupe run` prints while the vendor refuses: each retry of a model call as a line of its
// own before the wait. The real binary, its daemon and agent, and the Anthropic SDK against the
// replay server on 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHome, SUITE_TIMEOUT_MS, type Home } from '../../support/cli/cli-harness.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';

describe('troupe run and a vendor that refuses', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let server: ReplayServer;
  before(async () => {
    server = await startReplayServer();
  });
  after(() => server.close());

  let h: Home | undefined;
  after(() => h?.close());

  test('a rate-limited call prints a line for its retry, then the answer', async () => {
    h = makeHome({ env: { TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' } });
    const limited = {
      status: 429,
      headers: { 'retry-after-ms': '20' },
      json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' } },
    };
    server.enqueue({ json: { input_tokens: 1_250 } }, limited, { sse: fixture('e2e-anthropic-answer.sse') });
    const r = await h.run(['run', 'hello there']);
    assert.equal(r.code, 0, r.stderr);
    const retry = r.stdout.indexOf('[Rate limited by anthropic (429), retrying in 20 ms (attempt 2 of 3)]');
    assert.ok(retry >= 0, r.stdout);
    assert.ok(r.stdout.indexOf('The notes say the launch code is 4242.') > retry, r.stdout);
    await h.close();
    h = undefined;
  });
});
