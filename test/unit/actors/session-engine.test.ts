// The session engine end to end on real parts: scripted model, real tools on a temp dir, the mode
// policy, the in-memory log. Every event is checked against spec/events.schema.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTroupeError, TroupeError } from '../../../src/core/errors.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { Conversation } from '../../../src/actors/conversation.js';
import { ProviderError, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../../src/core/provider.js';
import { makeHarness, text, throwOnceOnAppend, type Harness } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';
import { MAX_FAILURE_MESSAGE_CHARS } from '../../../src/machines/turn.machine.js';
import { transitionRecorder } from '../../../src/machines/transition-recorder.js';

const write = (path: string, content = 'hello\n') => ({ tool_call: { name: 'write_file', input: { path, content } } });

function types(h: Harness): string[] {
  return h.events.map((e) => e.type);
}

function assertWellFormed(h: Harness) {
  assert.deepEqual(h.schemaErrors, []);
  h.events.forEach((e, i) => assert.equal(e.seq, i + 1, 'seq from 1 with no holes'));
}

test('a plain turn streams chunks and completes end_turn after a durable last event', async () => {
  const h = makeHarness([[{ thought: 'thinking' }, { text: 'Hello ' }, { text: 'world' }]]);
  const { turnId, result } = h.engine.prompt(text('hi'));
  const r = await result;
  assert.deepEqual(r, { turnId, stopReason: 'end_turn', steps: 1 });
  assert.deepEqual(types(h), [
    'session_created',
    'user_message',
    'session_configured',
    'turn_started',
    'agent_thought_chunk',
    'agent_message_chunk',
    'agent_message_chunk',
    'usage',
    'turn_completed',
  ]);
  assert.equal(h.ofType('session_configured')[0]!.title, 'hi', 'the title comes from the first prompt');
  const chunks = h.ofType('agent_message_chunk');
  assert.equal(chunks[0]!.messageId, chunks[1]!.messageId, 'chunks of one message share a messageId');
  assertWellFormed(h);
});

test('a tool turn in default mode asks, runs the tool on disk, and feeds the result to the next step', async () => {
  const h = makeHarness([[{ text: 'Writing.' }, write('a.txt')], [{ text: 'Done.' }]], { mode: 'default' });
  h.asker['answers'].push('allow_once');
  const r = await h.engine.prompt(text('create a.txt')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(r.steps, 2);
  assert.equal(readFileSync(join(h.dir, 'a.txt'), 'utf8'), 'hello\n');
  assert.equal(h.asker.asked.length, 1);
  const tool = h.ofType('tool_call_updated').at(-1)!;
  assert.equal(tool.status, 'completed');
  assert.equal(tool.content?.[0]?.type, 'diff');
  const messages = h.engine.conversation.messages();
  assert.equal(messages.at(-2)?.role, 'tool', 'the tool result is in the conversation');
  assertWellFormed(h);
});

test('an allow_always answer is remembered: the next call of that tool is not asked', async () => {
  const h = makeHarness([[write('a.txt')], [write('b.txt')], [{ text: 'ok' }]], { mode: 'default', asker: new ControlledAsker(['allow_always']) });
  await h.engine.prompt(text('go')).result;
  assert.equal(h.asker.asked.length, 1);
  assert.ok(existsSync(join(h.dir, 'b.txt')));
  const resolved = h.ofType('permission_resolved');
  assert.deepEqual(resolved.map((e) => [e.outcome, e.decidedBy]), [
    ['allow_always', 'user'],
    ['allow_always', 'remembered'],
  ]);
  assert.equal(resolved[0]!.remember, 'write_file');
});

test('a rejected call is a tool failure the model reads; the turn goes on', async () => {
  const h = makeHarness([[write('a.txt')], [{ text: 'ok' }]], { mode: 'default', asker: new ControlledAsker(['reject_once']) });
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.ok(!existsSync(join(h.dir, 'a.txt')));
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([failed.status, failed.errorCode], ['failed', 'permission_denied']);
  const tool = h.engine.conversation.messages().find((m) => m.role === 'tool');
  assert.equal(tool?.role === 'tool' && tool.results[0]!.isError, true);
});

test('a permission nobody answers times out as a denial', async () => {
  const h = makeHarness([[write('a.txt')], [{ text: 'ok' }]], { mode: 'default', limits: { permissionTimeoutMs: 20 } });
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(h.ofType('permission_resolved')[0]!.outcome, 'timeout');
  assert.equal(h.ofType('tool_call_updated').at(-1)!.errorCode, 'tool_timeout');
  assert.ok(!existsSync(join(h.dir, 'a.txt')));
});

test('plan mode refuses mutating tools with a clear tool failure, without asking', async () => {
  const h = makeHarness([[write('a.txt')], [{ text: 'ok' }]], { mode: 'plan' });
  await h.engine.prompt(text('go')).result;
  assert.equal(h.asker.asked.length, 0);
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.equal(failed.errorCode, 'permission_denied');
  assert.match(failed.output ?? '', /plan/i);
});

test('cancel while streaming: cancelled, the chunks already emitted stay', async () => {
  const h = makeHarness([[{ text: 'partial' }, { hang: true }]]);
  const { result } = h.engine.prompt(text('go'));
  while (h.ofType('agent_message_chunk').length === 0) await new Promise((r) => setTimeout(r, 1));
  h.engine.cancel();
  const r = await result;
  assert.equal(r.stopReason, 'cancelled');
  assert.equal(h.ofType('agent_message_chunk')[0]!.text, 'partial');
  assert.equal(types(h).at(-1), 'turn_completed');
  assertWellFormed(h);
});

test('cancel while a permission is pending resolves it as cancelled', async () => {
  const h = makeHarness([[write('a.txt')]], { mode: 'default' });
  const { result } = h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  h.engine.cancel();
  assert.equal((await result).stopReason, 'cancelled');
  assert.equal(h.ofType('permission_resolved')[0]!.outcome, 'cancelled');
  assert.equal(h.ofType('tool_call_updated').at(-1)!.status, 'failed');
  assert.ok(!existsSync(join(h.dir, 'a.txt')));
});

test('cancel while a command runs kills it and marks the call failed', async () => {
  const marker = 'troupe-cancel-test-marker';
  const h = makeHarness([[{ tool_call: { name: 'run_command', input: { command: `sleep 30; touch ${marker}` } } }]]);
  const { result } = h.engine.prompt(text('go'));
  while (!h.ofType('tool_call_updated').some((e) => e.status === 'in_progress')) await new Promise((r) => setTimeout(r, 2));
  h.engine.cancel();
  assert.equal((await result).stopReason, 'cancelled');
  const last = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([last.status, last.errorCode], ['failed', 'request_cancelled']);
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(!existsSync(join(h.dir, marker)));
});

/** Each tool call's last status in the log. */
function lastStatuses(h: Harness): string[] {
  const statuses = new Map<string, string>();
  for (const e of h.events) {
    if (e.type === 'tool_call_started') statuses.set(e.toolCallId, e.status);
    if (e.type === 'tool_call_updated' && e.status) statuses.set(e.toolCallId, e.status);
  }
  return [...statuses.values()];
}

test('a cancel ends every call of the step: the calls not yet run are failed, never left pending, and the next prompt works', async () => {
  const run = (command: string) => ({ tool_call: { name: 'run_command', input: { command } } });
  const h = makeHarness([[run('sleep 30'), run('echo later')], [{ text: 'next' }]]);
  const { result } = h.engine.prompt(text('go'));
  while (!h.ofType('tool_call_updated').some((e) => e.status === 'in_progress')) await new Promise((r) => setTimeout(r, 2));
  h.engine.cancel();
  assert.equal((await result).stopReason, 'cancelled');
  assert.deepEqual(lastStatuses(h), ['failed', 'failed']);
  const second = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([second.errorCode, second.output], ['request_cancelled', 'The turn was cancelled before this tool call ran.']);
  assert.ok(second.seq < h.ofType('turn_completed')[0]!.seq, 'before the turn ends');
  assert.equal((await h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  assertWellFormed(h);
});

test('a cancel at the permission prompt of the first of two calls fails both', async () => {
  const h = makeHarness([[write('a.txt'), write('b.txt')]], { mode: 'default' });
  const { result } = h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  h.engine.cancel();
  assert.equal((await result).stopReason, 'cancelled');
  assert.deepEqual(lastStatuses(h), ['failed', 'failed']);
  assertWellFormed(h);
});

test('steer: guidance is applied at the next boundary and reaches the model', async () => {
  const h = makeHarness([[{ delay_ms: 30 }, write('a.txt')], [{ text: 'adjusted' }]]);
  const { turnId, result } = h.engine.prompt(text('go'));
  await new Promise((r) => setTimeout(r, 5));
  const { steerId } = h.engine.steer(turnId, text('use tabs'));
  await result;
  const applied = h.ofType('steer_applied');
  assert.deepEqual(applied.map((e) => [e.steerId, e.step]), [[steerId, 2]]);
  const appliedSeq = applied[0]!.seq;
  const secondStep = h.ofType('agent_message_chunk').find((e) => e.text === 'adjusted')!;
  assert.ok(appliedSeq < secondStep.seq, 'applied before the next model call');
  const guidance = h.engine.conversation.messages().filter((m) => m.role === 'user').flatMap((m) => (m.role === 'user' ? m.content : []));
  assert.ok(guidance.some((b) => b.type === 'text' && b.text === 'use tabs'));
});

test('steer with a wrong turn id or no turn: typed errors, recorded as rejected', async () => {
  const h = makeHarness([[{ delay_ms: 20 }, { text: 'x' }]]);
  assert.throws(() => h.engine.steer('turn_nope', text('x')), (e) => isTroupeError(e, 'no_active_turn'));
  const { result } = h.engine.prompt(text('go'));
  assert.throws(() => h.engine.steer('turn_nope', text('x')), (e) => isTroupeError(e, 'turn_mismatch'));
  await result;
  assert.deepEqual(h.ofType('steer_rejected').map((e) => e.code), ['no_active_turn', 'turn_mismatch']);
});

test('a prompt or steer larger than one event is logged in parts; the model, and a conversation folded from the log, get it whole', async () => {
  const requests: ModelRequest[] = [];
  const h = makeHarness([[{ delay_ms: 30 }, { tool_call: { name: 'list_dir', input: {} } }], [{ text: 'y' }]], {
    wrapProvider: (inner): ModelProvider => ({
      id: inner.id,
      capabilities: (m) => inner.capabilities(m),
      stream: (request, signal) => (requests.push(request), inner.stream(request, signal)),
    }),
  });
  // Over the 1 MiB event limit (spec/event-log.md §5.1).
  const prompt = `big ${'z'.repeat(2 * 1024 * 1024)}`;
  const guidance = `steer ${'w'.repeat(1_500_000)}`;
  const { turnId, result } = h.engine.prompt(text(prompt));
  await new Promise((r) => setTimeout(r, 5));
  const { steerId } = h.engine.steer(turnId, text(guidance));
  assert.equal((await result).stopReason, 'end_turn');

  const [message] = h.ofType('user_message');
  const [steer] = h.ofType('steer_received');
  assert.deepEqual([message!.content, steer!.content], [[], []], 'the messages themselves hold no content');
  const parts = h.ofType('content_part');
  assert.deepEqual(
    parts.map((p) => [p.partOf, p.index]),
    [...Array.from({ length: message!.parts! }, (_, i) => [message!.messageId, i]), ...Array.from({ length: steer!.parts! }, (_, i) => [steerId, i])],
  );
  assert.ok(message!.parts! >= 3 && steer!.parts! >= 2, `${message!.parts} and ${steer!.parts} parts`);
  for (const p of [...parts, message!, steer!]) assert.equal(h.events[h.events.indexOf(p) + 1]!.seq, p.seq + 1);
  assert.equal(h.events[h.events.indexOf(message!) - 1]!.type, 'content_part', 'the parts come right before their message');

  // The model got both whole: the prompt in its first step, the guidance in its second.
  const said = (r: ModelRequest) => r.messages.flatMap((m) => (m.role === 'user' ? m.content : [])).map((b) => (b.type === 'text' ? b.text : ''));
  assert.ok(said(requests[0]!).includes(prompt));
  assert.ok(said(requests[1]!).includes(prompt) && said(requests[1]!).includes(guidance));
  // Derived from the log alone: a session reopened from it sends the model the same.
  const again = new Conversation();
  for (const e of h.events) again.apply(e);
  assert.deepEqual(again.messages(), h.engine.conversation.messages());
  assertWellFormed(h);
});

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

test('an edit of a file too large for its diff to fit the log is recorded: the diff shows the lines that changed, and the model reads the result', async () => {
  const edit = { tool_call: { name: 'edit_file', input: { path: 'big.txt', old_string: 'NEEDLE', new_string: 'FOUND' } } };
  const h = makeHarness([[edit], [{ text: 'edited' }]]);
  const lines = Array.from({ length: 25_000 }, (_, i) => `line ${i} of a file of some 650 KB`);
  lines.splice(12_000, 0, 'NEEDLE');
  const before = lines.join('\n') + '\n';
  writeFileSync(join(h.dir, 'big.txt'), before);
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'big.txt'), 'utf8'), before.replace('NEEDLE', 'FOUND'));
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.ok(done, 'the call is recorded as completed');
  assert.match(done.output ?? '', /^Edited big\.txt: replaced 1 occurrence/);
  const diff = done.content?.find((c) => c.type === 'diff');
  assert.deepEqual(diff, {
    type: 'diff',
    path: join(h.dir, 'big.txt'),
    oldText: lines.slice(11_997, 12_004).join('\n') + '\n',
    newText: lines.slice(11_997, 12_004).join('\n').replace('NEEDLE', 'FOUND') + '\n',
  });
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['edited'], 'the model went on after reading the result');
  assertWellFormed(h);
});

test('a rewrite too large to show even narrowed is recorded with its output and a note instead of the diff', async () => {
  const next = 'b'.repeat(600_000);
  const h = makeHarness([[{ tool_call: { name: 'write_file', input: { path: 'big.txt', content: next } } }], [{ text: 'written' }]]);
  writeFileSync(join(h.dir, 'big.txt'), 'a'.repeat(600_000));
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'big.txt'), 'utf8'), next);
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.match(done?.output ?? '', /^Wrote big\.txt/);
  assert.deepEqual(done?.content, [{ type: 'text', text: `${done?.output}\n[This result is too large for the session log to show; the model read its output.]` }]);
  assertWellFormed(h);
});

test('an output of control characters too large for the log is cut to what fits it in bytes, not characters, and the turn goes on', async () => {
  // 200,000 characters of \u0001 are 1.2 MB of JSON, held twice in the result's event (output and
  // content): cut to 256 Ki characters, the last resort was still over the log's 1 MiB, and the turn
  // failed with event_too_large (until 2026-12-07).
  const h = makeHarness([[{ tool_call: { name: 'read_file', input: { path: 'ctl.bin' } } }], [{ text: 'read' }]]);
  writeFileSync(join(h.dir, 'ctl.bin'), '\u0001'.repeat(200_000));
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.ok(done, 'the call is recorded as completed');
  const note = '[This result is too large for the session log to show; the model read its output.]';
  assert.match(done.output ?? '', /\u0001… \[cut\]$/);
  assert.ok((done.output ?? '').length > 50_000, 'most of what fits is kept');
  assert.deepEqual(done.content, [{ type: 'text', text: `${done.output}\n${note}` }]);
  assert.ok(Buffer.byteLength(JSON.stringify(done)) <= 1024 * 1024, 'the event fits the log');
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['read'], 'the model went on after reading the result');
  assertWellFormed(h);
});

test('the step limit gives max_turn_requests', async () => {
  const h = makeHarness([[write('a.txt')], [write('b.txt')], [write('c.txt')]], { limits: { maxSteps: 2 } });
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.steps], ['max_turn_requests', 2]);
  assert.ok(!existsSync(join(h.dir, 'c.txt')), 'no third step ran');
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

test('an unknown tool is a failed call the model reads', async () => {
  const h = makeHarness([[{ tool_call: { name: 'teleport', input: {} } }], [{ text: 'ok' }]]);
  await h.engine.prompt(text('go')).result;
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([failed.status, failed.errorCode], ['failed', 'unknown_tool']);
});

test("an unknown tool's name, the model's text, is its call's title as one printable line", async () => {
  // Until 2026-12-07 the name reached the editor raw as the title: an ESC or a bidi override in it.
  const h = makeHarness([[{ tool_call: { name: 'tele\x1b[2Jport\u202e\nnow', input: {} } }], [{ text: 'ok' }]]);
  await h.engine.prompt(text('go')).result;
  assert.equal(h.ofType('tool_call_started').at(-1)!.title, 'tele [2Jport now');
  assert.equal(h.ofType('tool_call_updated').at(-1)!.errorCode, 'unknown_tool');
});

test('a vendor call id the session already has (calls numbered per response) is made unique: every call is shown once and its result reaches the model', async () => {
  const read = (path: string, id: string) => ({ tool_call: { name: 'read_file', input: { path }, id } });
  const h = makeHarness(
    [
      [read('a.txt', 'call_0')],
      [read('b.txt', 'call_0'), read('a.txt', 'call_1'), read('b.txt', 'call_1')],
      [{ text: 'done' }],
      [read('b.txt', 'call_0')],
      [{ text: 'again' }],
    ],
    { mode: 'bypass' },
  );
  writeFileSync(join(h.dir, 'a.txt'), 'ay\n');
  writeFileSync(join(h.dir, 'b.txt'), 'bee\n');
  assert.equal((await h.engine.prompt(text('read both')).result).stopReason, 'end_turn');
  assert.equal((await h.engine.prompt(text('read b')).result).stopReason, 'end_turn');
  const ids = h.ofType('tool_call_started').map((e) => e.toolCallId);
  assert.equal(ids.length, 5);
  assert.equal(new Set(ids).size, 5, `every call has its own id: ${ids.join(', ')}`);
  assert.equal(ids[0], 'call_0', 'an id not taken yet is the vendor\'s');
  const done = h.ofType('tool_call_updated').filter((e) => e.status === 'completed');
  assert.deepEqual(done.map((e) => e.toolCallId), ids, 'each call ran once');
  const results = h.engine.conversation.messages().flatMap((m) => (m.role === 'tool' ? m.results : []));
  assert.deepEqual(
    results.map((r) => [r.toolCallId, r.output.includes('bee') ? 'b' : r.output.includes('ay') ? 'a' : r.output]),
    ids.map((id, i) => [id, 'ababb'[i]]),
    'the model reads each call\'s own result, none answered as not run',
  );
  assertWellFormed(h);
});

test('one id for two calls of a reply that starts both before it ends either (Chat Completions): each runs under its own name, with its own input', async () => {
  const h = makeHarness(
    [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' }, id: 'call_0' } }, { tool_call: { name: 'write_file', input: { path: 'b.txt', content: 'bee' }, id: 'call_0' } }], [{ text: 'done' }]],
    {
      mode: 'bypass',
      // Every start of the reply first, then the ends, as an OpenAI-compatible stream maps them.
      wrapProvider: (inner): ModelProvider => ({
        id: inner.id,
        capabilities: (m) => inner.capabilities(m),
        async *stream(request, signal) {
          const ends: ProviderEvent[] = [];
          for await (const ev of inner.stream(request, signal)) {
            if (ev.type === 'tool_call_end') {
              ends.push(ev);
              continue;
            }
            if (ev.type === 'stop' || ev.type === 'usage') yield* ends.splice(0);
            yield ev;
          }
          yield* ends;
        },
      }),
    },
  );
  writeFileSync(join(h.dir, 'a.txt'), 'ay\n');
  assert.equal((await h.engine.prompt(text('read a, write b')).result).stopReason, 'end_turn');
  const started = h.ofType('tool_call_started');
  assert.deepEqual(started.map((e) => e.name), ['read_file', 'write_file']);
  assert.deepEqual(started.map((e) => e.input), [{ path: 'a.txt' }, { path: 'b.txt', content: 'bee' }]);
  assert.equal(readFileSync(join(h.dir, 'b.txt'), 'utf8'), 'bee');
  assertWellFormed(h);
});

test('queued prompts run in order, each with its own result', async () => {
  const h = makeHarness([[{ delay_ms: 10 }, { text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]]);
  const handles = [h.engine.prompt(text('1')), h.engine.prompt(text('2')), h.engine.prompt(text('3'))];
  const results = await Promise.all(handles.map((p) => p.result));
  assert.deepEqual(results.map((r) => r.turnId), handles.map((p) => p.turnId));
  assert.deepEqual(h.ofType('turn_started').map((e) => e.turnId), handles.map((p) => p.turnId));
});

test('withdrawing one prompt cancels only it: queued, it never runs; running, its turn ends and the queue goes on', async () => {
  const h = makeHarness([[{ text: 'partial' }, { hang: true }], [{ text: 'three' }]]);
  const [one, two, three] = [h.engine.prompt(text('1')), h.engine.prompt(text('2')), h.engine.prompt(text('3'))];
  while (h.ofType('agent_message_chunk').length === 0) await new Promise((r) => setTimeout(r, 1));
  h.engine.withdraw(two.promptId);
  assert.equal((await two.result).stopReason, 'cancelled', 'the queued prompt is answered at once');
  assert.deepEqual(h.ofType('turn_started').map((e) => e.turnId), [one.turnId], 'and never runs');
  h.engine.withdraw(one.promptId);
  assert.equal((await one.result).stopReason, 'cancelled');
  assert.equal((await three.result).stopReason, 'end_turn', 'the rest of the queue still runs');
  assert.deepEqual(h.ofType('turn_started').map((e) => e.turnId), [one.turnId, three.turnId]);
  h.engine.withdraw(one.promptId);
  assert.ok(h.engine.idle, 'withdrawing a prompt that is done changes nothing');
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

test('reopening a log whose turn never completed ends that turn as agent_crashed', async () => {
  const h = makeHarness([[write('a.txt')]], { mode: 'default' });
  h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  // The process "dies" here: a new engine opens the same log.
  const reopened = await SessionEngine.open(
    { ...(h.engine as any).core.deps, asker: new ControlledAsker() },
    h.engine.sessionId,
  );
  const tail = h.events.slice(-3).map((e) => e.type);
  assert.deepEqual(tail, ['permission_resolved', 'tool_call_updated', 'turn_completed']);
  const done = h.ofType('turn_completed').at(-1)!;
  assert.deepEqual([done.stopReason, done.errorCode], ['error', 'agent_crashed']);
  assert.equal(reopened.state().session, 'idle');
  assertWellFormed(h);
  // The "dead" engine still holds its permission timer: release it so the test process can exit.
  await h.engine.dispose();
});

test("an inspector given at open is told the machines' first state: a reopened session's idle, after its crashed turn", async () => {
  const h = makeHarness([[write('a.txt')]], { mode: 'default' });
  h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  const told: string[] = [];
  const record = transitionRecorder((t) => told.push(`${t.machine} ${t.state} on ${t.event}`));
  const reopened = await SessionEngine.open({ ...(h.engine as any).core.deps, asker: new ControlledAsker() }, h.engine.sessionId, undefined, { inspect: record });
  assert.deepEqual(told, ['session idle on init'], 'what the daemon is told the session is once its process is replaced');
  await reopened.dispose();
  await h.engine.dispose();
});

test('update_plan publishes the complete plan as plan_updated; a malformed plan is a failed call', async () => {
  const entries = [
    { content: 'read the code', priority: 'high', status: 'completed' },
    { content: 'fix the bug', priority: 'medium', status: 'in_progress' },
  ];
  const h = makeHarness([
    [{ tool_call: { name: 'update_plan', input: { entries } } }],
    [{ tool_call: { name: 'update_plan', input: { entries: [{ content: 'x', priority: 'urgent', status: 'pending' }] } } }],
    [{ text: 'ok' }],
  ]);
  await h.engine.prompt(text('plan it')).result;
  const plans = h.ofType('plan_updated');
  assert.equal(plans.length, 1);
  assert.deepEqual(plans[0]!.entries, entries);
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([failed.status, failed.errorCode], ['failed', 'invalid_params']);
  assert.match(failed.output ?? '', /priority/);
  assertWellFormed(h);
});

test('an inspector that throws (a broken feed) does not stop the session machines: the turns go on', async () => {
  const h = makeHarness([[{ text: 'one' }], [{ text: 'two' }]]);
  let told = 0;
  h.engine.inspect(() => {
    told++;
    throw new Error('a feed broke');
  });
  assert.equal((await h.engine.prompt(text('first')).result).stopReason, 'end_turn');
  assert.equal((await h.engine.prompt(text('second')).result).stopReason, 'end_turn');
  assert.ok(told > 0, 'the inspector was told');
  assert.equal(h.ofType('turn_completed').length, 2);
});

/** The scripted model, with the arguments of the call `id` replaced by `args` (what a vendor's stream cut short gives: its raw text, or none). */
function cutArgs(id: string, args: { raw?: string }) {
  return (inner: ModelProvider): ModelProvider => ({
    ...inner,
    capabilities: inner.capabilities.bind(inner),
    async *stream(request: ModelRequest, signal: AbortSignal) {
      for await (const ev of inner.stream(request, signal)) {
        if (ev.type === 'tool_call_end' && ev.id === id) yield { ...ev, input: {}, ...(args.raw === undefined ? {} : { invalidArgs: args.raw }) } as ProviderEvent;
        else yield ev;
      }
    },
  });
}

for (const [what, raw] of [['cut short', '{"path": "a.txt", "content": "hel'], ['before any argument', undefined]] as const) {
  test(`a call the output token limit cut ${what} (max_tokens) is not run: the model is told why, and goes on`, async () => {
    const call = { tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'hello' }, id: 'call_cut' } };
    let told = '';
    const h = makeHarness([[write('b.txt'), call, { stop: 'max_tokens' }], [{ text: 'I will send it smaller.' }]], {
      wrapProvider: (inner) => {
        const cut = cutArgs('call_cut', raw === undefined ? {} : { raw })(inner);
        return {
          ...cut,
          stream(request, signal) {
            told = JSON.stringify(request.messages.at(-1));
            return cut.stream(request, signal);
          },
        };
      },
    });
    const r = await h.engine.prompt(text('write both')).result;
    assert.equal(r.stopReason, 'end_turn');
    assert.ok(existsSync(join(h.dir, 'b.txt')), 'the whole call before it ran');
    assert.ok(!existsSync(join(h.dir, 'a.txt')), 'the cut call did not run');
    const failed = h.ofType('tool_call_updated').find((e) => e.toolCallId === 'call_cut' && e.status === 'failed');
    assert.match(failed?.output ?? '', /output token limit \(max_tokens\).*incomplete/);
    assert.match(told, /output token limit/, 'the model reads why');
    assertWellFormed(h);
  });
}

test('a whole last call of a reply that then reached max_tokens runs', async () => {
  const h = makeHarness([[write('a.txt'), { stop: 'max_tokens' }], [{ text: 'done' }]]);
  assert.equal((await h.engine.prompt(text('write')).result).stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'a.txt'), 'utf8'), 'hello\n');
});
