// A session reopened after its process died: whatever the log shows open is ended, so that no
// client shows it running for ever. (Over a real `troupe acp` child: test/integration/acp/acp-history.test.ts.)
import { test } from 'node:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { makeHarness, text, throwOnceOnAppend } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';

const types = (events: { type: string }[]) => events.map((e) => e.type);

test("a process that dies during a turn's compaction: the reopened session ends the compaction failed agent_crashed, then the turn", async (t) => {
  // A window smaller than the tools' own specs: the second prompt's preflight compacts the first turn (keepTurns 0).
  const h = makeHarness(
    { replies: [[{ text: 'one' }], [{ text: 'two' }]], compaction: [{ hang: true }], capabilities: { contextWindow: 200 } },
    { mode: 'bypass', limits: { keepTurns: 0 } },
  );
  // The "dead" engine's compaction still hangs: stop it so the test process can exit.
  t.after(() => h.engine.dispose());
  assert.equal((await h.engine.prompt(text('first')).result).stopReason, 'end_turn');
  h.engine.prompt(text('second'));
  while (h.ofType('compaction_started').length === 0) await new Promise((r) => setTimeout(r, 5));
  const started = h.ofType('compaction_started')[0]!;
  assert.equal(started.reason, 'preflight');

  // The process "dies" here: a new engine opens the same log.
  const reopened = await SessionEngine.open({ ...(h.engine as any).core.deps, asker: new ControlledAsker() }, h.engine.sessionId);
  t.after(() => reopened.dispose());
  const after = h.events.filter((e) => e.seq > started.seq);
  assert.deepEqual(types(after), ['compaction_completed', 'turn_completed']);
  const [ended, turn] = [h.ofType('compaction_completed')[0]!, h.ofType('turn_completed').at(-1)!];
  assert.deepEqual([ended.compactionId, ended.turnId, ended.status, ended.errorCode], [started.compactionId, started.turnId, 'failed', 'agent_crashed']);
  assert.deepEqual([turn.turnId, turn.errorCode], [started.turnId, 'agent_crashed']);
  assert.equal(reopened.conversation.openCompaction, undefined);
  assert.deepEqual(h.schemaErrors, []);
});

test("a session that stops on a bug during /compact ends that compaction in the log with the bug's error", async (t) => {
  const h = makeHarness({ replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }]], compaction: [{ hang: true }] });
  t.after(() => h.engine.dispose());
  for (const p of ['one', 'two', 'three']) await h.engine.prompt(text(p)).result;
  const compacting = h.engine.compactNow();
  while (h.ofType('compaction_started').length === 0) await new Promise((r) => setTimeout(r, 5));
  // An action of the session machine throws (a bug): here the refusal of a steer sent while no turn runs.
  throwOnceOnAppend(h, 'steer_rejected');
  try {
    h.engine.steer('turn_none', text('guidance'));
  } catch {
    // refused or not: the session has stopped either way
  }
  assert.equal(await compacting, 'cancelled');
  const started = h.ofType('compaction_started')[0]!;
  const ended = h.ofType('compaction_completed');
  assert.deepEqual(ended.map((e) => [e.compactionId, e.status, e.errorCode]), [[started.compactionId, 'failed', 'internal_error']]);
  assert.deepEqual(h.schemaErrors, []);
});

/** Makes the session machine's action that logs a steer throw once (a bug): the session stops on internal_error. */
function failOnSteer(h: ReturnType<typeof makeHarness>, turnId: string): void {
  throwOnceOnAppend(h, 'steer_received');
  try {
    h.engine.steer(turnId, text('guidance'));
  } catch {
    // refused or not: the session has stopped either way
  }
}

test('a session that stops on a bug at a permission prompt withdraws the prompt: an answer that comes later finds none, and nothing is logged after the turn ends', async (t) => {
  const h = makeHarness([[{ tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'x' } } }]], { mode: 'default' });
  t.after(() => h.engine.dispose());
  const prompt = h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  failOnSteer(h, prompt.turnId);
  assert.equal((await prompt.result).errorCode, 'internal_error');
  // Until 2026-12-07 the prompt stayed open (until its 5 minute timeout), and an answer to it was
  // logged after the turn's end (permission_resolved allow_once, for a call that then never ran).
  assert.throws(() => h.asker.answer('allow_once'), /no permission request is waiting/);
  assert.deepEqual(types(h.events).slice(-3), ['permission_resolved', 'tool_call_updated', 'turn_completed']);
  assert.deepEqual(h.schemaErrors, []);
});

test('a session that stops on a bug while a command runs stops the command', { timeout: 60_000 }, async (t) => {
  const h = makeHarness([[{ tool_call: { name: 'run_command', input: { command: 'echo $$ > pid && exec sleep 600' } } }]]);
  t.after(() => h.engine.dispose());
  const prompt = h.engine.prompt(text('go'));
  while (!h.ofType('tool_call_updated').some((e) => e.status === 'in_progress') || !existsSync(join(h.dir, 'pid'))) await new Promise((r) => setTimeout(r, 5));
  let pid = 0;
  while (!pid) pid = Number(readFileSync(join(h.dir, 'pid'), 'utf8').trim()) || (await new Promise((r) => setTimeout(r, 5)), 0);
  failOnSteer(h, prompt.turnId);
  assert.equal((await prompt.result).errorCode, 'internal_error');
  // Until 2026-12-07 it ran on (here for ten minutes) in a session that had stopped.
  while (existsSync(`/proc/${pid}`)) await new Promise((r) => setTimeout(r, 5));
  const ended = h.ofType('turn_completed').at(-1)!;
  assert.deepEqual([ended.errorCode, ended.interrupted], ['internal_error', true]);
  assert.deepEqual(h.schemaErrors, []);
});
