// The session engine's failures and compaction end to end on real parts (scripted model, the
// in-memory log): context overflow and the compaction it makes, provider errors, a bug in an action,
// a refused turn, /compact beside prompts. Every event is checked against spec/events.schema.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTroupeError, TroupeError } from '../../../src/core/errors.js';
import { Conversation } from '../../../src/actors/conversation.js';
import { ProviderError, type ModelProvider, type ModelRequest } from '../../../src/core/provider.js';
import { assertWellFormed, eventTypes as types, makeHarness, text, throwOnceOnAppend } from '../../support/engine-harness.js';
import { MAX_FAILURE_MESSAGE_CHARS } from '../../../src/machines/turn.machine.js';

test('preflight over the threshold compacts before the first step', async () => {
  const h = makeHarness(
    [[{ text: 'a'.repeat(400) }], [{ text: 'b'.repeat(400) }], [{ text: 'c'.repeat(400) }], [{ text: 'd' }]],
    { capabilities: { contextWindow: 500 }, limits: { keepTurns: 1 } },
  );
  for (let i = 0; i < 3; i++) await h.engine.prompt(text(`turn ${i}`)).result;
  const r = await h.engine.prompt(text('last')).result;
  assert.equal(r.stopReason, 'end_turn');
  const started = h.ofType('compaction_started');
  assert.ok(started.length >= 1);
  assert.equal(started.at(-1)!.reason, 'preflight');
  const done = h.ofType('compaction_completed').filter((e) => e.summary);
  assert.ok(done.length >= 1, 'older turns were summarized');
  assert.match(h.engine.conversation.messages()[0]!.role === 'user' ? JSON.stringify(h.engine.conversation.messages()[0]) : '', /Summary/);
});

// The overflow tests start with an earlier turn: a compaction needs something to make smaller (a
// session's first prompt has nothing to compact, and its overflow ends the turn at once, below).
test('a provider overflow mid-turn compacts once and retries the same step', async () => {
  const h = makeHarness([[{ text: 'earlier' }], [{ context_overflow: 'prompt is too long' }], [{ text: 'fits now' }]]);
  assert.equal((await h.engine.prompt(text('first')).result).stopReason, 'end_turn');
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.steps], ['end_turn', 1]);
  assert.deepEqual(h.ofType('compaction_started').map((e) => e.reason), ['overflow']);
  const [done] = h.ofType('compaction_completed');
  assert.equal(done!.status, 'completed');
  assert.ok(done!.summary, 'the earlier turn was summarized');
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['earlier', 'fits now'], 'the retried step answered');
  assertWellFormed(h);
});

test('a second overflow ends the turn with error/context_overflow, and the session goes on', async () => {
  const h = makeHarness([[{ text: 'earlier' }], [{ context_overflow: 'too long' }], [{ context_overflow: 'still too long' }], [{ text: 'recovered' }]]);
  assert.equal((await h.engine.prompt(text('first')).result).stopReason, 'end_turn');
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode, r.vendorMessage], ['error', 'context_overflow', 'still too long']);
  assert.deepEqual(h.ofType('compaction_started').map((e) => e.reason), ['overflow'], 'compacted once, then the second overflow ended the turn');
  assert.equal((await h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  assertWellFormed(h);
});

test('an overflow on a session\'s first prompt ends the turn at once: nothing to compact, no second model call', async () => {
  const requests: string[] = [];
  const h = makeHarness([[{ context_overflow: 'prompt is too long' }], [{ text: 'next answer' }]], {
    wrapProvider: (inner): ModelProvider => ({ ...inner, stream: (request, signal) => (requests.push(request.purpose), inner.stream(request, signal)) }),
  });
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode, r.steps, r.vendorMessage], ['error', 'context_overflow', 1, 'prompt is too long']);
  assert.match(r.message!, /does not fit the context window of scripted\/replay/);
  assert.deepEqual(requests, ['turn'], 'one model call: the refused request was not sent again');
  assert.deepEqual(h.ofType('compaction_started'), [], 'no compaction that could compact nothing');
  assert.deepEqual(h.ofType('compaction_completed'), []);
  // The session goes on; the next prompt gets the next reply.
  assert.equal((await h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['next answer']);
  assertWellFormed(h);
});

test('provider errors end the turn with a typed code, never a raw error', async () => {
  const h = makeHarness([[{ error: { kind: 'rate_limited', message: 'slow down', retry_after_ms: 1000 } }]]);
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode, r.message, r.retryAfterMs], ['error', 'provider_rate_limited', 'slow down', 1000]);
  assert.equal(h.ofType('turn_completed')[0]!.retryAfterMs, 1000, 'the log keeps when to retry');
  assertWellFormed(h);
});

test('a vendor that has no such model ends the turn model_not_found, not provider_invalid_request', async () => {
  const h = makeHarness([[{ error: { kind: 'model_not_found', message: 'model: claude-nope-9' } }]]);
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode, r.message], ['error', 'model_not_found', 'model: claude-nope-9']);
  assertWellFormed(h);
});

test('a rate-limited turn whose end the log then fails to make durable ends log_write_failed, with no retryAfterMs (the wait was for the rate limit)', async () => {
  const h = makeHarness([[{ error: { kind: 'rate_limited', message: 'slow down', retry_after_ms: 1000 } }]]);
  h.log.whenDurable = () => Promise.reject(new TroupeError('log_write_failed', 'the disk is full'));
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode, r.message], ['error', 'log_write_failed', 'the disk is full']);
  assert.equal(r.retryAfterMs, undefined);
});

test('a provider error message of megabytes (a proxy error page) is kept to its first 8192 characters: the turn ends with it, and the session goes on', async () => {
  const huge = 'E'.repeat(2 * 1024 * 1024);
  const h = makeHarness([[{ text: 'partial' }, { error: { kind: 'invalid_request', message: huge } }], [{ text: 'fine' }]]);
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode], ['error', 'provider_invalid_request']);
  assert.equal(r.message, `${'E'.repeat(MAX_FAILURE_MESSAGE_CHARS)}… [${huge.length - MAX_FAILURE_MESSAGE_CHARS} more characters]`);
  assert.equal(h.ofType('turn_completed')[0]?.message, r.message, 'in the log too');
  assert.equal((await h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  assertWellFormed(h);
});

test('an action that throws (a bug) stops only its session: its prompt is answered internal_error, its turn is ended in the log, and later requests are refused with it', async () => {
  const h = makeHarness([[{ text: 'hello' }]]);
  // The turn's last append throws once, as a bug in the action that makes it would.
  throwOnceOnAppend(h, 'turn_completed');
  const stopped: string[] = [];
  h.engine.onStop((err) => stopped.push(err.code));
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.errorCode], ['error', 'internal_error']);
  assert.match(r.message ?? '', /internal error: a bug in an action/);
  assert.deepEqual(stopped, ['internal_error']);
  const ended = h.ofType('turn_completed');
  assert.equal(ended.length, 1);
  assert.deepEqual([ended[0]!.stopReason, ended[0]!.errorCode], ['error', 'internal_error']);
  assert.throws(() => h.engine.prompt(text('again')), (e: unknown) => isTroupeError(e, 'internal_error'));
  assertWellFormed(h);
});

test('a refused turn is left out of later model calls: its prompt and everything after it (ACP refusal)', async () => {
  const requests: ModelRequest[] = [];
  const h = makeHarness([[{ text: 'Sure.' }], [{ text: 'I will not' }, { stop: 'refusal' }], [{ text: 'Fine.' }]], {
    wrapProvider: (inner): ModelProvider => ({
      id: inner.id,
      capabilities: (m) => inner.capabilities(m),
      stream: (request, signal) => (requests.push(structuredClone(request)), inner.stream(request, signal)),
    }),
  });
  await h.engine.prompt(text('first')).result;
  assert.equal((await h.engine.prompt(text('something refused')).result).stopReason, 'refusal');
  await h.engine.prompt(text('third')).result;
  const seen = JSON.stringify(requests[2]!.messages);
  assert.match(seen, /first/);
  assert.match(seen, /Sure\./);
  assert.doesNotMatch(seen, /something refused/, 'the refused prompt is gone');
  assert.doesNotMatch(seen, /I will not/, 'and what followed it');
  // Derived from the log alone: a session reopened from it sends the model the same.
  const again = new Conversation();
  for (const e of h.events) again.apply(e);
  assert.deepEqual(again.messages(), h.engine.conversation.messages());
  assertWellFormed(h);
});

/** The scripted model, with its summaries (compaction requests) held until `summaries.release()` or the request's abort. */
function heldSummaries() {
  const held = { started: false, release: () => {} };
  const wrapProvider = (inner: ModelProvider): ModelProvider => ({
    ...inner,
    capabilities: inner.capabilities.bind(inner),
    async *stream(request: ModelRequest, signal: AbortSignal) {
      if (request.purpose === 'compaction') {
        held.started = true;
        await new Promise<void>((resolve, reject) => {
          held.release = resolve;
          signal.addEventListener('abort', () => reject(new ProviderError('aborted', 'the request was aborted')), { once: true });
        });
      }
      yield* inner.stream(request, signal);
    },
  });
  return { held, wrapProvider };
}

test('a prompt sent while /compact runs waits for it: its turn starts after the compaction ends, which ends once', async () => {
  const { held, wrapProvider } = heldSummaries();
  const h = makeHarness([[{ text: 'one' }], [{ text: 'two' }]], { limits: { keepTurns: 0 }, wrapProvider });
  await h.engine.prompt(text('first')).result;
  const compacted = h.engine.compactNow();
  while (!held.started) await new Promise((r) => setTimeout(r, 1));
  const second = h.engine.prompt(text('second'));
  assert.equal(types(h).at(-1), 'compaction_started', 'the prompt has not started its turn');
  assert.equal(h.engine.state().queue.length, 1, 'it is queued');
  held.release();
  assert.equal(await compacted, 'completed');
  assert.equal((await second.result).stopReason, 'end_turn');
  const done = h.ofType('compaction_completed');
  assert.deepEqual(done.map((e) => e.status), ['completed'], 'one end, not a second one from the turn');
  assert.ok(done[0]!.seq < h.ofType('user_message')[1]!.seq, 'the turn starts after it');
  assertWellFormed(h);
});

test('cancel stops /compact: it answers cancelled, the compaction ends failed, the prompts waiting behind it are cancelled, and the session goes on', async () => {
  const { held, wrapProvider } = heldSummaries();
  const h = makeHarness([[{ text: 'one' }], [{ text: 'two' }]], { limits: { keepTurns: 0 }, wrapProvider });
  await h.engine.prompt(text('first')).result;
  const compacted = h.engine.compactNow();
  while (!held.started) await new Promise((r) => setTimeout(r, 1));
  const waiting = h.engine.prompt(text('behind it'));
  h.engine.cancel();
  assert.equal(await compacted, 'cancelled');
  assert.equal((await waiting.result).stopReason, 'cancelled');
  const [done] = h.ofType('compaction_completed');
  assert.deepEqual([done?.status, done?.errorCode], ['failed', 'request_cancelled']);
  assert.equal(h.ofType('user_message').length, 1, 'the cancelled prompt never ran');
  held.started = false;
  assert.equal((await h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  assertWellFormed(h);
});

test('/compact\'s own signal (its request withdrawn) stops it: cancelled, the compaction ends failed, the prompts waiting behind it run; one withdrawn before it starts never compacts', async () => {
  const { held, wrapProvider } = heldSummaries();
  const h = makeHarness([[{ text: 'one' }], [{ text: 'two' }]], { limits: { keepTurns: 0 }, wrapProvider });
  await h.engine.prompt(text('first')).result;
  const withdraw = new AbortController();
  const compacted = h.engine.compactNow(withdraw.signal);
  while (!held.started) await new Promise((r) => setTimeout(r, 1));
  const waiting = h.engine.prompt(text('behind it'));
  withdraw.abort();
  assert.equal(await compacted, 'cancelled');
  assert.equal((await waiting.result).stopReason, 'end_turn', 'only the withdrawn command was stopped');
  const [done] = h.ofType('compaction_completed');
  assert.deepEqual([done?.status, done?.errorCode], ['failed', 'request_cancelled']);
  assert.equal(await h.engine.compactNow(withdraw.signal), 'cancelled');
  assert.equal(h.ofType('compaction_started').length, 1, 'an already withdrawn /compact does not start');
  assert.ok(h.engine.idle);
  assertWellFormed(h);
});
