// What `troupe run` prints while the vendor refuses: each retry of a model call as a line of its
// own before the wait, and a spent quota as the turn's error with its code. The real binary, its
// daemon and agent, and the Anthropic and OpenAI SDKs against the replay server on 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHome, SUITE_TIMEOUT_MS, type Home } from '../../support/cli/cli-harness.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { OPENAI_INSUFFICIENT_QUOTA } from '../../support/vendor-answers.js';

describe('troupe run and a vendor that refuses', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let server: ReplayServer;
  before(async () => {
    server = await startReplayServer();
  });
  after(() => server.close());

  // Every home made is closed at the end, its daemon with it, whatever failed first.
  const homes: Home[] = [];
  after(() => Promise.all(homes.map((h) => h.close())));
  const home = (env: NodeJS.ProcessEnv) => {
    const h = makeHome({ env });
    homes.push(h);
    return h;
  };

  test('a rate-limited call prints a line for its retry, then the answer', async () => {
    const h = home({ TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' });
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
  });

  test('a spent OpenAI quota ends the run at once with provider_quota_exceeded, requested once', async () => {
    const h = home({ TROUPE_MODEL: 'openai/gpt-5', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' });
    const before = server.requests.length;
    server.enqueue(OPENAI_INSUFFICIENT_QUOTA, OPENAI_INSUFFICIENT_QUOTA);
    const r = await h.run(['run', 'hello']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /quota is used up \(insufficient_quota/);
    assert.match(r.stderr, /\(provider_quota_exceeded\)/);
    assert.doesNotMatch(r.stdout, /retrying/);
    assert.deepEqual(server.requests.slice(before).map((q) => q.url), ['/v1/responses/input_tokens', '/v1/responses']);
  });
});
