// What session/load shows an editor, compared with what the client that ran the session saw live:
// the whole conversation, once, in log order, before the response; and a request sent right behind
// the load (not waiting for its response) acts on the session after that history, in every kind of
// session, the ones whose log the engine must repair first included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });
/** A session's updates, without the command list (sent on every load and new). */
const shown = (c: AcpChild, sessionId: string) => c.updatesFor(sessionId).filter((u) => u.sessionUpdate !== 'available_commands_update');
/** A client is not sent its own prompts back; a replay has them for everyone. */
const withoutPrompts = (updates: any[]) => updates.filter((u) => u.sessionUpdate !== 'user_message_chunk');
const seqOf = (u: any): number | undefined => u._meta?.troupe?.seq;

test('session/load replays exactly what the client saw live (tool calls allowed and refused, a cancelled turn, a compaction), in the same process and in a fresh one', async () => {
  for (const caps of [{}, { session: { compaction: {}, notices: {} } }]) {
    const cwd = workspace();
    writeFileSync(join(cwd, 'a.txt'), 'hello\n');
    const script = {
      replies: [
        [{ thought: 'plan' }, { text: 'Writing.' }, call('write_file', { path: 'b.txt', content: 'new\n' })],
        [{ text: 'Written.' }],
        [{ text: 'Again.' }, call('write_file', { path: 'c.txt', content: 'no\n' })],
        [{ text: 'Refused.' }],
        [{ text: 'partial' }, { hang: true }],
        [{ text: 'three' }],
        [{ text: 'after compaction' }, { usage: { input: 10, output: 2 } }],
      ],
    };
    const first = AcpChild.start({ script, answers: ['allow_once', 'reject_once'] });
    await first.initialize(caps as never);
    const sessionId = await first.newSession(cwd);
    await first.prompt(sessionId, 'write b');
    await first.prompt(sessionId, 'write c');
    const running = first.prompt(sessionId, 'hang');
    await first.until(() => first.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'partial'), 'the turn to cancel');
    await first.agent.notify('session/cancel', { sessionId });
    assert.equal((await running).stopReason, 'cancelled');
    await first.prompt(sessionId, 'three');
    await first.prompt(sessionId, '/compact');
    await first.prompt(sessionId, 'four');
    assert.equal(first.permissions.length, 2);
    const live = shown(first, sessionId);
    first.updates.length = 0;
    await first.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const sameProcess = shown(first, sessionId);
    assert.equal(await first.close(), 0);

    const second = AcpChild.start({ script, home: first.home });
    await second.initialize(caps as never);
    await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const fresh = shown(second, sessionId);
    assert.equal(await second.close(), 0);
    assert.deepEqual(withoutPrompts(fresh), live, `${JSON.stringify(caps)}: the replay is what the client saw live, and its prompts`);
    assert.deepEqual(sameProcess, fresh, 'from the log file or from the open session alike');
    assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
  }
});

const hangAfterAChunk = { replies: [[{ text: 'streaming before the crash' }, { hang: true }]] };

test('kill -9 mid-turn, then session/load in a fresh process with a request right behind it: the turn\'s end is sent once, in the history, and the request acts after it', async (t) => {
  for (const behind of ['session/prompt', 'session/set_mode'] as const) {
    const cwd = workspace();
    const first = AcpChild.start({ script: hangAfterAChunk });
    await first.initialize();
    const sessionId = await first.newSession(cwd);
    void first.prompt(sessionId, 'start').catch(() => undefined);
    await first.until(() => first.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'a chunk before the crash');
    await first.crash();

    const second = AcpChild.start({ script: { replies: [{ when: 'again', items: [{ text: 'alive again' }] }] }, home: first.home });
    t.after(() => second.close());
    await second.initialize();
    // Pipelined: the request is on the wire before the load has answered. The log needs the engine
    // (its open turn is ended by the open), so this load does not replay from the file.
    const loaded = second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const other = behind === 'session/prompt' ? second.prompt(sessionId, 'again') : second.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    await loaded;
    await other;
    const updates = shown(second, sessionId);
    const crashed = updates.filter((u) => u.sessionUpdate === 'agent_thought_chunk' && /agent_crashed/.test(u.content.text));
    assert.equal(crashed.length, 1, `${behind}: the repaired turn's end is sent once: ${JSON.stringify(updates.map((u) => [seqOf(u), u.sessionUpdate]))}`);
    assert.equal(updates[0]?.sessionUpdate, 'user_message_chunk', `${behind}: the history comes first, from its first prompt`);
    const seqs = updates.map(seqOf).filter((s) => s !== undefined);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), `${behind}: in log order`);
    const afterHistory = updates.slice(updates.indexOf(crashed[0]) + 1);
    assert.ok(
      afterHistory.some((u) => (behind === 'session/prompt' ? u.sessionUpdate === 'agent_message_chunk' && u.content.text === 'alive again' : u.sessionUpdate === 'config_option_update')),
      `${behind}: what the request made is sent after the history`,
    );
    assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
    await second.close();
  }
});

test('two session/loads of one session sent together in a fresh process: two whole replays, one after the other', async (t) => {
  const cwd = workspace();
  const script = { replies: [[{ thought: 'plan' }, { text: 'one' }], [{ text: 'two' }]] };
  const first = AcpChild.start({ script });
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  await first.prompt(sessionId, 'first');
  await first.prompt(sessionId, 'second');
  assert.equal(await first.close(), 0);

  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  await Promise.all([0, 1].map(() => second.agent.request('session/load', { sessionId, cwd, mcpServers: [] })));
  const replays = shown(second, sessionId);
  const once = replays.slice(0, replays.length / 2);
  assert.ok(once.length > 4);
  assert.deepEqual(replays, [...once, ...once], JSON.stringify(replays.map((u) => [seqOf(u), u.sessionUpdate])));
  assert.deepEqual(second.schemaErrors, []);
});

test('a steer sent while a load of the session waits for its MCP servers acts on the running turn at once, not after the load', async (t) => {
  const cwd = workspace();
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  const turn = c.prompt(sessionId, 'go');
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'the running turn');
  const turnId = c.updatesFor(sessionId, 'agent_message_chunk')[0]._meta.troupe.turnId;
  // The load replays, then starts an MCP server that answers nothing until its gate file exists.
  const gate = join(cwd, 'gate');
  const server = { name: 'test', command: process.execPath, args: [resolve('dist/test/support/mcp-test-server.js')], env: [{ name: 'MCP_TEST_START_GATE', value: gate }] };
  let loadAnswered = false;
  const load = c.agent.request('session/load', { sessionId, cwd, mcpServers: [server] }).finally(() => (loadAnswered = true));
  await c.agent.request('_troupe/steer' as any, { sessionId, expectedTurnId: turnId, prompt: [{ type: 'text', text: 'also this' }] });
  assert.equal(loadAnswered, false, 'the steer was answered while the load waited');
  writeFileSync(gate, '');
  await load;
  void c.agent.notify('session/cancel', { sessionId });
  assert.equal((await turn).stopReason, 'cancelled');
});

test("commands run in the editor's terminal are replayed with their output as text, not the terminal: it was the live client's, released, and unknown to a client loading the session", async (t) => {
  const cwd = workspace();
  // exec: once killed, nothing holds the output pipe open (the test client answers terminal/output of
  // a killed command once its pipes have closed).
  const script = { replies: [[call('run_command', { command: 'echo from-terminal' })], [{ text: 'ran' }], [call('run_command', { command: 'echo started; exec sleep 30' })], [{ text: 'unreached' }]] };
  const first = AcpChild.start({ script });
  t.after(() => first.close());
  await first.initialize({ terminal: true });
  const sessionId = await first.newSession(cwd);
  await first.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await first.prompt(sessionId, 'run it')).stopReason, 'end_turn');
  const running = first.prompt(sessionId, 'run the long one');
  const terminals = () => first.updatesFor(sessionId, 'tool_call_update').filter((u) => u.content?.some((x: any) => x.type === 'terminal'));
  await first.until(() => terminals().length === 3, 'the second terminal embedded');
  await first.agent.notify('session/cancel', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  const live = shown(first, sessionId);
  assert.equal(live.filter((u) => u.sessionUpdate === 'tool_call_update' && u.content?.some((x: any) => x.type === 'terminal')).length, 4, 'live, each call embeds its terminal, and its final update keeps it');
  first.updates.length = 0;
  await first.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const sameProcess = shown(first, sessionId);
  assert.equal(await first.close(), 0);

  // Another editor (or the same one restarted), which offers no terminals at all.
  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize({});
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const fresh = shown(second, sessionId);
  assert.deepEqual(sameProcess, fresh, 'from the log file or from the open session alike');

  const calls = live.filter((u) => u.sessionUpdate === 'tool_call').map((u) => u.toolCallId);
  const final = (updates: any[], id: string) => updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === id).at(-1);
  const text = (u: any) => u.content.map((x: any) => [x.type, x.content?.type, x.content?.text]);
  const [ran, cancelled] = calls.map((id) => final(fresh, id!));
  assert.deepEqual([ran.status, ...text(ran)], ['completed', ['content', 'text', ran.rawOutput.output]], 'its output, as a client without terminals sees it live');
  assert.match(ran.rawOutput.output, /^from-terminal\n\[exit code: 0\]$/);
  assert.deepEqual(text(cancelled).length, 1);
  assert.equal(cancelled.status, 'failed');
  assert.match(text(cancelled)[0][2], /Cancelled/, 'the reason it showed after the terminal');
  // Nothing else differs: the updates that only embedded a terminal change nothing now.
  const withoutContent = (updates: any[]) => updates.map((u) => (u.sessionUpdate === 'tool_call_update' ? { ...u, content: undefined } : u));
  // (A config option's change tells the state, and is not replayed: the load's response has it.)
  assert.deepEqual(withoutContent(withoutPrompts(fresh)), withoutContent(live.filter((u) => u.sessionUpdate !== 'config_option_update')));
  assert.equal(fresh.filter((u) => u.sessionUpdate === 'tool_call_update' && 'content' in u).length, 2, 'only the final updates carry content');
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});
