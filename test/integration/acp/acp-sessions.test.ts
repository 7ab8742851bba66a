// `troupe acp` as a real child process, driven by the SDK client: initialize, session lifecycle,
// listing, config, slash commands and errors. Every line it writes is schema-checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const rpcError = (code: number, dataCode?: string) => (e: any) => e.code === code && (dataCode === undefined || e.data?.code === dataCode);

test('initialize advertises protocol 1, loadSession, session capabilities and the troupe extensions', async (t) => {
  const c = AcpChild.start();
  t.after(() => c.close());
  const init = await c.initialize();
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo?.name, 'troupe');
  assert.equal(init.agentCapabilities?.loadSession, true);
  assert.deepEqual(init.agentCapabilities?.sessionCapabilities, { list: {}, delete: {}, resume: {}, close: {}, additionalDirectories: {} });
  assert.equal(init.agentCapabilities?.promptCapabilities?.embeddedContext, true);
  const meta = (init.agentCapabilities as any)._meta.troupe;
  assert.equal(meta.steer.method, '_troupe/steer');
  assert.equal(meta.sessionState.method, '_troupe/session_state');
  assert.deepEqual(c.schemaErrors, []);
});

test('session/new checks cwd: relative, missing and non-directory paths are -32602 with the reason', async (t) => {
  const c = AcpChild.start();
  t.after(() => c.close());
  await c.initialize();
  const file = join(workspace(), 'f.txt');
  writeFileSync(file, 'x');
  for (const [cwd, why] of [['relative/dir', /absolute/], ['/no/such/dir/troupe', /does not exist/], [file, /not a directory/]] as const) {
    await assert.rejects(c.agent.request('session/new', { cwd, mcpServers: [] }), (e: any) => e.code === -32602 && why.test(e.message));
  }
  assert.deepEqual(c.schemaErrors, []);
});

test('session/new returns modes and config options; a turn streams updates with _meta.troupe', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ thought: 'hm' }, { text: 'Hello there' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const res = await c.agent.request('session/new', { cwd: workspace(), mcpServers: [] });
  assert.equal(res.modes?.currentModeId, 'default');
  assert.deepEqual(res.modes?.availableModes.map((m) => m.id), ['default', 'accept-edits', 'plan', 'bypass']);
  const model = res.configOptions?.find((o) => o.id === 'model') as any;
  assert.equal(model.category, 'model');
  assert.equal(model.currentValue, 'scripted/replay');
  const r = await c.prompt(res.sessionId, 'Say hi to the team');
  assert.equal(r.stopReason, 'end_turn');
  const updates = c.updatesFor(res.sessionId);
  const kinds = updates.map((u) => u.sessionUpdate);
  for (const k of ['session_info_update', 'agent_thought_chunk', 'agent_message_chunk', 'usage_update']) assert.ok(kinds.includes(k), k);
  assert.ok(!kinds.includes('user_message_chunk'), 'the client is not sent its own prompt back');
  assert.equal(c.updatesFor(res.sessionId, 'session_info_update')[0].title, 'Say hi to the team');
  const turnId = (r as any)._meta.troupe.turnId;
  const metas = updates.filter((u) => u.sessionUpdate !== 'available_commands_update').map((u) => u._meta?.troupe);
  assert.ok(metas.every((m) => Number.isInteger(m.seq)), 'every update carries its seq');
  assert.deepEqual([...metas.map((m) => m.seq)], [...metas.map((m) => m.seq)].sort((a, b) => a - b), 'in seq order');
  assert.ok(updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').every((u) => u._meta.troupe.turnId === turnId));
  await c.until(() => c.updatesFor(res.sessionId, 'available_commands_update').length > 0, 'available commands');
  const names = c.updatesFor(res.sessionId, 'available_commands_update')[0].availableCommands.map((x: any) => x.name);
  assert.deepEqual(names, ['compact', 'mode', 'model']);
  assert.deepEqual(c.schemaErrors, []);
});

test('unknown sessions are -32002 with data.sessionId for every session method', async (t) => {
  const c = AcpChild.start();
  t.after(() => c.close());
  await c.initialize();
  const sessionId = 'ses_doesnotexist';
  const cwd = workspace();
  const calls = [
    c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] }),
    c.agent.request('session/load', { sessionId, cwd, mcpServers: [] }),
    c.agent.request('session/resume', { sessionId, cwd }),
    c.agent.request('session/set_mode', { sessionId, modeId: 'plan' }),
    c.agent.request('_troupe/session_state', { sessionId }),
  ];
  for (const call of calls) await assert.rejects(call, (e: any) => e.code === -32002 && e.data?.sessionId === sessionId);
  // The SDK client itself turns -32002 from session/close into success, as ACP intends; deleting an
  // unknown session succeeds on the agent side.
  assert.deepEqual(await c.agent.request('session/close', { sessionId }), {});
  assert.deepEqual(await c.agent.request('session/delete', { sessionId }), {});
  assert.deepEqual(c.schemaErrors, []);
});

test('a session title cut from a long first prompt ends before an emoji at the cut, never in its middle (no U+FFFD)', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'ok' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  // 58 characters, then an emoji whose two UTF-16 halves are the title's 59th and 60th units.
  const prompt = `${'a'.repeat(58)}\u{1F600} and much more after it`;
  assert.equal((await c.prompt(sessionId, prompt)).stopReason, 'end_turn');
  const title = c.updatesFor(sessionId, 'session_info_update')[0].title as string;
  assert.equal(title, `${'a'.repeat(58)}…`);
  const listed = (await c.agent.request('session/list', {})).sessions.find((s) => s.sessionId === sessionId);
  assert.equal(listed?.title, title, 'session/list gives the same title');
});

test('a session title from a first prompt with control characters is one line of printable text, in session_info_update and session/list', async (t) => {
  // The title went to editors raw: NUL, ESC (here a clear-screen sequence), line breaks and bidi
  // overrides of the prompt in a field an editor shows as given. Each is a space now, runs collapsed.
  const c = AcpChild.start({ script: { replies: [[{ text: 'ok' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  assert.equal((await c.prompt(sessionId, '\u0000\u001b[2Jtitle\nsecond line\u202e\u0085\t end')).stopReason, 'end_turn');
  const title = c.updatesFor(sessionId, 'session_info_update')[0].title as string;
  assert.equal(title, '[2Jtitle second line end');
  const listed = (await c.agent.request('session/list', {})).sessions.find((s) => s.sessionId === sessionId);
  assert.equal(listed?.title, title, 'session/list gives the same title');
  assert.deepEqual(c.schemaErrors, []);
});

test('session/list pages with a cursor and filters by cwd', async (t) => {
  const c = AcpChild.start();
  t.after(() => c.close());
  await c.initialize();
  const a = workspace();
  const b = workspace();
  const inA = [await c.newSession(a), await c.newSession(a), await c.newSession(a)];
  await c.newSession(b);
  const all = await c.agent.request('session/list', {});
  assert.equal(all.sessions.length, 4);
  const onlyA = await c.agent.request('session/list', { cwd: a });
  assert.deepEqual(onlyA.sessions.map((s) => s.sessionId).sort(), [...inA].sort());
  assert.ok(onlyA.sessions.every((s) => s.cwd === a && typeof s.updatedAt === 'string'));
  await assert.rejects(c.agent.request('session/list', { cursor: 'garbage!' }), rpcError(-32021, 'invalid_cursor'));
  await assert.rejects(c.agent.request('session/list', { cwd: 'relative/dir' }), (e: any) => rpcError(-32602, 'invalid_params')(e) && /absolute/.test(e.message), 'a cwd filter is absolute (ACP)');
  assert.deepEqual(c.schemaErrors, []);
});

test('set_mode and set_config_option change mode and model, with updates; bad values are -32602', async (t) => {
  const c = AcpChild.start();
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  await c.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
  await c.until(() => c.updatesFor(sessionId, 'current_mode_update').length === 1, 'mode update');
  assert.equal(c.updatesFor(sessionId, 'current_mode_update')[0].currentModeId, 'plan');
  const res = await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/demo' });
  assert.equal((res.configOptions.find((o) => o.id === 'model') as any).currentValue, 'scripted/demo');
  assert.equal((res.configOptions.find((o) => o.id === 'mode') as any).currentValue, 'plan');
  await assert.rejects(c.agent.request('session/set_mode', { sessionId, modeId: 'yolo' }), rpcError(-32602));
  await assert.rejects(c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'nope/x' }), rpcError(-32046, 'model_not_found'));
  await assert.rejects(c.agent.request('session/set_config_option', { sessionId, configId: 'colour', value: 'red' }), rpcError(-32602));
  // A provider with no credential in this process: refused now, not at the next prompt.
  await assert.rejects(
    c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'anthropic/claude-sonnet-4-6' }),
    (e: any) => rpcError(-32041, 'provider_auth')(e) && /anthropic has no credential here: set ANTHROPIC_API_KEY/.test(e.message),
  );
  // scripted/replay without TROUPE_SCRIPT would fail every turn: not offered, and refused now.
  const offered = (res.configOptions.find((o) => o.id === 'model') as any).options.map((o: any) => o.value);
  assert.ok(offered.includes('scripted/demo') && !offered.includes('scripted/replay'), JSON.stringify(offered));
  await assert.rejects(
    c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/replay' }),
    (e: any) => /scripted\/replay needs a script: set TROUPE_SCRIPT/.test(e.message),
  );
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.deepEqual([state.mode, state.model], ['plan', 'scripted/demo']);
  assert.deepEqual(c.schemaErrors, []);
});

test('a model whose provider has a credential is taken as before', async (t) => {
  const c = AcpChild.start({ env: { ANTHROPIC_API_KEY: 'sk-test' } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const res = await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'anthropic/claude-sonnet-4-6' });
  assert.equal((res.configOptions.find((o) => o.id === 'model') as any).currentValue, 'anthropic/claude-sonnet-4-6');
});

test('the model option refuses a model no turn could use, and the session keeps its model; a vendor model not in the catalogue is still taken', async (t) => {
  const c = AcpChild.start({ env: { ANTHROPIC_API_KEY: 'sk-test' } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const modelOption = (options: any[]) => options.find((o) => o.id === 'model');
  // The scripted provider has demo and replay only: anything else failed every later turn model_not_found.
  await assert.rejects(
    c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/nope' }),
    (e: any) => rpcError(-32046, 'model_not_found')(e) && /scripted has no model 'nope': its models are scripted\/demo, scripted\/replay/.test(e.message),
  );
  // Taken as given, 'scripted/demo ' showed as a choice of its own.
  await assert.rejects(
    c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/demo ' }),
    (e: any) => rpcError(-32602, 'invalid_params')(e) && /has spaces around it/.test(e.message),
  );
  // So is an id with a space (or any whitespace, or a control character) inside: it went to the vendor.
  for (const [value, what] of [
    ['openai/ gpt-4o', 'a space'],
    ['anthropic/claude x', 'a space'],
    ['openai/gpt\u00a04o', 'the character U+00A0'],
    ['openai/gpt-4o\tx', 'the character U+0009'],
  ]) {
    await assert.rejects(
      c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: value! }),
      (e: any) => rpcError(-32602, 'invalid_params')(e) && e.data?.modelId === value && e.message.startsWith(`model id ${JSON.stringify(value)} has ${what} in it`),
      value,
    );
  }
  // So is the slash command, which takes the same path.
  await assert.rejects(c.prompt(sessionId, '/model scripted/nope'), rpcError(-32046, 'model_not_found'));
  let state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.equal(state.model, 'anthropic/claude-sonnet-5-5');
  // A dated snapshot goes to the vendor as it is (docs/providers.md): not refused.
  const res = await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'anthropic/claude-haiku-4-5-20251001' });
  assert.equal(modelOption(res.configOptions).currentValue, 'anthropic/claude-haiku-4-5-20251001');
  const res2 = await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/demo' });
  const values = modelOption(res2.configOptions).options.map((o: any) => o.value);
  assert.ok(!values.includes('scripted/nope') && !values.includes('scripted/demo '), JSON.stringify(values));
  const done = await c.prompt(sessionId, 'hello');
  assert.equal(done.stopReason, 'end_turn');
  state = await c.agent.request('_troupe/session_state', { sessionId });
  assert.equal(state.model, 'scripted/demo');
  assert.deepEqual(c.schemaErrors, []);
});

test('a default model no turn could use (TROUPE_MODEL=scripted/nope) is said at start and refuses session/new, naming it; older sessions still load, fork and run', async (t) => {
  const cwd = workspace();
  const first = AcpChild.start();
  await first.initialize();
  const older = await first.newSession(cwd);
  assert.equal((await first.prompt(older, 'hello')).stopReason, 'end_turn');
  await first.close();
  const c = AcpChild.start({ home: first.home, env: { TROUPE_MODEL: 'scripted/nope' } });
  t.after(() => c.close());
  await c.initialize();
  // Until 2026-12-07 the session was made, and every turn of it failed model_not_found.
  const said = /the default model "scripted\/nope" \(from TROUPE_MODEL\) cannot be used: scripted has no model 'nope': its models are scripted\/demo, scripted\/replay; set TROUPE_MODEL to a model troupe serves/;
  await assert.rejects(c.agent.request('session/new', { cwd, mcpServers: [] }), (e: any) => rpcError(-32046, 'model_not_found')(e) && e.data?.modelId === 'scripted/nope' && e.data?.source === 'TROUPE_MODEL' && said.test(e.message));
  await c.until(() => said.test(c.stderr) && /new sessions are refused until then/.test(c.stderr), 'the warning at start');
  // A session that names its model keeps it: loaded, forked and prompted as before.
  await c.agent.request('session/load', { sessionId: older, cwd, mcpServers: [] });
  assert.equal((await c.prompt(older, 'again')).stopReason, 'end_turn');
  const fork = (await c.agent.request('session/fork' as never, { sessionId: older, cwd, mcpServers: [] } as never)) as { sessionId: string };
  assert.equal((await c.prompt(fork.sessionId, 'forked')).stopReason, 'end_turn');
  const state: any = await c.agent.request('_troupe/session_state', { sessionId: fork.sessionId });
  assert.equal(state.model, 'scripted/demo');
  // A session/new that names its model (`_meta.troupe.model`, as troupe run --model sends it) does
  // not go by the default; the model is checked as a switch to it is.
  const named = (model: string) => c.agent.request('session/new', { cwd, mcpServers: [], _meta: { troupe: { model } } });
  const made = await named('scripted/demo');
  assert.equal(((await c.agent.request('_troupe/session_state', { sessionId: made.sessionId })) as any).model, 'scripted/demo');
  assert.equal((await c.prompt(made.sessionId, 'hi')).stopReason, 'end_turn');
  await assert.rejects(named('scripted/also-nope'), (e: any) => rpcError(-32046, 'model_not_found')(e) && /^scripted has no model 'also-nope'/.test(e.message));
  await assert.rejects(named('openai/gpt-5'), (e: any) => rpcError(-32041, 'provider_auth')(e) && /^cannot use openai\/gpt-5: openai has no credential here/.test(e.message));
  assert.deepEqual(c.schemaErrors, []);
});

test('a default model with a space inside (TROUPE_MODEL="openai/ gpt-4o") refuses session/new with invalid_params, naming it', async (t) => {
  const c = AcpChild.start({ env: { TROUPE_MODEL: 'openai/ gpt-4o', OPENAI_API_KEY: 'sk-test' } });
  t.after(() => c.close());
  await c.initialize();
  await assert.rejects(
    c.agent.request('session/new', { cwd: workspace(), mcpServers: [] }),
    (e: any) => rpcError(-32602, 'invalid_params')(e) && e.data?.modelId === 'openai/ gpt-4o' && /^the default model "openai\/ gpt-4o" \(from TROUPE_MODEL\) cannot be used: model id "openai\/ gpt-4o" has a space in it/.test(e.message),
  );
  assert.deepEqual(c.schemaErrors, []);
});

test('a default model whose provider has no credential here (TROUPE_MODEL=openai/gpt-5, no key) is said as the agent starts', async (t) => {
  const c = AcpChild.start({ env: { TROUPE_MODEL: 'openai/gpt-5' } });
  t.after(() => c.close());
  await c.initialize();
  await c.until(() => /the default model "openai\/gpt-5" \(from TROUPE_MODEL\) cannot be used here: openai has no credential here: set OPENAI_API_KEY/.test(c.stderr), 'the warning at start');
});

test('slash commands: /mode and /model switch, /compact compacts; an unknown one is a plain prompt', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ text: 'plain' }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { notices: {} } } as any);
  const sessionId = await c.newSession(workspace());
  for (const p of ['one', 'two', 'three']) await c.prompt(sessionId, p);
  assert.equal((await c.prompt(sessionId, '/mode accept-edits')).stopReason, 'end_turn');
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.equal(state.mode, 'accept-edits');
  await c.prompt(sessionId, '/compact');
  await c.until(() => c.updatesFor(sessionId, 'notice').some((n) => /Compaction completed/.test(n.title)), 'compaction notice');
  assert.equal((await c.prompt(sessionId, '/unknown thing')).stopReason, 'end_turn');
  assert.ok(c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'plain'));
  await assert.rejects(c.prompt(sessionId, '/mode'), rpcError(-32602));
  assert.deepEqual(c.schemaErrors, []);
});

test('a client with session.compaction gets compaction_update upserts, the summary as content blocks', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { compaction: {} } } as any);
  const sessionId = await c.newSession(workspace());
  // The last two turns are kept as they are: the first is summarized.
  for (const p of ['one', 'two', 'three']) await c.prompt(sessionId, p);
  await c.prompt(sessionId, '/compact');
  await c.until(() => c.updatesFor(sessionId, 'compaction_update').some((u) => u.status === 'completed'), 'compaction completed');
  const [started, completed] = c.updatesFor(sessionId, 'compaction_update');
  assert.equal(started.status, 'in_progress');
  assert.equal(completed.compactionId, started.compactionId);
  assert.deepEqual(completed.summary.map((b: any) => b.type), ['text']);
  assert.match(completed.summary[0].text, /Summary of the earlier conversation/);
  assert.deepEqual(c.updatesFor(sessionId, 'agent_thought_chunk'), [], 'no degraded copy for a client that takes compactions');
  assert.deepEqual(c.schemaErrors, []);
});

test('session/cancel stops a /compact: it is answered cancelled, a prompt sent behind it too, and the session goes on', async (t) => {
  const c = AcpChild.start({ script: { compaction: [{ hang: true }], replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ text: 'after' }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { compaction: {} } } as any);
  const sessionId = await c.newSession(workspace());
  for (const p of ['one', 'two', 'three']) await c.prompt(sessionId, p);
  const compacting = c.prompt(sessionId, '/compact');
  await c.until(() => c.updatesFor(sessionId, 'compaction_update').length === 1, 'compaction started');
  const behind = c.prompt(sessionId, 'sent while it compacts');
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await compacting).stopReason, 'cancelled');
  assert.equal((await behind).stopReason, 'cancelled');
  const [, ended] = c.updatesFor(sessionId, 'compaction_update');
  assert.deepEqual([ended.status, ended.error], ['failed', 'request_cancelled']);
  assert.equal((await c.prompt(sessionId, 'next')).stopReason, 'end_turn');
  assert.ok(c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'after'), 'the queued prompt never reached the model');
  assert.deepEqual(c.schemaErrors, []);
});

test('$/cancel_request of a running /compact stops it as session/cancel does: answered cancelled; a prompt sent behind it goes on', async (t) => {
  const c = AcpChild.start({ script: { compaction: [{ hang: true }], replies: [[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ text: 'behind' }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { compaction: {} } } as any);
  const sessionId = await c.newSession(workspace());
  for (const p of ['one', 'two', 'three']) await c.prompt(sessionId, p);
  // The SDK client sends $/cancel_request for a request whose cancellationSignal aborts.
  const withdraw = new AbortController();
  const compacting = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/compact' }] }, { cancellationSignal: withdraw.signal });
  await c.until(() => c.updatesFor(sessionId, 'compaction_update').length === 1, 'compaction started');
  const behind = c.prompt(sessionId, 'sent while it compacts');
  withdraw.abort();
  let answer: string | undefined;
  void compacting.then((r) => (answer = r.stopReason));
  // (Until 2026-12-06 the withdrawn /compact was never answered while its summary call hung.)
  await c.until(() => answer !== undefined, 'the withdrawn /compact answered');
  assert.equal(answer, 'cancelled');
  const [, ended] = c.updatesFor(sessionId, 'compaction_update');
  assert.deepEqual([ended.status, ended.error], ['failed', 'request_cancelled']);
  assert.equal((await behind).stopReason, 'end_turn', 'only the withdrawn request was cancelled');
  assert.ok(c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'behind'));
  const state: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.deepEqual([state.session, state.queue], ['idle', []]);
  assert.deepEqual(c.schemaErrors, []);
});

test('/compact while a turn runs never waits in the queue: it is refused session_busy at once, and the running turn goes on', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'partial' }, { hang: true }]] } });
  t.after(() => c.close());
  await c.initialize({ session: { compaction: {} } } as any);
  const sessionId = await c.newSession(workspace());
  const running = c.prompt(sessionId, 'go');
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'chunk');
  const before: any = await c.agent.request('_troupe/session_state', { sessionId });
  await assert.rejects(c.prompt(sessionId, '/compact'), rpcError(-32014, 'session_busy'));
  const after: any = await c.agent.request('_troupe/session_state', { sessionId });
  assert.deepEqual([after.session, after.turnId, after.queue], ['running', before.turnId, []], 'the same turn runs, nothing queued behind it');
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  assert.deepEqual(c.updatesFor(sessionId, 'compaction_update'), []);
  assert.deepEqual(c.schemaErrors, []);
});

test('prompts take text, resource links, embedded resources and images', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'seen' }]] } });
  t.after(() => c.close());
  const init = await c.initialize();
  assert.equal(init.agentCapabilities?.promptCapabilities?.image, true);
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  const prompt: any[] = [
    { type: 'text', text: 'look' },
    { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
    { type: 'resource', resource: { uri: 'file:///b.txt', text: 'embedded', mimeType: 'text/plain' } },
    { type: 'image', data: Buffer.from('png').toString('base64'), mimeType: 'image/png' },
  ];
  const res: any = await c.agent.request('session/prompt', { sessionId, prompt });
  assert.equal(res.stopReason, 'end_turn');
  assert.deepEqual(c.updatesFor(sessionId, 'user_message_chunk'), [], 'the client is not sent its own prompt back');
  // The history has it, block by block.
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const shown = c.updatesFor(sessionId, 'user_message_chunk');
  assert.deepEqual(shown.map((u) => u.content.type), ['text', 'resource_link', 'resource', 'image']);
  assert.deepEqual(shown.map(({ _meta, messageId, ...u }) => u.content), prompt);
  await assert.rejects(c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'audio', data: 'AA==', mimeType: 'audio/wav' }] as any }), rpcError(-32602));
  assert.deepEqual(c.schemaErrors, []);
});

test("a prompt block whose line was within the 32 MiB an ACP client reads is shown by session/load with a note, not on a line over it that ends the client's connection", async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'seen' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = workspace();
  const sessionId = await c.newSession(cwd);
  // The request's line is just within the limit; a user_message_chunk's envelope is longer than a prompt's.
  const envelope = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'look:' }, { type: 'text', text: '' }] } }).length;
  const text = 'x'.repeat(32 * 1024 * 1024 - envelope - 16);
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'look:' }, { type: 'text', text }] })).stopReason, 'end_turn');
  await c.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(
    c.updatesFor(sessionId, 'user_message_chunk').map((u) => u.content),
    [{ type: 'text', text: 'look:' }, { type: 'text', text: `[text: ${JSON.stringify({ type: 'text', text }).length} bytes, too large to show here]` }],
    'the small block whole, the large one as a note',
  );
  assert.equal((await c.agent.request('session/list', {})).sessions.length, 1, 'the connection goes on');
  assert.deepEqual(c.schemaErrors, []);
});

test("a request the SDK's schema check refuses says what is wrong in its message, not only \"Invalid params\": a block of a kind ACP has not, a field of the wrong type", async (t) => {
  const c = AcpChild.start({ script: { replies: [] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const refusal = (params: unknown) => c.agent.request('session/prompt', params as never).then(() => assert.fail('served'), (err: any) => err);
  const unknownKind = await refusal({ sessionId, prompt: [{ type: 'video', data: 'AA==' }] });
  assert.equal(unknownKind.code, -32602);
  assert.match(unknownKind.message, /^Invalid params: prompt\[0\]\.type: expected "text", "image", "audio", "resource_link" or "resource"; /);
  assert.equal(unknownKind.data.code, 'invalid_params');
  assert.ok(unknownKind.data.prompt[0].type._errors.length > 0, 'the whole detail stays in data');
  const wrongTypes = await refusal({ sessionId: 5, prompt: 'hello' });
  assert.equal(wrongTypes.message, 'Invalid params: sessionId: expected string, received number; prompt: expected array, received string');
  const missing = await c.agent.request('session/new', { cwd: workspace() } as never).then(() => assert.fail('served'), (err: any) => err);
  assert.equal(missing.message, 'Invalid params: mcpServers: expected array, received undefined');
  assert.deepEqual(c.schemaErrors, []);
});

test('a prompt block of a kind ACP has but missing a field of that kind is refused naming that field first, not the kinds it is not', async (t) => {
  // Until 2026-12-07: 'Invalid params: prompt[0].type: expected "image", "audio", "resource_link" or "resource"; …', as if the type were wrong.
  const c = AcpChild.start({ script: { replies: [] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  const refusal = (prompt: unknown[]) => c.agent.request('session/prompt', { sessionId, prompt } as never).then(() => assert.fail('served'), (err: any) => err);
  const noText = await refusal([{ type: 'text' }]);
  assert.equal(noText.code, -32602);
  assert.equal(noText.message, 'Invalid params: prompt[0].text: expected string, received undefined (a block of type "text")');
  assert.ok(noText.data.prompt[0].type._errors.length > 0, 'the whole detail stays in data');
  const wrongText = await refusal([{ type: 'text', text: 'fine' }, { type: 'text', text: 5 }]);
  assert.equal(wrongText.message, 'Invalid params: prompt[1].text: expected string, received number (a block of type "text")');
  const noMime = await refusal([{ type: 'image', data: 'AA==' }]);
  assert.equal(noMime.message, 'Invalid params: prompt[0].mimeType: expected string, received undefined (a block of type "image")');
  const noName = await refusal([{ type: 'resource_link', uri: 'file:///x' }]);
  assert.equal(noName.message, 'Invalid params: prompt[0].name: expected string, received undefined (a block of type "resource_link")');
  // Two such blocks: named in the prompt's order.
  const two = await refusal([{ type: 'text' }, { type: 'image', data: 'AA==' }]);
  assert.equal(two.message, 'Invalid params: prompt[0].text: expected string, received undefined (a block of type "text"); prompt[1].mimeType: expected string, received undefined (a block of type "image")');
  // Beside a block of a kind ACP has not, which still lists the kinds there are.
  const both = await refusal([{ type: 'text' }, { type: 'video' }]);
  assert.match(both.message, /^Invalid params: prompt\[0\]\.text: expected string, received undefined \(a block of type "text"\); prompt\[1\]\.type: expected "text", "image", "audio", "resource_link" or "resource"; /);
  assert.equal((await c.agent.request('session/list', {})).sessions.length, 1, 'the connection goes on');
  assert.deepEqual(c.schemaErrors, []);
});

test('a session nothing uses for TROUPE_SESSION_IDLE_MS is unloaded (its log closed) and opened again, whole, by its next request; one with a turn running stays', async (t) => {
  const c = AcpChild.start({
    env: { TROUPE_SESSION_IDLE_MS: '300' },
    script: { replies: [{ when: 'slow', items: [{ delay_ms: 1500 }, { text: 'done slowly' }] }, { when: 'hi', items: [{ text: 'hello' }] }] },
  });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  assert.equal((await c.prompt(sessionId, 'hi')).stopReason, 'end_turn');
  const before: any = await c.agent.request('_troupe/session_state' as never, { sessionId } as never);
  const logPath = realpathSync(join(c.home, 'sessions', `${sessionId}.log`));
  const logOpen = () => readdirSync(`/proc/${c.proc.pid}/fd`).some((fd) => {
    try {
      return readlinkSync(`/proc/${c.proc.pid}/fd/${fd}`) === logPath;
    } catch {
      return false; // closed meanwhile
    }
  });
  assert.ok(logOpen(), 'a live session holds its log open');
  await c.until(() => !logOpen(), 'the idle session unloaded');

  // Its next request opens it from its log: history, title and mode are all there.
  assert.equal((await c.prompt(sessionId, 'hi')).stopReason, 'end_turn');
  const after: any = await c.agent.request('_troupe/session_state' as never, { sessionId } as never);
  assert.ok(after.lastSeq > before.lastSeq, `the log goes on from seq ${before.lastSeq} (now ${after.lastSeq})`);
  assert.equal(after.title, before.title);
  assert.equal(after.mode, before.mode);
  assert.ok(logOpen(), 'open again');

  // A turn that runs longer than the idle time keeps its session.
  const slow = c.prompt(sessionId, 'slow');
  await new Promise((r) => setTimeout(r, 900));
  assert.ok(logOpen(), 'not unloaded while its turn runs');
  assert.equal((await slow).stopReason, 'end_turn');
  assert.deepEqual(c.schemaErrors, []);
});
