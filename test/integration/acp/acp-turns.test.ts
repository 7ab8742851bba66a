// Turns over ACP: cancel always resolves `cancelled` after its updates, prompts queue FIFO with
// their own responses, steer is fenced by turn id, and permissions are asked, remembered and timed out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { AcpChild } from '../../support/acp-child.js';
import { newTurnId } from '../../../src/core/ids.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const write = (path: string) => ({ tool_call: { name: 'write_file', input: { path, content: 'x\n' } } });

async function started(c: AcpChild, text = 'go') {
  await c.initialize();
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  return { cwd, sessionId, running: c.prompt(sessionId, text) };
}

test('session/cancel mid-stream: the prompt resolves cancelled, after every update of the turn', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }]] } });
  t.after(() => c.close());
  const { sessionId, running } = await started(c);
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk');
  let updatesAtResponse = -1;
  const done = running.then((r) => ((updatesAtResponse = c.updates.length), r));
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await done).stopReason, 'cancelled');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(c.updates.length, updatesAtResponse, 'no update of the turn arrives after its response');
  assert.deepEqual(c.schemaErrors, []);
});

test('cancel while a permission prompt is open: cancelled, and the tool never runs', async (t) => {
  const c = AcpChild.start({ script: { replies: [[write('a.txt')]] }, answers: ['hold'] });
  t.after(() => c.close());
  const { cwd, sessionId, running } = await started(c);
  await c.until(() => c.permissions.length === 1, 'permission request');
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  c.held?.({ outcome: { outcome: 'selected', optionId: 'allow_once' } }); // too late: ignored
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(!existsSync(join(cwd, 'a.txt')));
  const last = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(last.status, 'failed');
});

test('$/cancel_request of one prompt answers it cancelled; the session\'s other prompts go on', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }], [{ text: 'third' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  // The SDK client sends $/cancel_request for a request whose cancellationSignal aborts.
  const ask = (text: string, signal?: AbortSignal) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }, signal ? { cancellationSignal: signal } : undefined);
  const [first, second] = [new AbortController(), new AbortController()];
  const one = ask('one', first.signal);
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk');
  const two = ask('two', second.signal);
  const three = ask('three');
  second.abort();
  assert.equal((await two).stopReason, 'cancelled', 'the queued prompt withdrawn');
  first.abort();
  assert.equal((await one).stopReason, 'cancelled', 'the running prompt withdrawn');
  assert.equal((await three).stopReason, 'end_turn', 'the prompt queued after them still runs');
  assert.deepEqual(c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text), ['partial', 'third']);
  assert.deepEqual(c.schemaErrors, []);
});

test('a prompt sent while a turn runs is queued FIFO and gets its own response', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ delay_ms: 80 }, { text: 'first' }], [{ text: 'second' }]] } });
  t.after(() => c.close());
  const { sessionId, running } = await started(c, 'one');
  const second = c.prompt(sessionId, 'two');
  const [a, b] = await Promise.all([running, second]);
  assert.equal(a.stopReason, 'end_turn');
  assert.equal(b.stopReason, 'end_turn');
  assert.notEqual((a as any)._meta.troupe.turnId, (b as any)._meta.troupe.turnId);
  const texts = c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text);
  assert.deepEqual(texts, ['first', 'second']);
});

test('_troupe/steer reaches the running turn; wrong or absent turns are typed JSON-RPC errors', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ delay_ms: 150 }, { tool_call: { name: 'list_dir', input: {} } }], [{ text: 'steered' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  await assert.rejects(
    c.agent.request('_troupe/steer', { sessionId, expectedTurnId: 'turn_x', prompt: [{ type: 'text', text: 'x' }] }),
    (e: any) => e.code === -32011 && e.data?.code === 'no_active_turn',
  );
  const running = c.prompt(sessionId, 'go');
  // The title the first prompt gives the session comes as its turn starts (the prompt itself is not sent back).
  await c.until(() => c.updatesFor(sessionId, 'session_info_update').length > 0, 'turn start');
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.equal(state.session, 'running');
  assert.match(state.turnId, /^turn_/);
  assert.ok(state.turn, 'the turn machine state is reported');
  await assert.rejects(
    c.agent.request('_troupe/steer', { sessionId, expectedTurnId: 'turn_wrong', prompt: [{ type: 'text', text: 'x' }] }),
    (e: any) => e.code === -32010 && e.data?.code === 'turn_mismatch',
  );
  const ok: any = await c.agent.request('_troupe/steer', { sessionId, expectedTurnId: state.turnId, prompt: [{ type: 'text', text: 'use tabs' }] });
  assert.match(ok.steerId, /^steer_/);
  assert.equal((await running).stopReason, 'end_turn');
  const guidance = c.updatesFor(sessionId, 'user_message_chunk').find((u) => u.content.text === 'use tabs');
  assert.equal(guidance.messageId, ok.steerId, 'the guidance shows as the user said it');
  const after: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.deepEqual([after.session, after.queue], ['idle', []]);
  assert.deepEqual(c.schemaErrors, []);
});

test('guidance its turn ends before delivering is not dropped silently: the client is told it was not delivered, live and on session/load', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { notices: {} } } as any);
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  const running = c.prompt(sessionId, 'go');
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk');
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  await c.agent.request('_troupe/steer', { sessionId, expectedTurnId: state.turnId, prompt: [{ type: 'text', text: 'use tabs' }] });
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  const told = (updates: any[]) => updates.filter((u) => u.sessionUpdate === 'notice' && u.title === 'Guidance not delivered');
  assert.equal(told(c.updatesFor(sessionId)).length, 1);
  const live = c.updates.length;
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal(told(c.updatesFor(sessionId).slice(live)).length, 1, 'the replay says so too');
  assert.deepEqual(c.schemaErrors, []);
});

test('permission prompts offer the four options; allow_always is remembered across a restart', async (t) => {
  const replies = { replies: [[write('a.txt')], [{ text: 'ok' }], [write('b.txt')], [{ text: 'ok again' }]] };
  const first = AcpChild.start({ script: replies, answers: ['allow_always'] });
  const { cwd, sessionId, running } = await started(first);
  await running;
  const req = first.permissions[0]!;
  assert.deepEqual(req.options.map((o) => o.kind), ['allow_once', 'allow_always', 'reject_once', 'reject_always']);
  assert.equal(req.toolCall.toolCallId, first.updatesFor(sessionId, 'tool_call')[0].toolCallId);
  assert.ok(existsSync(join(cwd, 'a.txt')));
  await first.close();
  // A new process: the "always" answer comes back from the log.
  const second = AcpChild.start({ script: { replies: replies.replies.slice(2) }, home: first.home, answers: ['reject_once'] });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await second.prompt(sessionId, 'again')).stopReason, 'end_turn');
  assert.equal(second.permissions.length, 0, 'not asked again');
  assert.ok(existsSync(join(cwd, 'b.txt')));
});

test('a rejected or unanswered permission is a tool failure the model sees; plan mode refuses edits', async (t) => {
  const c = AcpChild.start({
    script: { replies: [[write('a.txt')], [{ text: 'ok' }], [write('b.txt')], [{ text: 'ok' }], [write('c.txt')], [{ text: 'ok' }]] },
    answers: ['reject_once', 'hold'],
    // Long enough that a loaded machine still answers the first prompt in time; the held one times out.
    env: { TROUPE_PERMISSION_TIMEOUT_MS: '1500' },
  });
  t.after(() => c.close());
  const { cwd, sessionId, running } = await started(c);
  assert.equal((await running).stopReason, 'end_turn');
  const failures = () => c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed');
  assert.equal(failures()[0].rawOutput.errorCode, 'permission_denied');
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  assert.equal(failures()[1].rawOutput.errorCode, 'tool_timeout');
  await c.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
  assert.equal((await c.prompt(sessionId, 'third')).stopReason, 'end_turn');
  assert.equal(failures()[2].rawOutput.errorCode, 'permission_denied');
  assert.equal(c.permissions.length, 2, 'plan mode does not ask');
  for (const f of ['a.txt', 'b.txt', 'c.txt']) assert.ok(!existsSync(join(cwd, f)));
  assert.deepEqual(c.schemaErrors, []);
});

test('TROUPE_PERMISSION_TIMEOUT_MS past the longest timer waits that longest time: a prompt answered later is not timed out at once', async (t) => {
  // Node runs a timer of more than 2^31-1 ms after 1 ms: a permission wait meant as "no limit" ended
  // every prompt tool_timeout before the person could answer it.
  const c = AcpChild.start({ script: { replies: [[write('a.txt')], [{ text: 'ok' }]] }, answers: ['hold'], env: { TROUPE_PERMISSION_TIMEOUT_MS: '9999999999' } });
  t.after(() => c.close());
  const { cwd, running } = await started(c);
  await c.until(() => c.held !== undefined, 'the held permission request');
  // Time for a timer that fired at once to have ended the call.
  await new Promise((resolve) => setTimeout(resolve, 200));
  c.held!({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
  assert.equal((await running).stopReason, 'end_turn');
  assert.ok(existsSync(join(cwd, 'a.txt')), 'the call ran once allowed');
});

test('a permission prompt the client answers cancelled without a session/cancel: the call is refused and says why, never that the user rejected it', async (t) => {
  const c = AcpChild.start({ script: { replies: [[write('a.txt')], [{ text: 'ok' }], [write('b.txt')], [{ text: 'ok' }]] }, answers: ['cancelled', 'reject_once'] });
  t.after(() => c.close());
  const { cwd, sessionId, running } = await started(c);
  assert.equal((await running).stopReason, 'end_turn', 'the turn goes on: only the call was refused');
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  const [withdrawn, rejected] = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed');
  assert.equal(withdrawn.rawOutput.errorCode, 'permission_denied');
  assert.doesNotMatch(withdrawn.rawOutput.output, /user rejected/);
  assert.match(withdrawn.rawOutput.output, /without an answer/);
  assert.match(rejected.rawOutput.output, /The user rejected this tool call/);
  for (const f of ['a.txt', 'b.txt']) assert.ok(!existsSync(join(cwd, f)));
  assert.deepEqual(c.schemaErrors, []);
});

test('a permission answer naming an option that was not offered: the call does not run, and its failure and a warning on stderr say so, never that the user rejected it', async (t) => {
  // Such an answer was read as "The user rejected this tool call": the client's mistake told to the
  // model and the person as the person's choice. `constructor` was read as an option (found by `in`).
  const c = AcpChild.start({ script: { replies: [[write('a.txt')], [{ text: 'ok' }], [write('b.txt')], [{ text: 'ok' }]] }, answers: ['hold', 'hold'] });
  t.after(() => c.close());
  const { cwd, sessionId, running } = await started(c);
  await c.until(() => c.held !== undefined, 'the first permission request');
  c.held!({ outcome: { outcome: 'selected', optionId: 'allow_everything\u001b[2J' } });
  c.held = undefined;
  assert.equal((await running).stopReason, 'end_turn', 'the turn goes on: only the call was refused');
  const again = c.prompt(sessionId, 'again');
  await c.until(() => c.held !== undefined, 'the second permission request');
  c.held!({ outcome: { outcome: 'selected', optionId: 'constructor' } });
  assert.equal((await again).stopReason, 'end_turn');
  const [bogus, inherited] = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed');
  assert.equal(bogus.rawOutput.errorCode, 'permission_denied');
  assert.doesNotMatch(bogus.rawOutput.output, /user rejected/);
  assert.match(bogus.rawOutput.output, /The client answered with option "allow_everything \[2J", which was not offered/);
  assert.match(inherited.rawOutput.output, /option "constructor", which was not offered/);
  for (const f of ['a.txt', 'b.txt']) assert.ok(!existsSync(join(cwd, f)));
  await c.until(() => (c.stderr.match(/not offered/g) ?? []).length === 2, 'a warning on stderr for each');
  assert.deepEqual(c.schemaErrors, []);
});

test('a permission answer with no outcome ({}, null, selected without an optionId) is no answer: the call does not run, and the warning on stderr says what the answer lacked, not a TypeError', async (t) => {
  // Until 2026-12-07 the warning was V8's words: "TypeError: Cannot read properties of undefined (reading 'outcome')",
  // and a `selected` with no optionId was option "undefined", not offered.
  const replies = [[write('a.txt')], [{ text: 'ok' }], [write('b.txt')], [{ text: 'ok' }], [write('c.txt')], [{ text: 'ok' }]];
  const c = AcpChild.start({ script: { replies }, answers: ['hold', 'hold', 'hold'] });
  t.after(() => c.close());
  const { cwd, sessionId, running } = await started(c);
  await c.until(() => c.held !== undefined, 'the first permission request');
  c.held!({} as acp.RequestPermissionResponse);
  c.held = undefined;
  assert.equal((await running).stopReason, 'end_turn', 'the turn goes on: only the call did not run');
  const again = c.prompt(sessionId, 'again');
  await c.until(() => c.held !== undefined, 'the second permission request');
  c.held!(null as unknown as acp.RequestPermissionResponse);
  c.held = undefined;
  assert.equal((await again).stopReason, 'end_turn');
  const third = c.prompt(sessionId, 'third');
  await c.until(() => c.held !== undefined, 'the third permission request');
  c.held!({ outcome: { outcome: 'selected' } } as unknown as acp.RequestPermissionResponse);
  assert.equal((await third).stopReason, 'end_turn');
  const failed = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed');
  assert.equal(failed.length, 3);
  for (const f of failed) assert.match(f.rawOutput.output, /ended without an answer/);
  for (const f of ['a.txt', 'b.txt', 'c.txt']) assert.ok(!existsSync(join(cwd, f)));
  await c.until(() => (c.stderr.match(/answered session\/request_permission without an outcome/g) ?? []).length === 3, 'a warning on stderr for each, saying what was wrong');
  assert.doesNotMatch(c.stderr, /TypeError|Cannot read properties/);
  assert.deepEqual(c.schemaErrors, []);
});

test('a failed turn is a JSON-RPC error with its code; the session goes on', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ error: { kind: 'overloaded', message: 'busy' } }], [{ text: 'fine' }]] } });
  t.after(() => c.close());
  const { sessionId, running } = await started(c);
  await assert.rejects(running, (e: any) => e.code === -32043 && e.data?.code === 'provider_overloaded' && /turn_/.test(e.data?.turnId));
  assert.equal((await c.prompt(sessionId, 'next')).stopReason, 'end_turn');
  assert.deepEqual(c.schemaErrors, []);
});

test('a context overflow compaction cannot fix ends in troupe\'s own message (the window, what to do); the vendor\'s text is in data.vendorMessage', async (t) => {
  const vendor = 'prompt is too long: 212345 tokens > 200000 maximum';
  // Three short turns, then a prompt the vendor refuses before and after the overflow compaction.
  const c = AcpChild.start({ script: { replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ context_overflow: vendor }], [{ context_overflow: vendor }], [{ text: 'fine' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  for (const p of ['one', 'two', 'three']) assert.equal((await c.prompt(sessionId, p)).stopReason, 'end_turn');
  const failed: any = await c.prompt(sessionId, 'the big one').then(() => assert.fail('the turn should fail'), (e) => e);
  assert.deepEqual([failed.code, failed.data?.code, failed.data?.vendorMessage], [-32040, 'context_overflow', vendor]);
  assert.match(failed.data?.turnId, /^turn_/);
  assert.notEqual(failed.message, vendor);
  assert.match(failed.message, /does not fit the context window of scripted\/replay \([\d,]+ tokens\)/);
  assert.match(failed.message, /compacting the conversation could not make it fit/);
  assert.match(failed.message, /smaller prompt/);
  assert.match(failed.message, /\/compact/);
  assert.match(failed.message, /new session/);
  // The log keeps both: the replay shows troupe's message, the vendor's words stay for diagnosis.
  const log = await FileEventLog.open(sessionLogPath(sessionsDir(c.home), sessionId), { readOnly: true });
  const ended = (await log.readAfter(0)).events.filter((e) => e.type === 'turn_completed').at(-1) as any;
  await log.close();
  assert.deepEqual([ended.errorCode, ended.message, ended.vendorMessage], ['context_overflow', failed.message, vendor]);
  assert.equal((await c.prompt(sessionId, 'next')).stopReason, 'end_turn', 'the session goes on');
  assert.deepEqual(c.schemaErrors, []);
});

test('a session\'s first prompt the vendor refuses as too long ends context_overflow after one model request: nothing to compact, nothing sent again', async (t) => {
  const vendor = 'prompt is too long: 212345 tokens > 200000 maximum';
  // Plain replies are used up one per model request (spec/scripted-model.md): the next prompt's
  // answer shows how many the first turn took. Until 2026-12-06 it took two: a compaction that
  // compacted nothing, then the same request again, which here would have been answered.
  const c = AcpChild.start({ script: { replies: [[{ context_overflow: vendor }], [{ text: 'the second reply' }], [{ text: 'the third reply' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const failed: any = await c.prompt(sessionId, 'a prompt too large by itself').then(() => assert.fail('the turn should fail'), (e) => e);
  assert.deepEqual([failed.code, failed.data?.code, failed.data?.vendorMessage], [-32040, 'context_overflow', vendor]);
  assert.match(failed.message, /does not fit the context window of scripted\/replay \([\d,]+ tokens\)/);
  // No compaction was tried, and none would help: the message says so, and offers no /compact.
  assert.match(failed.message, /nothing earlier in the session could be compacted/);
  assert.doesNotMatch(failed.message, /\/compact|compacting the conversation could not/);
  assert.match(failed.message, /smaller prompt/);
  const notes = c.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text);
  assert.deepEqual(notes, [`[Turn ended: context_overflow: ${failed.message}]`], 'the client was told of no compaction, only of the end');

  assert.equal((await c.prompt(sessionId, 'smaller')).stopReason, 'end_turn');
  const said = c.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('');
  assert.equal(said, 'the second reply', 'the first turn made exactly one model request');

  const log = await FileEventLog.open(sessionLogPath(sessionsDir(c.home), sessionId), { readOnly: true });
  const events = (await log.readAfter(0)).events as any[];
  await log.close();
  assert.deepEqual(events.filter((e) => e.type.startsWith('compaction_')), [], 'no compaction events in the log');
  const ended = events.filter((e) => e.type === 'turn_completed');
  assert.deepEqual(ended.map((e) => [e.stopReason, e.errorCode, e.steps]), [['error', 'context_overflow', 1], ['end_turn', undefined, 1]]);
  assert.deepEqual(c.schemaErrors, []);
});

test('a rate-limited turn\'s error says when to retry (data.retryAfterMs)', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ error: { kind: 'rate_limited', message: 'slow down', retry_after_ms: 1500 } }], [{ text: 'fine' }]] } });
  t.after(() => c.close());
  const { running } = await started(c);
  await assert.rejects(running, (e: any) => e.code === -32042 && e.data?.code === 'provider_rate_limited' && e.data?.retryAfterMs === 1500);
  assert.deepEqual(c.schemaErrors, []);
});

test('a permission prompt for an edit carries its diff, so the editor shows the change before the answer; nothing is written before it', async (t) => {
  const edit = { tool_call: { name: 'edit_file', input: { path: 'notes.txt', old_string: 'old line', new_string: 'new line' } } };
  const c = AcpChild.start({ script: { replies: [[write('fresh.txt')], [{ text: 'ok' }], [edit], [{ text: 'done' }]] }, answers: ['allow_once', 'reject_once'] });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  writeFileSync(join(cwd, 'notes.txt'), 'first\nold line\nlast\n');
  const sessionId = await c.newSession(cwd);
  assert.equal((await c.prompt(sessionId, 'write')).stopReason, 'end_turn');
  assert.equal((await c.prompt(sessionId, 'edit')).stopReason, 'end_turn');
  const [created, edited] = c.permissions.map((p) => p.toolCall.content);
  assert.deepEqual(created, [{ type: 'diff', path: join(cwd, 'fresh.txt'), oldText: null, newText: 'x\n' }]);
  assert.deepEqual(edited, [{ type: 'diff', path: join(cwd, 'notes.txt'), oldText: 'first\nold line\nlast\n', newText: 'first\nnew line\nlast\n' }]);
  assert.equal(readFileSync(join(cwd, 'notes.txt'), 'utf8'), 'first\nold line\nlast\n', 'rejected: the file is as it was');
  assert.deepEqual(c.schemaErrors, []);
});

test('a prompt that names its turn (_meta.troupe.turnId, as the daemon does) gets that id once: naming it again, or an older one, gets a fresh id', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const [older, named] = [newTurnId(Date.now() - 60_000), newTurnId()];
  const ask = (text: string, turnId: string) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }], _meta: { troupe: { turnId } } } as never);
  for (const [text, turnId] of [['one', named], ['two', named], ['three', older]] as const) assert.equal(((await ask(text, turnId)) as { stopReason: string }).stopReason, 'end_turn');
  const log = await FileEventLog.open(sessionLogPath(sessionsDir(c.home), sessionId), { readOnly: true });
  const turns = (await log.readAfter(0)).events.filter((e) => e.type === 'turn_started').map((e) => e.turnId);
  await log.close();
  assert.equal(turns.length, 3);
  assert.equal(turns[0], named, 'the named id, the first time');
  assert.equal(new Set(turns).size, 3, `three turns, three ids: ${turns.join(' ')}`);
  assert.ok(!turns.includes(older), 'an id older than the session\'s turns is not taken');
});
