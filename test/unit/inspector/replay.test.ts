// Time travel: the machine states rebuilt from a session's log equal the states the live engine
// reported. Live states are recorded exactly as a supervised child reports them: the engine's
// XState inspection events through the real ControlChannel, over a real socket, decoded with the
// real frame codec. The replay sees only the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replaySession, replaySessionInSlices, statesAt } from '../../../src/machines/replay.js';
import { makeHarness, text, type Harness } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';
import type { ModelProvider } from '../../../src/core/provider.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { recorded, replayed, until } from './live-recorder.js';

const write = (path: string) => ({ tool_call: { name: 'write_file', input: { path, content: 'x\n' } } });

test('a text turn and a tool turn with a permission granted: replay equals live', async () => {
  const r = await recorded([[{ text: 'hi' }], [{ text: 'Writing.' }, write('a.txt')], [{ text: 'Done.' }]], { mode: 'default' });
  await r.h.engine.prompt(text('hello')).result;
  r.h.asker['answers'].push('allow_once');
  await r.h.engine.prompt(text('write a.txt')).result;
  const live = await r.finish();
  assert.ok(live.some((t) => t.state === 'tools.awaitingPermission'), 'the live run went through the permission state');
  assert.deepEqual(replayed(r.h), live);
});

test('a denied permission, two tools in one step, and a steer applied at the boundary', async () => {
  const r = await recorded(
    [
      [{ delay_ms: 30 }, write('a.txt'), { tool_call: { name: 'list_dir', input: { path: '.' } } }],
      [{ text: 'adjusted' }],
    ],
    { mode: 'default' },
  );
  r.h.asker['answers'].push('reject_once');
  const { turnId, result } = r.h.engine.prompt(text('go'));
  await new Promise((res) => setTimeout(res, 5));
  r.h.engine.steer(turnId, text('use tabs'));
  assert.equal((await result).stopReason, 'end_turn');
  const live = await r.finish();
  assert.equal(r.h.ofType('steer_applied').length, 1);
  assert.deepEqual(replayed(r.h), live);
});

test('a call that would be asked about but cannot succeed (its preview fails) fails unasked, and the replay equals live: decided and refused, never awaiting permission', async () => {
  const doomed = { tool_call: { name: 'edit_file', input: { path: 'missing.txt', old_string: 'a', new_string: 'b' } } };
  const r = await recorded([[doomed, write('a.txt')], [{ text: 'Done.' }]], { mode: 'default' });
  r.h.asker['answers'].push('allow_once');
  assert.equal((await r.h.engine.prompt(text('go')).result).stopReason, 'end_turn');
  const live = await r.finish();
  assert.equal(r.h.ofType('permission_requested').length, 1, 'only the write was asked about');
  assert.equal(live.filter((t) => t.state === 'tools.awaitingPermission').length, 1);
  assert.deepEqual(replayed(r.h), live);
});

test('a tool call whose input is logged in parts (over the 1 MiB event limit), asked and granted: replay equals live', async () => {
  const big = { tool_call: { name: 'write_file', input: { path: 'big.txt', content: 'x'.repeat(1_200_000) } } };
  const r = await recorded([[{ text: 'Writing.' }, big], [{ text: 'Done.' }]], { mode: 'default' });
  r.h.asker['answers'].push('allow_once');
  assert.equal((await r.h.engine.prompt(text('write it')).result).stopReason, 'end_turn');
  const live = await r.finish();
  assert.ok(r.h.ofType('content_part').length > 1, 'the input was logged in parts');
  assert.deepEqual(replayed(r.h), live);
});

test('cancels: while streaming, while a permission is open, while a tool runs', async () => {
  const r = await recorded(
    [
      [{ text: 'partial' }, { hang: true }],
      [write('b.txt')],
      [{ tool_call: { name: 'run_command', input: { command: 'sleep 30' } } }],
    ],
    { mode: 'default' },
  );
  const a = r.h.engine.prompt(text('one'));
  await until(() => r.h.ofType('agent_message_chunk').length > 0);
  r.h.engine.cancel();
  await a.result;
  const b = r.h.engine.prompt(text('two'));
  await r.h.asker.whenAsked();
  r.h.engine.cancel();
  await b.result;
  r.h.asker['answers'].push('allow_once');
  const c = r.h.engine.prompt(text('three'));
  await until(() => r.h.ofType('tool_call_updated').some((e) => e.status === 'in_progress' && e.turnId === c.turnId));
  r.h.engine.cancel();
  assert.equal((await c.result).stopReason, 'cancelled');
  const live = await r.finish();
  assert.deepEqual(replayed(r.h), live);
});

test('a session_closed right after a cancelled turn (as SessionEngine.close() wrote it, until 2026-12-07) replays as a close during the turn: straight to closed', async (t) => {
  // No process writes this any more (a delete's tombstone is its only session_closed, and keeps no
  // history): logs that hold it are still replayed. Written through the real log, after a real cancel.
  const h = makeHarness([[{ text: 'x' }, { hang: true }]]);
  t.after(() => h.engine.dispose());
  const a = h.engine.prompt(text('go'));
  await until(() => h.ofType('agent_message_chunk').length > 0);
  h.engine.cancel();
  await a.result;
  h.log.append({ type: 'session_closed', sessionId: h.engine.sessionId, reason: 'closed' });
  const ended = h.ofType('turn_completed')[0]!;
  const all = replaySession(h.events);
  assert.deepEqual(
    all.filter((x) => x.seq >= ended.seq).map((x) => [x.seq, x.machine, x.state, x.event]),
    [
      [ended.seq, 'turn', 'done', 'CANCEL'],
      [ended.seq, 'session', 'closed', 'done: turn'],
    ],
  );
});

test('errors, an overflow with nothing to compact, and a provider overflow that compacts and retries', async () => {
  const r = await recorded([
    [{ context_overflow: 'too long' }],
    [{ context_overflow: 'too long' }],
    [{ text: 'after compaction' }],
    [{ error: { kind: 'invalid_request', message: 'bad' } }],
  ]);
  // The session's first prompt: nothing to compact, so the overflow ends the turn at once. Then
  // there is an earlier turn to summarize: the overflow compacts, and the retried step answers.
  const first = await r.h.engine.prompt(text('big')).result;
  const a = await r.h.engine.prompt(text('again')).result;
  const b = await r.h.engine.prompt(text('bad')).result;
  const live = await r.finish();
  assert.deepEqual([first.stopReason, first.errorCode], ['error', 'context_overflow']);
  assert.equal(a.stopReason, 'end_turn');
  assert.equal(b.stopReason, 'error');
  assert.deepEqual(r.h.ofType('compaction_started').map((e) => [e.reason, e.turnId]), [['overflow', r.h.ofType('turn_started')[1]!.turnId]]);
  assert.ok(live.some((t) => t.state === 'compacting'), 'the live run compacted');
  assert.deepEqual(replayed(r.h), live);
});

test('statesAt gives the states at any seq, and each transition names its cause', async () => {
  const r = await recorded([[write('a.txt')], [{ text: 'ok' }]], { mode: 'default' });
  r.h.asker['answers'].push('allow_once');
  await r.h.engine.prompt(text('go')).result;
  await r.finish();
  const all = replaySession(r.h.events);
  const asked = r.h.ofType('permission_requested')[0]!;
  assert.deepEqual(statesAt(all, asked.seq), { session: 'running', turn: 'tools.awaitingPermission' });
  assert.deepEqual(statesAt(all, asked.seq - 1), { session: 'running', turn: 'modelStep' });
  assert.deepEqual(statesAt(all), { session: 'idle', turn: 'done' });
  const toAsk = all.find((t) => t.state === 'tools.awaitingPermission')!;
  assert.equal(toAsk.cause.type, 'permission_requested');
  assert.equal(toAsk.event, 'done: decideTool');
  assert.equal(toAsk.at, asked.ts);
});

test('replayed in slices, with pauses between them, a log gives the same transitions', async () => {
  const r = await recorded([[write('a.txt')], [{ text: 'ok' }]], { mode: 'default' });
  r.h.asker['answers'].push('allow_once');
  await r.h.engine.prompt(text('go')).result;
  await r.finish();
  let pauses = 0;
  const sliced = await replaySessionInSlices(r.h.events, async () => void pauses++, 3);
  assert.deepEqual(sliced, replaySession(r.h.events));
  assert.equal(pauses, Math.ceil(r.h.events.length / 3) - 1);
});

test('a turn the log ended as agent_crashed restarts the machines', () => {
  const base = { sessionId: 'ses_x', ts: 1 };
  const events = [
    { ...base, seq: 1, type: 'session_created', cwd: '/', additionalDirectories: [], model: 'm', mode: 'default' },
    { ...base, seq: 2, type: 'user_message', turnId: 't1', messageId: 'm1', content: text('go') },
    { ...base, seq: 3, type: 'turn_started', turnId: 't1', maxSteps: 5 },
    { ...base, seq: 4, type: 'agent_message_chunk', turnId: 't1', messageId: 'a1', text: 'x' },
    { ...base, seq: 5, type: 'turn_completed', turnId: 't1', stopReason: 'error', errorCode: 'agent_crashed', steps: 1 },
  ] as never;
  const all = replaySession(events);
  assert.deepEqual(statesAt(all, 4), { session: 'running', turn: 'modelStep' });
  assert.deepEqual(statesAt(all, 5), { session: 'idle' });
  assert.deepEqual([all.at(-1)!.machine, all.at(-1)!.event, all.at(-1)!.cause.seq], ['session', 'init', 5]);
});

test('preflight compaction before a step, as live', async () => {
  const r = await recorded([[{ text: 'a'.repeat(400) }], [{ text: 'b'.repeat(400) }], [{ text: 'c'.repeat(400) }], [{ text: 'd' }]], {
    capabilities: { contextWindow: 500 },
    limits: { keepTurns: 1 },
  });
  for (let i = 0; i < 4; i++) await r.h.engine.prompt(text(`turn ${i}`)).result;
  const live = await r.finish();
  assert.ok(r.h.ofType('compaction_started').some((e) => e.reason === 'preflight'));
  assert.ok(live.some((t) => t.state === 'compacting' && t.event === 'done: preflight'), 'the live run compacted at preflight');
  assert.deepEqual(replayed(r.h), live);
});

test("model calls made again (a step's and a compaction summary's) are in the log as model_retry, and replay equals live", async () => {
  // Every call is refused once before it answers: the adapters' retry, as its ProviderEvent.
  const refusedOnce = (scripted: ModelProvider): ModelProvider => ({
    id: scripted.id,
    capabilities: (model) => scripted.capabilities(model),
    async *stream(request, signal) {
      yield { type: 'retry', kind: 'rate_limited', status: 429, vendorMessage: 'slow down', attempt: 2, attempts: 3, delayMs: 5 };
      yield* scripted.stream(request, signal);
    },
  });
  const r = await recorded([[{ text: 'a'.repeat(400) }], [{ text: 'b'.repeat(400) }], [{ text: 'c'.repeat(400) }], [{ text: 'd' }]], {
    capabilities: { contextWindow: 500 },
    limits: { keepTurns: 1 },
    wrapProvider: refusedOnce,
  });
  for (let i = 0; i < 4; i++) assert.equal((await r.h.engine.prompt(text(`turn ${i}`)).result).stopReason, 'end_turn');
  const live = await r.finish();
  const retries = r.h.ofType('model_retry');
  const inCompaction = retries.filter((e) => r.h.events.some((c) => c.type === 'compaction_started' && c.seq < e.seq && !r.h.events.some((d) => d.type === 'compaction_completed' && d.seq > c.seq && d.seq < e.seq)));
  assert.ok(inCompaction.length > 0, 'a compaction summary was retried');
  assert.ok(retries.length > inCompaction.length, 'a step was retried');
  assert.deepEqual(
    retries.map(({ provider, errorCode, status, message, attempt, attempts, delayMs }) => ({ provider, errorCode, status, message, attempt, attempts, delayMs })),
    retries.map(() => ({ provider: 'scripted', errorCode: 'provider_rate_limited', status: 429, message: 'slow down', attempt: 2, attempts: 3, delayMs: 5 })),
  );
  assert.ok(retries.every((e) => e.turnId), 'each in its turn');
  assert.deepEqual(r.h.schemaErrors, []);
  assert.deepEqual(replayed(r.h), live);
  // A retry is its call's: the replay holds the step, or the compaction, through what follows it.
  const all = replaySession(r.h.events);
  for (const e of r.h.events.filter((x) => x.type === 'agent_message_chunk')) assert.equal(statesAt(all, e.seq).turn, 'modelStep', `at #${e.seq}`);
  for (const e of r.h.events.filter((x) => x.type === 'compaction_completed')) assert.equal(statesAt(all, e.seq - 1).turn, 'compacting', `before #${e.seq}`);
});

test('the step limit ends a turn after its tools, and late or wrong steers change nothing, as live', async () => {
  // (The recorder attaches after the session machine started, so the first thing it sees must
  // change a state, as the init would have in a real child: a prompt, not a rejected steer.)
  const r = await recorded([[{ text: 'a' }, write('a.txt')], [{ delay_ms: 50 }, write('b.txt')], [write('c.txt')]], { limits: { maxSteps: 2 } });
  const p = r.h.engine.prompt(text('go'));
  assert.throws(() => r.h.engine.steer('turn_nope', text('x')));
  await until(() => r.h.ofType('tool_call_updated').some((e) => e.status === 'completed'));
  r.h.engine.steer(p.turnId, text('too late?'));
  const result = await p.result;
  assert.throws(() => r.h.engine.steer('turn_nope', text('x')));
  const live = await r.finish();
  assert.equal(result.stopReason, 'max_turn_requests');
  assert.deepEqual(r.h.ofType('steer_rejected').map((e) => e.code).sort(), ['no_active_turn', 'turn_ended', 'turn_mismatch']);
  assert.deepEqual(replayed(r.h), live);
});

test("what crash repair wrote is not replayed as the dead process's doing: a crash at a permission prompt, in a tool's run or in a compaction shows the machines where they were until the restart", async (t) => {
  const cases: { state: string; h: Harness; first?: string; reached: (h: Harness) => Promise<void> }[] = [
    { state: 'tools.awaitingPermission', h: makeHarness([[write('a.txt')]], { mode: 'default' }), reached: (h) => h.asker.whenAsked() },
    {
      state: 'tools.running',
      h: makeHarness([[{ tool_call: { name: 'run_command', input: { command: 'sleep 30' } } }]], { mode: 'bypass' }),
      reached: (h) => until(() => h.ofType('tool_call_updated').some((e) => e.status === 'in_progress')),
    },
    {
      state: 'compacting',
      h: makeHarness({ replies: [[{ text: 'one' }], [{ text: 'two' }]], compaction: [{ hang: true }], capabilities: { contextWindow: 200 } }, { mode: 'bypass', limits: { keepTurns: 0 } }),
      first: 'first',
      reached: async (h) => {
        while (h.ofType('compaction_started').length === 0) await new Promise((r) => setTimeout(r, 5));
      },
    },
  ];
  for (const c of cases) {
    t.after(() => c.h.engine.dispose());
    if (c.first) await c.h.engine.prompt(text(c.first)).result;
    c.h.engine.prompt(text('go'));
    await c.reached(c.h);
    const crashedAt = c.h.events.at(-1)!.seq;
    // The process "dies" here: a new engine opens the same log and ends what was open.
    const reopened = await SessionEngine.open({ ...(c.h.engine as any).core.deps, asker: new ControlledAsker() }, c.h.engine.sessionId);
    t.after(() => reopened.dispose());
    const repair = c.h.events.filter((e) => e.seq > crashedAt);
    assert.ok(repair.length >= 2, 'the repair wrote events before the turn\'s end');
    const all = replaySession(c.h.events);
    assert.deepEqual(statesAt(all, crashedAt), { session: 'running', turn: c.state });
    for (const e of repair.slice(0, -1)) assert.deepEqual(statesAt(all, e.seq), { session: 'running', turn: c.state }, `at the repair's ${e.type}`);
    assert.deepEqual(statesAt(all, repair.at(-1)!.seq), { session: 'idle' });
    assert.deepEqual([all.at(-1)!.machine, all.at(-1)!.event], ['session', 'init']);
  }
});
