// How a `model_retry` reads to a person (src/acp/update.projection.ts): the cause by its code, the
// wait, the attempt; a notice for clients that take notices, a thought of its own for the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventOf } from '../../../src/core/events.js';
import { projectEvent, retryStatus } from '../../../src/acp/update.projection.js';

const retry = (fields: Partial<EventOf<'model_retry'>>): EventOf<'model_retry'> => ({
  seq: 7,
  ts: 1,
  sessionId: 'ses_a',
  turnId: 'turn_1',
  type: 'model_retry',
  provider: 'anthropic',
  errorCode: 'provider_rate_limited',
  status: 429,
  message: 'Number of request tokens has exceeded your per-minute rate limit.',
  attempt: 2,
  attempts: 4,
  delayMs: 8000,
  ...fields,
});

test('the cause, the wait and the attempt, in one line', () => {
  assert.equal(retryStatus(retry({})), 'Rate limited by anthropic (429), retrying in 8 s (attempt 2 of 4)');
  assert.equal(retryStatus(retry({ errorCode: 'provider_overloaded', status: 529, delayMs: 1_234, attempt: 3 })), 'anthropic is overloaded or failing (529), retrying in 1.2 s (attempt 3 of 4)');
  const { status: _none, ...noStatus } = retry({ provider: 'google', errorCode: 'provider_network', delayMs: 437 });
  assert.equal(retryStatus(noStatus), 'The connection to google failed, retrying in 437 ms (attempt 2 of 4)');
  // Retried because the vendor said so (x-should-retry: true), whatever its code: no broken connection.
  assert.equal(retryStatus(retry({ provider: 'openai', errorCode: 'provider_invalid_request', status: 400, delayMs: 450 })), 'openai answered an error (400) it says to send again, retrying in 450 ms (attempt 2 of 4)');
  assert.equal(retryStatus(retry({ delayMs: 60_000 })), 'Rate limited by anthropic (429), retrying in 60 s (attempt 2 of 4)');
});

test('a warning notice for clients that take notices, else a thought of its own', () => {
  const e = retry({});
  const [notice] = projectEvent(e, { notices: true, compaction: false });
  assert.deepEqual(notice?.update, { sessionUpdate: 'notice', severity: 'warning', title: retryStatus(e), _meta: { troupe: { seq: 7, turnId: 'turn_1' } } });
  const [thought] = projectEvent(e, { notices: false, compaction: false });
  assert.deepEqual(thought?.update, {
    sessionUpdate: 'agent_thought_chunk',
    content: { type: 'text', text: `[${retryStatus(e)}]` },
    messageId: 'note_7',
    _meta: { troupe: { seq: 7, turnId: 'turn_1' } },
  });
});

test("a model_retry keeps at most 1,000 characters of the vendor's words, the cut marked and never inside an emoji", async () => {
  const { emitModelRetry } = await import('../../../src/actors/model-retry.js');
  const emitted: Record<string, unknown>[] = [];
  // emitModelRetry needs of the engine only its session and where its events go.
  const core = { sessionId: 'ses_a', emit: (e: Record<string, unknown>) => void emitted.push(e) } as unknown as Parameters<typeof emitModelRetry>[0];
  const ev = { type: 'retry' as const, kind: 'rate_limited' as const, status: 429, attempt: 2, attempts: 3, delayMs: 10 };
  emitModelRetry(core, 'turn_1', 'openai', { ...ev, vendorMessage: `${'x'.repeat(998)}😀 and more` });
  emitModelRetry(core, 'turn_1', 'openai', { ...ev, vendorMessage: 'y'.repeat(1_000) });
  assert.equal(emitted[0]!.message, `${'x'.repeat(998)}…`, 'the emoji across the cut is left out whole');
  assert.equal(emitted[1]!.message, 'y'.repeat(1_000), 'words of exactly 1,000 characters are kept whole');
  for (const e of emitted) assert.ok((e.message as string).length <= 1_000);
});
