// The session engine's turns end to end on real parts (scripted model, real tools on a temp dir, the
// mode policy, the in-memory log): a plain turn, permissions, cancel, steer, queued and withdrawn
// prompts, a reopened log, inspectors. Every event is checked against spec/events.schema.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTroupeError } from '../../../src/core/errors.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { Conversation } from '../../../src/actors/conversation.js';
import { type ModelProvider, type ModelRequest } from '../../../src/core/provider.js';
import { assertWellFormed, eventTypes as types, makeHarness, text, writeCall as write, type Harness } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';
import { transitionRecorder } from '../../../src/machines/transition-recorder.js';

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
