// The token count's time limit (countTimeoutMs, src/core/model-stream.ts) in every adapter that
// counts: the real vendor SDKs against a replay server that accepts the count and never answers it,
// or answers it with a server error. Outcomes only; the test timeouts bound how long a count without
// a limit would hang.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { request } from './provider-contract.js';

interface Settings {
  maxRetries: number;
  streamIdleTimeoutMs?: number;
}

interface CountCase {
  name: string;
  model: string;
  make(url: string, settings: Settings): Required<Pick<ModelProvider, 'countTokens'>>;
  /** Whether the vendor SDK retries a failed request on its own (Gemini's retry is kept off). */
  sdkRetries: boolean;
  /** A 500 answer in the vendor's error format. */
  serverError: unknown;
  /** The vendor's answer to a count of 42 tokens. */
  answer: unknown;
}

const CASES: CountCase[] = [
  {
    name: 'anthropic',
    model: 'claude-haiku-4-5',
    make: (url, s) => new AnthropicProvider({ apiKey: 'k', baseURL: url, ...s }),
    sdkRetries: true,
    serverError: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
    answer: { input_tokens: 42 },
  },
  {
    name: 'openai-responses',
    model: 'gpt-5',
    make: (url, s) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${url}/v1`, ...s }),
    sdkRetries: true,
    serverError: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } },
    answer: { object: 'response.input_tokens', input_tokens: 42 },
  },
  {
    name: 'google',
    model: 'gemini-2.5-pro',
    make: (url, s) => new GoogleProvider({ apiKey: 'k', baseURL: url, ...s }),
    sdkRetries: false,
    serverError: { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } },
    answer: { totalTokens: 42 },
  },
];

/** A replay server for one test, closed after it even when it times out (which ends a request that would hang). */
async function serverFor(t: TestContext): Promise<ReplayServer> {
  const server = await startReplayServer();
  t.after(() => server.close());
  return server;
}

async function countFailure(provider: Required<Pick<ModelProvider, 'countTokens'>>, model: string): Promise<unknown> {
  try {
    await provider.countTokens(request(model), new AbortController().signal);
  } catch (err) {
    return err;
  }
  assert.fail('the count was expected to fail');
}

describe('the token count time limit', { concurrency: true }, () => {
  for (const c of CASES) {
    describe(c.name, { timeout: 30_000 }, () => {
      test('a count that never answers fails as a network error at the limit, and its request is closed', async (t) => {
        const server = await serverFor(t);
        // The limit is the idle limit when that is shorter than COUNT_TIMEOUT_MS; retries would not help.
        // 2 s, and a first count answered: the limit runs from the call, and on a loaded machine
        // setting up the process's first request can take a good part of a second.
        const provider = c.make(server.url, { maxRetries: 2, streamIdleTimeoutMs: 2_000 });
        server.enqueue({ json: c.answer }, { hang: true });
        assert.equal(await provider.countTokens(request(c.model), new AbortController().signal), 42);
        const err = await countFailure(provider, c.model);
        assert.ok(isProviderError(err, 'network'), String(err));
        assert.match(err.vendorMessage, /token count .* did not answer within 2 s/);
        // Once the server has the request (it may still be on its way on a loaded machine), it sees
        // its connection close. The loop ends with the test, should the request never come.
        while (server.requests.length < 2 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 10));
        await server.requests[1]!.socketClosed;
        assert.equal(server.requests.length, 2, 'one attempt');
      });

      if (c.sdkRetries) {
        test('a failed count is not retried by the SDK: the engine has its estimate', async (t) => {
          const server = await serverFor(t);
          const provider = c.make(server.url, { maxRetries: 2 });
          const answer = { status: 500, headers: { 'retry-after-ms': '0' }, json: c.serverError };
          server.enqueue(answer, answer, answer);
          const err = await countFailure(provider, c.model);
          assert.ok(isProviderError(err, 'overloaded'), String(err));
          assert.equal(server.requests.length, 1, 'one attempt, though the model calls get two retries');
        });
      }
    });
  }
});
