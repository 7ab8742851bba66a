/**
 * One contract for every ModelProvider adapter: the real vendor SDK against the replay server.
 * Each vendor's fixtures tell the same three stories (a greeting, a greeting after thinking, two
 * parallel tool calls), so the expectations below are shared; per-vendor numbers come in the case.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../../src/core/provider.js';
import { costOf } from '../../../src/providers/pricing.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer, type ReplayStep } from '../../support/replay-server.js';

type Usage = Extract<ProviderEvent, { type: 'usage' }>;

export interface ProviderContractCase {
  /** Suite name, e.g. `anthropic` or `openai-chat`. */
  name: string;
  /** The model id sent (without the provider prefix). */
  model: string;
  makeAdapter(baseURL: string, options: { maxRetries: number }): ModelProvider;
  /** Fixture file names under test/fixtures/providers. */
  fixtures: { text: string; thinking: string; tools: string };
  /** Usage the text fixture reports, in troupe's convention, and its cost in USD. */
  textUsage: Omit<Usage, 'type'>;
  textCost: number;
  /** Whether the vendor streams tool arguments in pieces (Gemini sends each call whole). */
  splitsToolArguments: boolean;
  /** Error responses as the vendor sends them. `vendorText` must appear in the ProviderError's vendorMessage. */
  errors: {
    /** A 429 whose retry-after says 7 seconds. */
    rateLimited: ReplayStep;
    /** A 429 whose retry-after is a few milliseconds (for the retry test). */
    rateLimitedBriefly: ReplayStep;
    overloaded: ReplayStep & { vendorText: string };
    contextOverflow: ReplayStep & { vendorText: string };
    auth: ReplayStep;
    /** The vendor's answer to an account whose quota or credit is spent (a 429 for some). */
    quotaExceeded: ReplayStep & { vendorText: string };
  };
}

const TEXT = 'Hello! How can I help you today?';
const TOOLS = [
  { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'grep', description: 'Search files', inputSchema: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } } } },
];

export function request(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    system: 'You are a careful coding agent.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    tools: TOOLS,
    purpose: 'turn',
    ...extra,
  };
}

export async function collect(provider: ModelProvider, req: ModelRequest, signal = new AbortController().signal): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of provider.stream(req, signal)) events.push(event);
  return events;
}

/** Streams `req` until it fails: the failure, and in `seen` what reached the caller first. */
export async function failure(provider: ModelProvider, req: ModelRequest, seen: ProviderEvent[] = []): Promise<unknown> {
  try {
    for await (const event of provider.stream(req, new AbortController().signal)) seen.push(event);
  } catch (err) {
    return err;
  }
  assert.fail('the stream should have failed');
}

const texts = (events: ProviderEvent[], type: 'text_delta' | 'thinking_delta') =>
  events.flatMap((e) => (e.type === type ? [e.text] : []));

export function providerContract(c: ProviderContractCase): void {
  describe(`provider contract: ${c.name}`, { timeout: 20_000 }, () => {
    let server: ReplayServer;
    let provider: ModelProvider;
    before(async () => {
      server = await startReplayServer();
      provider = c.makeAdapter(server.url, { maxRetries: 0 });
    });
    after(() => server.close());

    test('streams text in several deltas, then usage, then stop', async () => {
      server.enqueue({ sse: fixture(c.fixtures.text) });
      const events = await collect(provider, request(c.model));
      const parts = texts(events, 'text_delta');
      assert.ok(parts.length >= 2, 'text arrives in more than one delta');
      assert.equal(parts.join(''), TEXT);
      assert.deepEqual(events.slice(-2).map((e) => e.type), ['usage', 'stop']);
      assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
    });

    test('usage follows troupe convention and carries a cost', async () => {
      server.enqueue({ sse: fixture(c.fixtures.text) });
      const usage = (await collect(provider, request(c.model))).find((e): e is Usage => e.type === 'usage');
      assert.ok(usage);
      const { type: _t, ...counts } = usage;
      assert.deepEqual(counts, c.textUsage);
      const pricing = provider.capabilities(c.model).pricing;
      assert.ok(pricing, 'catalogue models have prices');
      const cost = costOf(usage, pricing);
      assert.equal(cost?.currency, 'USD');
      assert.ok(Math.abs((cost?.amount ?? -1) - c.textCost) < 1e-12, `cost ${cost?.amount} ≠ ${c.textCost}`);
    });

    test('streams thinking before the answer', async () => {
      server.enqueue({ sse: fixture(c.fixtures.thinking) });
      const events = await collect(provider, request(c.model, { thinkingBudget: 2048 }));
      const thinking = texts(events, 'thinking_delta');
      assert.ok(thinking.length >= 2, 'thinking arrives in more than one delta');
      assert.equal(thinking.join(''), 'The user greets me. I should greet back.');
      assert.equal(texts(events, 'text_delta').join(''), 'Hi there!');
      const firstText = events.findIndex((e) => e.type === 'text_delta');
      assert.ok(events.findIndex((e) => e.type === 'thinking_delta') < firstText);
      for (const e of events) if (e.type === 'reasoning_part') assert.equal(e.part.provider, provider.id);
      assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
    });

    test('parallel tool calls: start, argument deltas, end with the parsed input', async () => {
      server.enqueue({ sse: fixture(c.fixtures.tools) });
      const events = await collect(provider, request(c.model));
      const starts = events.filter((e) => e.type === 'tool_call_start');
      assert.deepEqual(starts.map((s) => s.name), ['read_file', 'grep']);
      assert.equal(new Set(starts.map((s) => s.id)).size, 2, 'each call has its own id');
      const expected = [{ path: 'src/index.ts' }, { pattern: 'TODO', path: 'src' }];
      starts.forEach((start, i) => {
        const deltas = events.filter((e) => e.type === 'tool_call_delta' && e.id === start.id).map((e) => (e as { argsDelta: string }).argsDelta);
        if (c.splitsToolArguments) assert.ok(deltas.length >= 2, `arguments of ${start.name} arrive in pieces`);
        assert.deepEqual(JSON.parse(deltas.join('')), expected[i]);
        const end = events.find((e) => e.type === 'tool_call_end' && e.id === start.id);
        assert.deepEqual(end, { type: 'tool_call_end', id: start.id, input: expected[i] });
        assert.ok(events.indexOf(start) < events.indexOf(end!));
      });
      assert.deepEqual(events.at(-1), { type: 'stop', reason: 'tool_use' });
    });

    test('429 becomes rate_limited with retry-after', async () => {
      server.enqueue(c.errors.rateLimited);
      const err = await failure(provider, request(c.model));
      assert.ok(isProviderError(err, 'rate_limited'), String(err));
      assert.equal(err.retryAfterMs, 7000);
      assert.ok(err.vendorMessage.length > 0);
    });

    test('with retries allowed, the adapter retries a 429 once and then streams', async () => {
      const retrying = c.makeAdapter(server.url, { maxRetries: 1 });
      const before = server.requests.length;
      server.enqueue(c.errors.rateLimitedBriefly, { sse: fixture(c.fixtures.text) });
      const events = await collect(retrying, request(c.model));
      assert.equal(texts(events, 'text_delta').join(''), TEXT);
      assert.equal(server.requests.length - before, 2, 'exactly one retry reached the server');
    });

    test('each retry is announced before its wait: the kind, the status, the delay the vendor asked for, the attempt', async () => {
      const retrying = c.makeAdapter(server.url, { maxRetries: 3 });
      const before = server.requests.length;
      server.enqueue(c.errors.rateLimitedBriefly, c.errors.rateLimitedBriefly, { sse: fixture(c.fixtures.text) });
      const events = await collect(retrying, request(c.model));
      const retries = events.filter((e) => e.type === 'retry');
      assert.deepEqual(
        retries.map((e) => ({ ...e, vendorMessage: e.vendorMessage.length > 0 })),
        [2, 3].map((attempt) => ({ type: 'retry', kind: 'rate_limited', status: 429, vendorMessage: true, attempt, attempts: 4, delayMs: 5 })),
      );
      assert.deepEqual(events.slice(0, 2), retries, 'both before anything of the reply');
      assert.equal(texts(events, 'text_delta').join(''), TEXT);
      assert.equal(server.requests.length - before, 3, 'the call and two retries');
    });

    test('a spent quota ends the call at once, quota_exceeded, in troupe\'s words: neither the SDK nor troupe sends it again', async () => {
      const retrying = c.makeAdapter(server.url, { maxRetries: 2 });
      const before = server.requests.length;
      // Nothing more is queued: a request sent again would meet the replay server's 599, and fail otherwise.
      server.enqueue(c.errors.quotaExceeded);
      const seen: ProviderEvent[] = [];
      const err = await failure(retrying, request(c.model), seen);
      assert.ok(isProviderError(err, 'quota_exceeded'), String(err));
      assert.ok(err.vendorMessage.includes(c.errors.quotaExceeded.vendorText), err.vendorMessage);
      assert.match(err.explanation ?? '', /quota|credit/);
      assert.match(err.explanation ?? '', /Retrying does not help/);
      assert.deepEqual(seen, [], 'no retry was announced');
      assert.equal(server.requests.length - before, 1, 'requested exactly once');
    });

    test('overloaded', async () => {
      server.enqueue(c.errors.overloaded);
      const err = await failure(provider, request(c.model));
      assert.ok(isProviderError(err, 'overloaded'), String(err));
      assert.ok(err.vendorMessage.includes(c.errors.overloaded.vendorText), err.vendorMessage);
    });

    test('the vendor context-length error becomes context_overflow', async () => {
      server.enqueue(c.errors.contextOverflow);
      const err = await failure(provider, request(c.model));
      assert.ok(isProviderError(err, 'context_overflow'), String(err));
      assert.ok(err.vendorMessage.includes(c.errors.contextOverflow.vendorText), err.vendorMessage);
    });

    test('bad credentials become auth', async () => {
      server.enqueue(c.errors.auth);
      const err = await failure(provider, request(c.model));
      assert.ok(isProviderError(err, 'auth'), String(err));
    });

    test('a stream cut mid-way becomes network, after the events that did arrive', async () => {
      const events = sseEvents(fixture(c.fixtures.text));
      server.enqueue({ sse: fixture(c.fixtures.text), cutAfterEvents: Math.ceil(events.length / 2) });
      const seen: ProviderEvent[] = [];
      const err = await failure(provider, request(c.model), seen);
      assert.ok(isProviderError(err, 'network'), String(err));
      assert.ok(!seen.some((e) => e.type === 'stop'), 'no stop after a cut');
    });

    test('a stream that ends cleanly but early becomes network', async () => {
      const events = sseEvents(fixture(c.fixtures.text));
      server.enqueue({ sse: events.slice(0, Math.ceil(events.length / 2)).join('') });
      const err = await failure(provider, request(c.model));
      assert.ok(isProviderError(err, 'network'), String(err));
    });

    test('abort ends the HTTP stream: the server sees its connection close', async () => {
      server.enqueue({ sse: fixture(c.fixtures.text), holdAfterEvents: sseEvents(fixture(c.fixtures.text)).length - 2 });
      const controller = new AbortController();
      const seen: ProviderEvent[] = [];
      let caught: unknown;
      try {
        for await (const event of provider.stream(request(c.model), controller.signal)) {
          seen.push(event);
          if (event.type === 'text_delta') controller.abort();
        }
      } catch (err) {
        caught = err;
      }
      assert.ok(isProviderError(caught, 'aborted'), String(caught));
      assert.ok(seen.some((e) => e.type === 'text_delta'));
      await server.requests.at(-1)!.socketClosed;
    });

    test('an already-aborted signal fails at once without a request', async () => {
      const before = server.requests.length;
      const controller = new AbortController();
      controller.abort();
      let caught: unknown;
      try {
        for await (const _ of provider.stream(request(c.model), controller.signal)) assert.fail('no events expected');
      } catch (err) {
        caught = err;
      }
      assert.ok(isProviderError(caught, 'aborted'), String(caught));
      assert.equal(server.requests.length, before);
    });
  });
}
