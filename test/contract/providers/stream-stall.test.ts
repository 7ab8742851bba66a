// The idle watchdog (src/core/model-stream.ts) in every adapter: the real vendor SDKs against a
// replay server that sends headers and a few real events, then keeps the connection open and silent.
// Outcomes only; the test timeouts bound how long a broken watchdog would hang.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

interface Settings {
  maxRetries: number;
  streamIdleTimeoutMs?: number;
}

interface StallCase {
  name: string;
  model: string;
  /** The config key the stall error must name. */
  setting: string;
  make(url: string, settings: Settings): ModelProvider;
  /** The vendor's text stream. */
  sse: string;
  /** How many leading events of `sse` carry nothing for the caller (stream set-up). */
  silentHead: number;
  /** The index of an event of `sse` that carries text (repeated to make a long stream). */
  textEvent: number;
}

// Gemini sends no set-up events; a chunk whose only part is empty text (as Gemini 3 sends before a
// signature) carries nothing for the caller.
const GEMINI_EMPTY_CHUNK =
  'data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1200},"modelVersion":"gemini-2.5-pro","responseId":"mKzYaOviL9-Yz7IPp5SY4Qk"}\r\n\r\n';

const CASES: StallCase[] = [
  {
    name: 'anthropic',
    model: 'claude-haiku-4-5',
    setting: 'providers.anthropic.streamIdleTimeoutMs',
    make: (url, s) => new AnthropicProvider({ apiKey: 'k', baseURL: url, ...s }),
    sse: fixture('anthropic-text.sse'),
    // message_start, content_block_start (empty text), ping
    silentHead: 3,
    textEvent: 3,
  },
  {
    name: 'openai-responses',
    model: 'gpt-5',
    setting: 'providers.openai.streamIdleTimeoutMs',
    make: (url, s) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${url}/v1`, ...s }),
    sse: fixture('openai-responses-text.sse'),
    // response.created, response.in_progress, output_item.added, content_part.added
    silentHead: 4,
    textEvent: 4,
  },
  {
    name: 'openai-chat',
    model: 'qwen3-coder',
    setting: 'providers["openai-compatible"].streamIdleTimeoutMs',
    make: (url, s) => new OpenAIChatProvider({ baseURL: `${url}/v1`, ...s }),
    sse: fixture('openai-chat-text.sse'),
    // the role chunk, whose content is ""
    silentHead: 1,
    textEvent: 1,
  },
  {
    name: 'google',
    model: 'gemini-2.5-pro',
    setting: 'providers.google.streamIdleTimeoutMs',
    make: (url, s) => new GoogleProvider({ apiKey: 'k', baseURL: url, ...s }),
    sse: GEMINI_EMPTY_CHUNK + fixture('google-text.sse'),
    silentHead: 1,
    textEvent: 1,
  },
];

/** `sse` with its event `index` sent `copies` more times. */
function stretched(sse: string, index: number, copies: number): string {
  const events = sseEvents(sse);
  const extra = Array.from({ length: copies }, () => events[index]!);
  return [...events.slice(0, index + 1), ...extra, ...events.slice(index + 1)].join('');
}

/**
 * Waits until the server has seen `count` requests since `before`. The watchdog also covers the wait
 * for the response, so on a loaded machine a retry can give up before the server has read its
 * request; the count is settled once the server has.
 */
async function requestsSince(server: ReplayServer, before: number, count: number): Promise<number> {
  while (server.requests.length - before < count) await new Promise((r) => setTimeout(r, 10));
  return server.requests.length - before;
}

/** Consumes a stream into `seen` and returns what it threw. */
async function failure(provider: ModelProvider, model: string, seen: ProviderEvent[] = [], signal = new AbortController().signal): Promise<unknown> {
  try {
    for await (const event of provider.stream(request(model), signal)) seen.push(event);
  } catch (err) {
    return err;
  }
  assert.fail('the stream was expected to fail');
}

/** A replay server of the test's own, closed after it. */
async function serverOf(t: TestContext): Promise<ReplayServer> {
  const server = await startReplayServer();
  t.after(() => server.close());
  return server;
}

// Every test runs beside the others, each with a server of its own: the tests mostly wait on the
// watchdog's timers. Until 2026-12-06 a vendor's tests shared a server and ran in order (9 s a vendor).
describe('the stream idle watchdog', { concurrency: true }, () => {
  for (const c of CASES) {
    describe(`${c.name}: a stalled stream`, { timeout: 30_000, concurrency: true }, () => {
      test('that stalls before anything reached the caller is retried, then fails as a network stall naming the setting', async (t) => {
        const server = await serverOf(t);
        const provider = c.make(server.url, { maxRetries: 2, streamIdleTimeoutMs: 1_000 });
        const before = server.requests.length;
        const held = { sse: c.sse, holdAfterEvents: c.silentHead };
        server.enqueue(held, held, held);
        const seen: ProviderEvent[] = [];
        const err = await failure(provider, c.model, seen);
        assert.ok(isProviderError(err, 'network'), String(err));
        assert.match(err.vendorMessage, /stream stalled/);
        assert.ok(err.vendorMessage.includes(c.setting), err.vendorMessage);
        // Nothing of the reply reached the caller; each retry was announced before its wait.
        assert.deepEqual(
          seen.map((e) => (e.type === 'retry' ? [e.kind, e.attempt, e.attempts] : e.type)),
          [
            ['network', 2, 3],
            ['network', 3, 3],
          ],
        );
        // 1 s, not less: the wait for the response counts too, and a loaded machine is slow to answer.
        assert.equal(await requestsSince(server, before, 3), 3, 'the first call and two retries');
        const requests = server.requests.slice(before);
        // Every stalled request was aborted: the server saw each connection close.
        await Promise.all(requests.map((r) => r.socketClosed));
      });

      test('that stalls after text reached the caller is not retried', async (t) => {
        const server = await serverOf(t);
        const provider = c.make(server.url, { maxRetries: 2, streamIdleTimeoutMs: 1_000 });
        const before = server.requests.length;
        server.enqueue({ sse: c.sse, holdAfterEvents: c.silentHead + 1 });
        const seen: ProviderEvent[] = [];
        const err = await failure(provider, c.model, seen);
        assert.ok(isProviderError(err, 'network') && /stream stalled/.test(err.vendorMessage), String(err));
        assert.equal(seen.filter((e) => e.type === 'text_delta').length, 1, 'the text before the stall was delivered');
        assert.equal(server.requests.length - before, 1, 'streamed text cannot be taken back: no retry');
        await server.requests.at(-1)!.socketClosed;
      });

      test('that is slow but steady completes', async (t) => {
        const server = await serverOf(t);
        // An event every 150 ms, 12 more text events than the recording: the whole reply takes far
        // longer than the 1 s limit, no gap does.
        const provider = c.make(server.url, { maxRetries: 0, streamIdleTimeoutMs: 1_000 });
        const before = server.requests.length;
        server.enqueue({ sse: stretched(c.sse, c.textEvent, 12), intervalMs: 150 });
        const events = await collect(provider, request(c.model));
        assert.equal(events.at(-1)?.type, 'stop');
        assert.ok(events.filter((e) => e.type === 'text_delta').length > 12, 'every repeated text event arrived');
        assert.equal(server.requests.length - before, 1);
      });

      test('cancelled by the caller while it stalls is aborted, not a network error', async (t) => {
        const server = await serverOf(t);
        const provider = c.make(server.url, { maxRetries: 2, streamIdleTimeoutMs: 60_000 });
        const before = server.requests.length;
        server.enqueue({ sse: c.sse, holdAfterEvents: c.silentHead + 1 });
        const controller = new AbortController();
        const seen: ProviderEvent[] = [];
        const consumed = failure(provider, c.model, seen, controller.signal);
        // Cancel once the text before the stall has arrived.
        while (!seen.some((e) => e.type === 'text_delta')) await new Promise((r) => setTimeout(r, 10));
        controller.abort();
        const err = await consumed;
        assert.ok(isProviderError(err, 'aborted'), String(err));
        assert.equal(server.requests.length - before, 1, 'a cancel is never retried');
        await server.requests.at(-1)!.socketClosed;
      });

      test('with streamIdleTimeoutMs 0 there is no watchdog: only the cancel ends it', async (t) => {
        const server = await serverOf(t);
        const provider = c.make(server.url, { maxRetries: 0, streamIdleTimeoutMs: 0 });
        server.enqueue({ sse: c.sse, holdAfterEvents: c.silentHead + 1 });
        const controller = new AbortController();
        const seen: ProviderEvent[] = [];
        const consumed = failure(provider, c.model, seen, controller.signal);
        while (!seen.some((e) => e.type === 'text_delta')) await new Promise((r) => setTimeout(r, 10));
        // Long enough for a 0 ms (or any short) limit to have fired if 0 did not mean off.
        await new Promise((r) => setTimeout(r, 300));
        controller.abort();
        const err = await consumed;
        assert.ok(isProviderError(err, 'aborted'), String(err));
      });
    });
  }
});
