// Sessions outlive processes: session/load replays the whole history before it answers, resume
// does not replay, fork copies, delete leaves a tombstone, and kill -9 mid-turn is repaired.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const strip = (updates: any[]) => updates.map(({ _meta, ...u }) => ({ ...u, seq: _meta?.troupe?.seq }));
const script = {
  replies: [
    [{ text: 'Reading.' }, { tool_call: { name: 'list_dir', input: {} } }],
    [{ text: 'Done reading.' }],
    [{ text: 'second answer' }],
  ],
};

/** What a client saw of a session, without the command list (sent on every load and new). */
const history = (c: AcpChild, sessionId: string) => strip(c.updatesFor(sessionId).filter((u) => u.sessionUpdate !== 'available_commands_update'));

/** What a replay shows beyond what the client that prompted saw live: its own prompts, which it is not sent back. */
const ownPromptsLeftOut = (updates: any[]) => updates.filter((u) => u.sessionUpdate !== 'user_message_chunk');

/** A session with these prompts answered in a process that has then exited cleanly. */
async function storedSession(prompts: string[]) {
  const cwd = workspace();
  const first = AcpChild.start({ script });
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  for (const text of prompts) await first.prompt(sessionId, text);
  const live = history(first, sessionId);
  assert.deepEqual(ownPromptsLeftOut(live), live, 'the client is not sent its own prompts back');
  assert.equal(await first.close(), 0);
  return { cwd, sessionId, live, home: first.home, schemaErrors: first.schemaErrors };
}

test('session/load in a new process replays the whole history, user chunks included, before responding', async (t) => {
  const first = await storedSession(['list things', 'and again']);
  const { cwd, sessionId, live } = first;
  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  let seenAtResponse = -1;
  const res = await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] }).then((r) => ((seenAtResponse = second.updatesFor(sessionId).length), r));
  assert.equal(res.modes?.currentModeId, 'default');
  const replayed = history(second, sessionId);
  assert.deepEqual(ownPromptsLeftOut(replayed), live, 'the replay is exactly what the live client saw, and its prompts');
  assert.ok(seenAtResponse >= replayed.length, 'every replayed update arrived before the load response');
  assert.deepEqual(
    replayed.filter((u) => u.sessionUpdate === 'user_message_chunk').map((u) => u.content.text),
    ['list things', 'and again'],
  );
  // The session goes on in the new process, with its history.
  assert.equal((await second.prompt(sessionId, 'third')).stopReason, 'end_turn');
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('a prompt sent right behind session/load, before its response, runs after the whole replay on the loaded history', async (t) => {
  const { cwd, sessionId, live, home } = await storedSession(['list things']);
  const lastSeq = Math.max(...live.map((u) => u.seq));
  const second = AcpChild.start({ script, home });
  t.after(() => second.close());
  await second.initialize();
  // Pipelined: the prompt is on the wire before the load has answered (its engine is not open yet).
  const loaded = second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const prompted = second.prompt(sessionId, 'and again');
  await loaded;
  assert.equal((await prompted).stopReason, 'end_turn');
  const all = history(second, sessionId);
  const replayed = all.findIndex((u) => u.seq > lastSeq);
  assert.deepEqual(ownPromptsLeftOut(all.slice(0, replayed)), live, 'the history comes first, whole');
  const after = all.slice(replayed);
  assert.ok(after.length > 0 && after.every((u) => u.seq > lastSeq), 'then only what the new turn added');
  assert.ok(after.some((u) => u.sessionUpdate === 'agent_message_chunk'), 'the new turn streamed');
  assert.ok(!after.some((u) => u.sessionUpdate === 'user_message_chunk'), 'but not the prompt it sent');
  const state: any = await second.agent.request('_troupe/session_state', { sessionId });
  assert.ok(state.lastSeq > lastSeq);
  assert.deepEqual(second.schemaErrors, []);
});

test('session/close right after a session/load in a fresh process, then load again and prompt', async (t) => {
  const { cwd, sessionId, live, home } = await storedSession(['list things']);
  const second = AcpChild.start({ script, home });
  t.after(() => second.close());
  await second.initialize();
  await assert.rejects(second.agent.request('session/load', { sessionId, cwd: workspace(), mcpServers: [] }), (e: any) => e.code === -32602 && /never changes/.test(e.message));
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(await second.agent.request('session/close', { sessionId }), {});
  const res = await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal(res.modes?.currentModeId, 'default');
  assert.ok(res.configOptions?.some((o: any) => o.id === 'model' && o.currentValue === 'scripted/replay'));
  const replays = history(second, sessionId);
  const once = replays.slice(0, replays.length / 2);
  assert.deepEqual(ownPromptsLeftOut(once), live);
  assert.deepEqual(replays, [...once, ...once], 'each load replayed the whole history');
  assert.equal((await second.prompt(sessionId, 'second answer please')).stopReason, 'end_turn');
  assert.deepEqual(second.schemaErrors, []);
});

test('session/resume does not replay; a different cwd is refused', async (t) => {
  const cwd = workspace();
  const first = AcpChild.start({ script });
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  await first.prompt(sessionId, 'x');
  await first.close();
  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await assert.rejects(second.agent.request('session/resume', { sessionId, cwd: workspace() }), (e: any) => e.code === -32602 && /never changes/.test(e.message));
  await second.agent.request('session/resume', { sessionId, cwd });
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(second.updatesFor(sessionId).filter((u) => u.sessionUpdate !== 'available_commands_update'), []);
  const state: any = await second.agent.request('_troupe/session_state', { sessionId });
  assert.ok(state.lastSeq > 5, 'the resumed session has its history');
});

test('a session created with its cwd spelled otherwise (a trailing slash) is loaded and resumed with the cwd session/list gives', async (t) => {
  const cwd = workspace();
  const first = AcpChild.start({ script });
  t.after(() => first.close());
  await first.initialize();
  const sessionId = await first.newSession(`${cwd}/`);
  await first.prompt(sessionId, 'x');
  const listed = (await first.agent.request('session/list', {})).sessions.find((s) => s.sessionId === sessionId)!;
  assert.equal(listed.cwd, cwd);
  await first.agent.request('session/resume', { sessionId, cwd: listed.cwd });
  await first.agent.request('session/load', { sessionId, cwd: listed.cwd, mcpServers: [] });
  await first.close();
  // A new process replays the log file itself.
  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd: listed.cwd, mcpServers: [] });
  await assert.rejects(second.agent.request('session/resume', { sessionId, cwd: workspace() }), (e: any) => e.code === -32602 && /never changes/.test(e.message));
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test("session/load of a session whose directory is gone (the project moved) replays its history; a stdio MCP server it names fails saying the directory is gone, not that its command is missing", async (t) => {
  const { cwd, sessionId, live, home } = await storedSession(['first']);
  renameSync(cwd, `${cwd}-moved`);
  const c = AcpChild.start({ script, home });
  t.after(() => c.close());
  await c.initialize();
  const server = { name: 'test', command: process.execPath, args: [resolve('dist/test/support/mcp-test-server.js')], env: [] };
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [server] });
  assert.deepEqual(ownPromptsLeftOut(history(c, sessionId)), live, 'the history is shown');
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.deepEqual(
    state.mcpServers.map((s: any) => [s.name, s.state, s.error]),
    [['test', 'failed', `cannot start it in the session's directory ${cwd}, which no longer exists (moved or deleted?)`]],
    `not "spawn ${process.execPath} ENOENT": node is there, the directory is not`,
  );
  assert.match(c.stderr, /an MCP server did not start.*no longer exists/);
  assert.deepEqual(c.schemaErrors, []);
});

test('session/fork copies the history into a new, independent session', async (t) => {
  const c = AcpChild.start({ script: { replies: [...script.replies, [{ text: 'fork answer' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  const source = await c.newSession(cwd);
  await c.prompt(source, 'list things');
  const fork: any = await c.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] });
  assert.notEqual(fork.sessionId, source);
  const srcState: any = await c.agent.request('_troupe/session_state', { sessionId: source });
  const forkState: any = await c.agent.request('_troupe/session_state', { sessionId: fork.sessionId });
  assert.equal(forkState.lastSeq, srcState.lastSeq, 'the same events, renumbered in the new session');
  assert.equal((await c.prompt(fork.sessionId, 'go on')).stopReason, 'end_turn');
  const after: any = await c.agent.request('_troupe/session_state', { sessionId: source });
  assert.equal(after.lastSeq, srcState.lastSeq, 'the source is untouched by the fork');
  assert.deepEqual(c.schemaErrors, []);
});

test('session/delete leaves a tombstone: the id is gone from list and load', async (t) => {
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  await c.prompt(sessionId, 'x');
  assert.deepEqual(await c.agent.request('session/delete', { sessionId }), {});
  assert.deepEqual((await c.agent.request('session/list', {})).sessions.map((s) => s.sessionId), []);
  await assert.rejects(c.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), (e: any) => e.code === -32002);
  assert.deepEqual(await c.agent.request('session/delete', { sessionId }), {}, 'deleting twice succeeds');
});

test('session/close cancels the running turn and frees the session; it can be loaded again', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }], [{ text: 'after reload' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  const running = c.prompt(sessionId, 'go');
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'first chunk');
  await c.agent.request('session/close', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  assert.deepEqual(c.schemaErrors, []);
});

test('kill -9 during a turn: a new process replays everything durable and shows the turn ended agent_crashed', async (t) => {
  const cwd = workspace();
  // Plain replies restart from the first in a new process: the keyed one answers after the restart.
  const crashScript = { replies: [{ when: 'are you there', items: [{ text: 'alive again' }] }, [{ text: 'streaming before the crash' }, { hang: true }]] };
  const first = AcpChild.start({ script: crashScript });
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  void first.prompt(sessionId, 'start').catch(() => undefined);
  await first.until(() => first.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk before crash');
  // Give group commit its window to make the chunk durable, then die without any chance to flush.
  await new Promise((r) => setTimeout(r, 100));
  await first.crash();

  const second = AcpChild.start({ script: crashScript, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const replayed = second.updatesFor(sessionId);
  assert.ok(replayed.some((u) => u.sessionUpdate === 'user_message_chunk' && u.content.text === 'start'));
  assert.ok(replayed.some((u) => u.sessionUpdate === 'agent_message_chunk' && u.content.text === 'streaming before the crash'));
  const ended = replayed.find((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text));
  assert.ok(ended, 'the interrupted turn is shown as ended agent_crashed');
  assert.equal((await second.prompt(sessionId, 'are you there')).stopReason, 'end_turn');
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('kill -9 at any moment of a stream: every update a client was sent is in the log, under the same seq', async (t) => {
  // An event may reach a client before it is durable, never before it is in the file: the process's
  // death then cannot lose it, and its seq is never given to another event (which a daemon relaying
  // the session, or any client keeping seqs, would take for the one it saw). Before, streamed events
  // waited up to the group commit (5 ms) for their write while already sent.
  const items = Array.from({ length: 6000 }, (_, i) => (i % 20 === 19 ? { delay_ms: 2 } : { text: `w${i} ` }));
  for (let round = 0; round < 6; round++) {
    const cwd = workspace();
    const first = AcpChild.start({ script: { replies: [items] } });
    await first.initialize();
    const sessionId = await first.newSession(cwd);
    void first.prompt(sessionId, 'stream').catch(() => undefined);
    await first.until(() => first.updatesFor(sessionId, 'agent_message_chunk').length >= 40 + 97 * round, 'the stream under way', 30_000);
    await first.crash();
    const sent = strip(first.updatesFor(sessionId)).filter((u) => u.seq !== undefined);

    const second = AcpChild.start({ script: { replies: [] }, home: first.home });
    t.after(() => second.close());
    await second.initialize();
    await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const logged = new Map(strip(second.updatesFor(sessionId)).map((u) => [u.seq, u]));
    const lost = sent.filter((u) => JSON.stringify(logged.get(u.seq)) !== JSON.stringify(u));
    assert.deepEqual(lost.slice(0, 3), [], `round ${round}: ${lost.length} of the ${sent.length} updates sent are not in the log as sent`);
    await second.close();
  }
});

const hangAfterAChunk = { replies: [[{ text: 'streaming before the crash' }, { hang: true }]] };

/** A session whose process is killed (kill -9) once `prompt` has streamed its first chunk. */
async function crashedMidTurn(prompt: unknown[]) {
  const cwd = workspace();
  const first = AcpChild.start({ script: hangAfterAChunk });
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  void first.agent.request('session/prompt', { sessionId, prompt } as never).catch(() => undefined);
  await first.until(() => first.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk before crash');
  await first.crash();
  return { cwd, first, sessionId };
}

test('kill -9 during a turn, then session/resume in a new process: the end the open gives the turn is sent live, its seq next to the last one sent', async (t) => {
  const { cwd, first, sessionId } = await crashedMidTurn([{ type: 'text', text: 'start' }]);
  const lastSent = Math.max(...strip(first.updatesFor(sessionId)).map((u) => u.seq ?? 0));

  const second = AcpChild.start({ script: hangAfterAChunk, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/resume', { sessionId, cwd, mcpServers: [] });
  const sent = strip(second.updatesFor(sessionId)).filter((u) => u.seq !== undefined);
  assert.ok(sent.some((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text)), JSON.stringify(sent));
  assert.equal(sent[0]?.seq, lastSent + 1);
  // Sent once: a request after the resume does not send it again.
  await second.agent.request('session/set_mode', { sessionId, modeId: 'default' });
  assert.equal(strip(second.updatesFor(sessionId)).filter((u) => u.sessionUpdate === 'agent_thought_chunk').length, sent.filter((u) => u.sessionUpdate === 'agent_thought_chunk').length);
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('kill -9 during a turn, then the daemon\'s resume with the seq its clients were sent: the new process sends that event again whole, then the rest', async (t) => {
  // The clients may have had that event in part: a prompt of several blocks is an update each, and
  // a crash can come between two (a screenshot's block still buffered in the dead process).
  // The second block is over the log's 1 MiB event limit: the prompt is logged in parts, before it.
  const big = `and another ${'x'.repeat(1_200_000)}`;
  const { cwd, first, sessionId } = await crashedMidTurn([{ type: 'text', text: 'one block' }, { type: 'text', text: big }]);
  const log = await FileEventLog.open(sessionLogPath(sessionsDir(first.home), sessionId), { readOnly: true });
  const events = (await log.readAfter(0)).events;
  await log.close();
  const prompt = events.find((e) => e.type === 'user_message')!;
  assert.ok((prompt as { parts?: number }).parts! > 1, 'logged in parts');
  const promptSeq = prompt.seq;

  const second = AcpChild.start({ script: hangAfterAChunk, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/resume', { sessionId, cwd, mcpServers: [], _meta: { troupe: { sentSeq: promptSeq } } } as never);
  const sent = strip(second.updatesFor(sessionId)).filter((u) => u.seq !== undefined);
  assert.deepEqual(sent.slice(0, 2).map((u) => [u.seq, u.sessionUpdate, u.content?.text]), [
    [promptSeq, 'user_message_chunk', 'one block'],
    [promptSeq, 'user_message_chunk', big],
  ]);
  assert.ok(sent.some((u) => u.sessionUpdate === 'agent_message_chunk' && u.content.text === 'streaming before the crash'), 'then what followed');
  assert.ok(sent.some((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text)), 'and the turn\'s end');
  assert.deepEqual(sent.map((u) => u.seq), [...sent.map((u) => u.seq)].sort((x, y) => x - y), 'in order');
});

test('session/load of a log damaged from its first record is refused log_corrupt, and the file is left as it was', async (t) => {
  const { cwd, sessionId, home } = await storedSession(['one']);
  const path = join(home, 'sessions', `${sessionId}.log`);
  const damaged = readFileSync(path);
  damaged[4] ^= 0xff; // the header record's checksum: no event after it can be trusted
  writeFileSync(path, damaged);
  const c = AcpChild.start({ script, home });
  t.after(() => c.close());
  await c.initialize();
  for (const request of [
    () => c.agent.request('session/load', { sessionId, cwd, mcpServers: [] }),
    () => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two' }] }),
  ]) {
    await assert.rejects(request(), (err: any) => err.code === -32025 && err.data.code === 'log_corrupt' && err.data.sessionId === sessionId && err.data.path === path);
  }
  assert.ok(readFileSync(path).equals(damaged), 'not repaired into an empty log: every byte is still there to salvage');
  assert.deepEqual(c.updatesFor(sessionId), []);
  assert.deepEqual(c.schemaErrors, []);
});

test('a prompt logged without its turn (killed between the two writes of a large prompt) is ended as an interrupted turn when the session opens', async (t) => {
  const { cwd, sessionId, home } = await storedSession(['list things']);
  // What a process killed between the writes leaves: the prompt (large: its projection went out in a
  // write of its own, with the events before it), and not the turn_started that followed it.
  const path = sessionLogPath(sessionsDir(home), sessionId);
  const log = await FileEventLog.open(path);
  const lost = log.append({ type: 'user_message', sessionId, turnId: 'turn_lost', messageId: 'msg_lost', content: [{ type: 'text', text: 'a large prompt' }] });
  await log.close();

  const second = AcpChild.start({ script, home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const replayed = history(second, sessionId);
  const prompt = replayed.findIndex((u) => u.sessionUpdate === 'user_message_chunk' && u.content.text === 'a large prompt');
  assert.equal(replayed[prompt]?.seq, lost.seq);
  assert.ok(replayed.slice(prompt).some((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text)), 'its turn is shown ended agent_crashed');
  // The session goes on; in its log the prompt has its turn and the turn its end.
  assert.equal((await second.prompt(sessionId, 'again please')).stopReason, 'end_turn');
  await second.agent.request('session/close', { sessionId });
  const check = await FileEventLog.open(path, { readOnly: true });
  t.after(() => check.close());
  const events = (await check.readAfter(lost.seq - 1, { limit: 1000 })).events;
  assert.deepEqual(
    events.slice(0, 3).map((e) => [e.type, (e as { turnId?: string }).turnId, (e as { errorCode?: string }).errorCode, (e as { steps?: number }).steps]),
    [
      ['user_message', 'turn_lost', undefined, undefined],
      ['turn_started', 'turn_lost', undefined, undefined],
      ['turn_completed', 'turn_lost', 'agent_crashed', 0],
    ],
  );
  assert.deepEqual(second.schemaErrors, []);
});

test('kill -9 during /compact: session/load in a new process shows the compaction ended failed agent_crashed, not in progress for ever', async (t) => {
  const cwd = workspace();
  const compactScript = { compaction: [{ hang: true }], replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }]] };
  const first = AcpChild.start({ script: compactScript });
  await first.initialize({ session: { compaction: {} } } as any);
  const sessionId = await first.newSession(cwd);
  for (const p of ['one', 'two', 'three']) await first.prompt(sessionId, p);
  void first.prompt(sessionId, '/compact').catch(() => undefined);
  await first.until(() => first.updatesFor(sessionId, 'compaction_update').length === 1, 'compaction started');
  await new Promise((r) => setTimeout(r, 100));
  await first.crash();

  const second = AcpChild.start({ script: { replies: [[{ text: 'after' }]] }, home: first.home });
  t.after(() => second.close());
  await second.initialize({ session: { compaction: {} } } as any);
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const updates = second.updatesFor(sessionId, 'compaction_update');
  assert.deepEqual(updates.map((u) => [u.status, u.error]), [['in_progress', undefined], ['failed', 'agent_crashed']], JSON.stringify(updates));
  assert.equal(updates[1].compactionId, updates[0].compactionId);
  assert.equal((await second.prompt(sessionId, 'go on')).stopReason, 'end_turn');
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('session/fork while /compact runs copies the history before that compaction: the fork has no compaction left open', async (t) => {
  const c = AcpChild.start({ script: { compaction: [{ hang: true }], replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ text: 'fork answer' }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { compaction: {} } } as any);
  const cwd = workspace();
  const source = await c.newSession(cwd);
  for (const p of ['one', 'two', 'three']) await c.prompt(source, p);
  const compacting = c.prompt(source, '/compact');
  await c.until(() => c.updatesFor(source, 'compaction_update').length === 1, 'compaction started');
  const fork: any = await c.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] });
  await c.agent.notify('session/cancel', { sessionId: source });
  assert.equal((await compacting).stopReason, 'cancelled');
  await c.agent.request('session/close', { sessionId: fork.sessionId });
  await c.agent.request('session/load', { sessionId: fork.sessionId, cwd, mcpServers: [] });
  assert.deepEqual(c.updatesFor(fork.sessionId, 'compaction_update'), [], 'the source\'s compaction is not the fork\'s');
  assert.equal((await c.prompt(fork.sessionId, 'go on')).stopReason, 'end_turn');
  assert.deepEqual(c.updatesFor(fork.sessionId, 'compaction_update'), []);
  assert.deepEqual(c.schemaErrors, []);
});
