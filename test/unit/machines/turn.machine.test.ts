// Every transition of the turn machine, driven with effects the test controls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { driveTurn, tick } from '../../support/deferred-actors.js';

const call = (id: string) => ({ id, name: 'write_file', input: { path: `${id}.txt`, content: 'x' } });
// As modelStep throws it: `compactable` says whether a compaction could make the request smaller.
const overflow = { code: 'context_overflow', message: 'prompt is too long', compactable: true };

test('a plain turn: preflight, one model step, end_turn', async () => {
  const t = driveTurn();
  assert.equal(t.state(), 'preflight');
  await t.settle('preflight', { overBudget: false });
  assert.equal(t.state(), 'modelStep');
  assert.deepEqual(t.current('modelStep').input, { turnId: 't1', step: 1 });
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.deepEqual(t.output(), { stopReason: 'end_turn', steps: 1 });
  assert.equal(t.named('finish').length, 1);
});

test('max_tokens and refusal are passed through as stop reasons', async () => {
  for (const stop of ['max_tokens', 'refusal'] as const) {
    const t = driveTurn();
    await t.settle('preflight', { overBudget: false });
    await t.settle('modelStep', { stop, toolCalls: [] });
    assert.equal(t.output().stopReason, stop);
  }
});

test('preflight over budget compacts first, then takes the first step', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: true });
  assert.equal(t.state(), 'compacting');
  assert.deepEqual(t.current('compact').input, { turnId: 't1', reason: 'preflight' });
  await t.settle('compact', undefined);
  assert.equal(t.state(), 'modelStep');
  assert.equal(t.current('modelStep').input.step, 1);
});

test('tool calls: decide, ask, run each in order, then the next model step', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  await t.settle('modelStep', { stop: 'tool_use', toolCalls: [call('a'), call('b'), call('c')] });
  assert.equal(t.state(), 'tools.deciding');
  assert.equal(t.current('decideTool').input.call.id, 'a');
  await t.settle('decideTool', 'allow');
  assert.equal(t.state(), 'tools.running');
  await t.settle('runTool', undefined);
  assert.equal(t.current('decideTool').input.call.id, 'b');
  await t.settle('decideTool', 'ask');
  assert.equal(t.state(), 'tools.awaitingPermission');
  await t.settle('askPermission', 'deny');
  // A denied call does not run; the next call is decided.
  assert.equal(t.current('decideTool').input.call.id, 'c');
  await t.settle('decideTool', 'deny');
  assert.equal(t.state(), 'modelStep');
  assert.equal(t.current('modelStep').input.step, 2);
  assert.equal(t.pending.filter((p) => p.name === 'runTool').length, 1);
});

test('cancel in every non-final state ends the turn cancelled and aborts the running effect', async () => {
  const reach: Record<string, (t: ReturnType<typeof driveTurn>) => Promise<void>> = {
    preflight: async () => {},
    compacting: async (t) => t.settle('preflight', { overBudget: true }),
    modelStep: async (t) => t.settle('preflight', { overBudget: false }),
    'tools.deciding': async (t) => {
      await t.settle('preflight', { overBudget: false });
      await t.settle('modelStep', { stop: 'tool_use', toolCalls: [call('a')] });
    },
    'tools.awaitingPermission': async (t) => {
      await reach['tools.deciding']!(t);
      await t.settle('decideTool', 'ask');
    },
    'tools.running': async (t) => {
      await reach['tools.deciding']!(t);
      await t.settle('decideTool', 'allow');
    },
  };
  for (const [state, go] of Object.entries(reach)) {
    const t = driveTurn();
    await go(t);
    assert.equal(t.state(), state);
    const running = t.pending.at(-1)!;
    t.actor.send({ type: 'CANCEL' });
    assert.equal(t.actor.getSnapshot().status, 'done', state);
    assert.equal(t.output().stopReason, 'cancelled', state);
    assert.ok(running.signal.aborted, `the ${running.name} effect is aborted in ${state}`);
    assert.equal(t.named('cancelPermission').length, state === 'tools.awaitingPermission' ? 1 : 0, state);
    assert.equal(t.named('cancelTool').length, state === 'tools.running' ? 1 : 0, state);
    assert.equal(t.named('finish').length, 1, state);
    // A late result of the aborted effect changes nothing.
    running.resolve({ stop: 'end_turn', toolCalls: [] });
    await tick();
    assert.equal(t.output().stopReason, 'cancelled');
  }
});

test('steer: received at once, delivered at the next boundary, before the next model call', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  t.actor.send({ type: 'STEER', steerId: 's1', content: [{ type: 'text', text: 'use tabs' }] });
  assert.equal(t.named('steerReceived').length, 1);
  assert.equal(t.named('deliverSteers').filter((a) => a.params.steers.length).length, 0, 'not delivered mid-step');
  await t.settle('modelStep', { stop: 'tool_use', toolCalls: [call('a')] });
  await t.settle('decideTool', 'allow');
  t.actor.send({ type: 'STEER', steerId: 's2', content: [{ type: 'text', text: 'and spaces' }] });
  await t.settle('runTool', undefined);
  const delivered = t.named('deliverSteers').filter((a) => a.params.steers.length);
  assert.equal(delivered.length, 1);
  assert.deepEqual(delivered[0]!.params.steers.map((s: any) => s.steerId), ['s1', 's2']);
  assert.equal(delivered[0]!.params.step, 2, 'delivered with the step that will read it');
  assert.equal(t.current('modelStep').input.step, 2);
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.deepEqual(t.named('finish')[0]!.params.undelivered, []);
});

test('steer after the model finished its last step: the turn takes one more step', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  t.actor.send({ type: 'STEER', steerId: 's1', content: [{ type: 'text', text: 'also add tests' }] });
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.equal(t.state(), 'modelStep');
  assert.equal(t.current('modelStep').input.step, 2);
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.deepEqual(t.output(), { stopReason: 'end_turn', steps: 2 });
});

test('guidance that could not be delivered is handed to finish, never dropped', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  t.actor.send({ type: 'STEER', steerId: 's1', content: [{ type: 'text', text: 'x' }] });
  t.actor.send({ type: 'CANCEL' });
  assert.deepEqual(t.named('finish')[0]!.params.undelivered.map((s: any) => s.steerId), ['s1']);
});

test('provider overflow mid-turn compacts once and retries the same step', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  await t.fail('modelStep', overflow);
  assert.equal(t.state(), 'compacting');
  assert.equal(t.current('compact').input.reason, 'overflow');
  await t.settle('compact', undefined);
  assert.equal(t.current('modelStep').input.step, 1, 'the same step, not a new one');
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.deepEqual(t.output(), { stopReason: 'end_turn', steps: 1 });
});

test('a second overflow in the same turn ends it with error/context_overflow', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  await t.fail('modelStep', overflow);
  await t.settle('compact', undefined);
  await t.settle('modelStep', { stop: 'tool_use', toolCalls: [call('a')] });
  await t.settle('decideTool', 'allow');
  await t.settle('runTool', undefined);
  await t.fail('modelStep', overflow);
  assert.equal(t.output().stopReason, 'error');
  assert.equal(t.output().errorCode, 'context_overflow');
  assert.equal(t.pending.filter((p) => p.name === 'compact').length, 1);
});

test('an overflow no compaction can help ends the turn at once: no compaction, no second model call', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  await t.fail('modelStep', { ...overflow, compactable: false, vendorMessage: 'prompt is too long' });
  assert.deepEqual(t.output(), { stopReason: 'error', errorCode: 'context_overflow', message: 'prompt is too long', vendorMessage: 'prompt is too long', steps: 1 });
  assert.deepEqual(t.pending.filter((p) => p.name === 'compact' || p.name === 'modelStep').map((p) => p.name), ['modelStep'], 'one model call, no compaction');
});

test('any other failure ends the turn with its classified code; an unclassified one is internal_error', async () => {
  const t = driveTurn();
  await t.settle('preflight', { overBudget: false });
  await t.fail('modelStep', { code: 'provider_rate_limited', message: 'slow down' });
  assert.deepEqual(t.output(), { stopReason: 'error', errorCode: 'provider_rate_limited', message: 'slow down', steps: 1 });
  const r = driveTurn();
  await r.settle('preflight', { overBudget: false });
  await r.fail('modelStep', { code: 'provider_rate_limited', message: 'slow down', retryAfterMs: 1500.2 });
  assert.equal(r.output().retryAfterMs, 1501, 'when to retry, in whole milliseconds (rounded up)');
  const u = driveTurn();
  await u.fail('preflight', new TypeError('boom'));
  assert.equal(u.output().errorCode, 'internal_error');
  const c = driveTurn();
  await c.settle('preflight', { overBudget: true });
  await c.fail('compact', { code: 'provider_network', message: 'down' });
  assert.equal(c.output().errorCode, 'provider_network');
});

test('the step limit ends the turn with max_turn_requests', async () => {
  const t = driveTurn({ turnId: 't1', maxSteps: 2 });
  await t.settle('preflight', { overBudget: false });
  for (let step = 1; step <= 2; step++) {
    await t.settle('modelStep', { stop: 'tool_use', toolCalls: [call(`c${step}`)] });
    await t.settle('decideTool', 'allow');
    await t.settle('runTool', undefined);
  }
  assert.equal(t.output().stopReason, 'max_turn_requests');
  assert.equal(t.output().steps, 2);
  assert.equal(t.pending.filter((p) => p.name === 'modelStep').length, 2);
});

test('steer pending at the step limit is handed to finish as undelivered', async () => {
  const t = driveTurn({ turnId: 't1', maxSteps: 1 });
  await t.settle('preflight', { overBudget: false });
  t.actor.send({ type: 'STEER', steerId: 's1', content: [{ type: 'text', text: 'x' }] });
  await t.settle('modelStep', { stop: 'end_turn', toolCalls: [] });
  assert.equal(t.output().stopReason, 'max_turn_requests');
  assert.deepEqual(t.named('finish')[0]!.params.undelivered.map((s: any) => s.steerId), ['s1']);
});
