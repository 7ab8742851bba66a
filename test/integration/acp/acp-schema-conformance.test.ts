// Every answer, update and request `troupe acp` writes over stdio, driven through every kind of turn,
// error and session method, and checked against the ACP v1 schema by test/support/acp-schema.ts (the
// SDK's zod schemas, losslessly: no unknown field, no invalid value read as a default). A client of the
// SDK does not validate the responses it gets, so nothing else would notice a result that breaks the
// protocol. On top of it: errors carry spec/errors.md's data.code, and a turn's updates come before
// its prompt is answered.
//
// The client here is raw NDJSON, so that results are seen exactly as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { acpOutgoingProblems } from '../../support/acp-schema.js';

const BIN = resolve('bin/troupe.js');

type Message = { jsonrpc: string; id?: number | string | null; method?: string; params?: any; result?: any; error?: any };

/** A raw NDJSON client of a real `troupe acp`: every line it reads is checked as it arrives. */
class RawClient {
  readonly received: Message[] = [];
  readonly violations: string[] = [];
  stderr = '';
  /** The id of the next request. */
  nextId = 1;
  private readonly pending = new Map<number | string, { method: string; resolve: (m: Message) => void }>();
  /** Turns whose prompt has been answered, and how many loads (which replay them) are under way. */
  private readonly answeredTurns = new Set<string>();
  private replaying = 0;
  private buffer = '';
  /** Answers to the agent's requests, by method. */
  readonly handlers = new Map<string, (params: any) => unknown>();

  constructor(
    readonly proc: ChildProcess,
    readonly home: string,
  ) {
    proc.stdout!.on('data', (d) => {
      this.buffer += d;
      let nl;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.onLine(line);
      }
    });
    proc.stderr!.on('data', (d) => (this.stderr += d));
    // Requests a killed agent never answers end with it.
    proc.on('exit', () => {
      for (const [id, { resolve }] of this.pending) resolve({ jsonrpc: '2.0', id, error: { code: 0, message: 'the agent exited' } });
      this.pending.clear();
    });
  }

  private violation(what: string, problems: string[], message: unknown): void {
    if (problems.length) this.violations.push(`${what}: ${problems.join('; ')}\n  in ${JSON.stringify(message).slice(0, 600)}`);
  }

  private onLine(line: string): void {
    let m: Message;
    try {
      m = JSON.parse(line);
    } catch {
      this.violations.push(`not JSON on stdout: ${line.slice(0, 200)}`);
      return;
    }
    this.received.push(m);
    const pending = m.method === undefined && m.id !== undefined && m.id !== null ? this.pending.get(m.id) : undefined;
    const what = m.method ?? (pending ? `${pending.method} ${'error' in m ? 'error' : 'result'}` : `response to ${JSON.stringify(m.id)}`);
    this.violation(what, acpOutgoingProblems(m, pending?.method), m);
    if (m.method !== undefined) {
      // ACP (prompt-turn, cancellation): a turn's updates are all sent before its prompt is answered.
      const turnId = m.method === 'session/update' ? m.params?.update?._meta?.troupe?.turnId : undefined;
      if (turnId && this.answeredTurns.has(turnId) && this.replaying === 0) this.violations.push(`an update of ${turnId} after its prompt was answered: ${line.slice(0, 300)}`);
      if (m.id !== undefined) void this.answer(m);
      return;
    }
    // Only an unparseable request is answered with id null; the tests below say which.
    if ('error' in m) this.violation(what, errorProblems(m), m);
    if (!pending) return;
    this.pending.delete(m.id!);
    if (pending.method === 'session/load') this.replaying--;
    const turnId = m.result?._meta?.troupe?.turnId ?? m.error?.data?.turnId;
    if (pending.method === 'session/prompt' && turnId) this.answeredTurns.add(turnId);
    pending.resolve(m);
  }

  private async answer(m: Message): Promise<void> {
    const handler = this.handlers.get(m.method!);
    // A handler that throws is answered as the SDK answers it (a read of a file that is not there).
    const outcome = handler
      ? await Promise.resolve()
          .then(() => handler(m.params))
          .then((result) => ({ result }), (err: unknown) => ({ error: { code: -32603, message: 'Internal error', data: { details: String((err as Error)?.message ?? err) } } }))
      : { error: { code: -32601, message: 'not here' } };
    const reply = { jsonrpc: '2.0', id: m.id, ...outcome };
    this.proc.stdin!.write(JSON.stringify(reply) + '\n');
  }

  /** Sends a request and resolves with its raw response (result or error). */
  request(method: string, params: unknown, id: number | string = this.nextId++): Promise<Message> {
    if (method === 'session/load') this.replaying++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} ${JSON.stringify(id)}; stderr: ${this.stderr.slice(-1000)}`)), 15_000);
      this.pending.set(id, { method, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      this.proc.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  notify(method: string, params: unknown): void {
    this.proc.stdin!.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }

  /** A request that must succeed: its result. */
  async ok(method: string, params: unknown): Promise<any> {
    const m = await this.request(method, params);
    assert.ok('result' in m, `${method} failed: ${JSON.stringify(m.error)}; stderr: ${this.stderr.slice(-1000)}`);
    return m.result;
  }

  /** A request that must fail: its error. */
  async fails(method: string, params: unknown, code: keyof typeof ERROR_CODES): Promise<any> {
    const m = await this.request(method, params);
    assert.ok('error' in m, `${method} ${JSON.stringify(params)} should fail with ${code}`);
    assert.equal(m.error.data?.code, code, `${method}: ${JSON.stringify(m.error)}`);
    return m.error;
  }

  updates(sessionId: string, kind?: string): any[] {
    return this.received
      .filter((m) => m.method === 'session/update' && m.params.sessionId === sessionId && (!kind || m.params.update.sessionUpdate === kind))
      .map((m) => m.params.update);
  }

  async until(predicate: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** What spec/errors.md adds to an ACP error (checked by acpOutgoingProblems): a data.code matching the code. */
function errorProblems(m: Message): string[] {
  const problems: string[] = [];
  const { code, data } = m.error ?? {};
  if (typeof data?.code !== 'string') problems.push('data.code is not a string');
  else if (!(data.code in ERROR_CODES)) problems.push(`data.code ${data.code} is not in spec/errors.md`);
  else if (ERROR_CODES[data.code as keyof typeof ERROR_CODES].rpc !== code) problems.push(`data.code ${data.code} goes with ${ERROR_CODES[data.code as keyof typeof ERROR_CODES].rpc}, not ${code}`);
  return problems;
}

function start(script: unknown, home = mkdtempSync(join(tmpdir(), 'troupe-home-'))): RawClient {
  const scriptPath = join(home, 'script.json');
  writeFileSync(scriptPath, JSON.stringify(script));
  const env = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_SCRIPT: scriptPath, TROUPE_MODEL: 'scripted/replay' };
  return new RawClient(spawn(process.execPath, [BIN, 'acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] }), home);
}

const text = (t: string) => [{ type: 'text', text: t }];

test('every answer, update and request of troupe acp conforms to the ACP v1 schema (the SDK\'s zod schemas)', async (t) => {
  const plan = { entries: [{ content: 'Read a.txt', priority: 'high', status: 'completed' }, { content: 'Write b.txt', priority: 'medium', status: 'in_progress' }] };
  const c = start({
    replies: [
      // After the tool results of the first turn, and of the editor-terminal turn.
      [{ text: 'Done: read, wrote, failed once.' }, { usage: { input: 120, output: 9 } }],
      [{ text: 'Ran it.' }],
      {
        when: 'work please',
        items: [
          { thought: 'Plan: read, then write.' },
          { text: 'Reading and writing.' },
          { tool_call: { name: 'update_plan', input: plan } },
          { tool_call: { name: 'read_file', input: { path: 'a.txt' } } },
          { tool_call: { name: 'read_file', input: { path: 'missing.txt' } } },
          { tool_call: { name: 'write_file', input: { path: 'b.txt', content: 'written\n' } } },
        ],
      },
      { when: 'hang please', items: [{ text: 'partial' }, { hang: true }] },
      { when: 'run please', items: [{ tool_call: { name: 'run_command', input: { command: 'echo hi' } } }] },
      { when: 'ask then cancel', items: [{ tool_call: { name: 'write_file', input: { path: 'c.txt', content: 'never\n' } } }] },
      { when: 'fail please', items: [{ error: { kind: 'overloaded', message: 'too busy' } }] },
      { when: 'blocks please', items: [{ text: 'Seen.' }] },
    ],
  });
  t.after(() => c.close());
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  writeFileSync(join(cwd, 'a.txt'), 'hello\n');

  // The editor: permission prompts allowed once, its buffers (the disk) and a pretend terminal.
  let hold: ((answer: unknown) => void) | undefined;
  c.handlers.set('session/request_permission', (p) => {
    const allow = { outcome: { outcome: 'selected', optionId: p.options.find((o: any) => o.kind === 'allow_once').optionId } };
    return p.toolCall.rawInput?.path === 'c.txt' ? new Promise((resolve) => (hold = resolve)) : allow;
  });
  c.handlers.set('fs/read_text_file', (p) => ({ content: readFileSync(p.path, 'utf8') }));
  c.handlers.set('fs/write_text_file', (p) => (writeFileSync(p.path, p.content), {}));
  c.handlers.set('terminal/create', () => ({ terminalId: 'term_1' }));
  c.handlers.set('terminal/wait_for_exit', () => ({ exitCode: 0, signal: null }));
  c.handlers.set('terminal/output', () => ({ output: 'hi\n', truncated: false, exitStatus: { exitCode: 0, signal: null } }));
  c.handlers.set('terminal/kill', () => ({}));
  c.handlers.set('terminal/release', () => ({}));

  // Before initialize, and a line that is not JSON: errors the SDK makes (id null for the second).
  await c.fails('session/list', {}, 'invalid_request');
  c.proc.stdin!.write('{not json\n');
  await c.until(() => c.received.some((m) => m.id === null && m.error?.code === -32700), 'the parse error');
  // A version troupe does not speak is answered with the one it does.
  assert.equal((await c.ok('initialize', { protocolVersion: 99, clientCapabilities: {} })).protocolVersion, 1);
  const init = await c.ok('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true, session: { notices: {}, compaction: {} } }, clientInfo: { name: 'conformance', version: '1' } });
  assert.equal(init.protocolVersion, 1);
  const caps = init.agentCapabilities;
  // A string id is answered with that id.
  assert.equal((await c.request('session/list', {}, 'list-1')).id, 'list-1');

  const created = await c.ok('session/new', { cwd, mcpServers: [] });
  const sessionId = created.sessionId;
  await c.until(() => c.updates(sessionId, 'available_commands_update').length > 0, 'the slash commands');

  // A turn that streams a thought and text, publishes a plan, reads (no permission, through the
  // editor), fails a read, and writes (permission asked, through the editor).
  const turn = await c.ok('session/prompt', { sessionId, prompt: text('work please') });
  assert.equal(turn.stopReason, 'end_turn');
  const kinds = new Set(c.updates(sessionId).map((u) => u.sessionUpdate));
  for (const kind of ['agent_thought_chunk', 'agent_message_chunk', 'plan', 'tool_call', 'tool_call_update']) assert.ok(kinds.has(kind), `a ${kind} update`);
  assert.ok(c.received.some((m) => m.method === 'session/request_permission'), 'write_file asked for permission');
  assert.ok(c.received.some((m) => m.method === 'fs/read_text_file') && c.received.some((m) => m.method === 'fs/write_text_file'), 'the editor\'s buffers were used');
  assert.ok(c.updates(sessionId, 'tool_call_update').some((u) => u.status === 'failed'), 'a failed tool call');

  // A command in the editor's terminal (bypass: no prompt), then set back through the config option.
  await c.ok('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('run please') })).stopReason, 'end_turn');
  assert.ok(c.received.some((m) => m.method === 'terminal/create'), 'the command ran in the editor\'s terminal');
  const options = await c.ok('session/set_config_option', { sessionId, configId: 'mode', value: 'default' });
  assert.equal(options.configOptions.find((o: any) => o.id === 'mode').currentValue, 'default');
  const model = created.configOptions.find((o: any) => o.id === 'model');
  await c.ok('session/set_config_option', { sessionId, configId: 'model', value: model.currentValue });

  // A turn cancelled mid-stream.
  const hanging = c.request('session/prompt', { sessionId, prompt: text('hang please') });
  await c.until(() => c.updates(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'partial'), 'the partial text');
  c.notify('session/cancel', { sessionId });
  assert.equal((await hanging).result?.stopReason, 'cancelled');

  // One prompt withdrawn by the client ($/cancel_request), with another queued behind it.
  const withdrawnId = c.nextId;
  const withdrawn = c.request('session/prompt', { sessionId, prompt: text('hang please') });
  const queued = c.request('session/prompt', { sessionId, prompt: text('hang please') });
  await c.until(() => c.updates(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'partial').length === 2, 'the withdrawn turn');
  c.notify('$/cancel_request', { requestId: withdrawnId });
  const answer = await withdrawn;
  assert.ok(answer.result?.stopReason === 'cancelled' || answer.error?.code === -32800, JSON.stringify(answer));
  await c.until(() => c.updates(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'partial').length === 3, 'the queued turn');
  c.notify('session/cancel', { sessionId });
  assert.equal((await queued).result?.stopReason, 'cancelled');

  // A turn cancelled while its permission prompt waits: the prompt is withdrawn ($/cancel_request),
  // and answered cancelled as ACP has a client do.
  const asking = c.request('session/prompt', { sessionId, prompt: text('ask then cancel') });
  await c.until(() => hold !== undefined, 'the held permission prompt');
  c.notify('session/cancel', { sessionId });
  await c.until(() => c.received.some((m) => m.method === '$/cancel_request'), 'the withdrawn permission prompt');
  hold!({ outcome: { outcome: 'cancelled' } });
  assert.equal((await asking).result?.stopReason, 'cancelled');

  // Every kind of prompt content (replayed by session/load below), a compaction (compaction_update),
  // and a failed turn (a JSON-RPC error naming the session and turn, and a notice).
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const blocks = [
    ...text('blocks please'),
    { type: 'image', data: png, mimeType: 'image/png' },
    { type: 'resource_link', uri: `file://${cwd}/a.txt`, name: 'a.txt', mimeType: 'text/plain', size: 6 },
    { type: 'resource', resource: { uri: `file://${cwd}/a.txt`, text: 'hello\n', mimeType: 'text/plain' } },
    { type: 'resource', resource: { uri: `file://${cwd}/a.bin`, blob: 'AAEC', mimeType: 'application/octet-stream' } },
  ];
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: blocks })).stopReason, 'end_turn');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('/compact') })).stopReason, 'end_turn');
  assert.ok(c.updates(sessionId, 'compaction_update').some((u) => u.status === 'completed'), 'the compaction\'s updates');
  // (Last: the failed prompt is joined with the next one, as spec/scripted-model.md says.)
  const failed = await c.fails('session/prompt', { sessionId, prompt: text('fail please') }, 'provider_overloaded');
  assert.equal(failed.data.sessionId, sessionId);
  assert.match(failed.data.turnId, /^turn_/);
  assert.ok(c.updates(sessionId, 'notice').length > 0, 'the failed turn\'s notice');

  // Listing, loading while open (replay from the engine), closing, loading from the log, resuming, forking.
  const list = await c.ok('session/list', {});
  assert.ok(list.sessions.some((s: any) => s.sessionId === sessionId));
  await c.ok('session/list', { cwd });
  const before = c.updates(sessionId).length;
  await c.ok('session/load', { sessionId, cwd, mcpServers: [] });
  assert.ok(c.updates(sessionId, 'user_message_chunk').length > 0 && c.updates(sessionId).length > before + 5, 'the history was replayed');
  assert.ok(caps.sessionCapabilities.close && caps.sessionCapabilities.resume, 'close and resume are advertised');
  await c.ok('session/close', { sessionId });
  await c.ok('session/load', { sessionId, cwd, mcpServers: [] });
  await c.ok('session/resume', { sessionId, cwd });
  const forked = await c.ok('session/fork', { sessionId, cwd, mcpServers: [] });
  await c.ok('_troupe/session_state', { sessionId });

  // Error paths: each a JSON-RPC error with troupe's data.code (checked as it arrived).
  const unknown = 'ses_00000000000000000000000000';
  await c.fails('session/prompt', { sessionId: unknown, prompt: text('hi') }, 'session_not_found');
  await c.fails('session/load', { sessionId: unknown, cwd, mcpServers: [] }, 'session_not_found');
  await c.fails('session/resume', { sessionId: unknown, cwd }, 'session_not_found');
  await c.fails('session/close', { sessionId: unknown }, 'session_not_found');
  await c.fails('session/set_mode', { sessionId: unknown, modeId: 'plan' }, 'session_not_found');
  await c.fails('session/set_config_option', { sessionId: unknown, configId: 'mode', value: 'plan' }, 'session_not_found');
  await c.fails('session/set_mode', { sessionId, modeId: 'no-such-mode' }, 'invalid_params');
  await c.fails('session/set_config_option', { sessionId, configId: 'colour', value: 'red' }, 'invalid_params');
  await c.fails('session/load', { sessionId, cwd: tmpdir(), mcpServers: [] }, 'invalid_params');
  await c.fails('session/list', { cwd: 'relative/dir' }, 'invalid_params');
  await c.fails('session/prompt', { sessionId }, 'invalid_params'); // the SDK's own check of params
  await c.fails('session/new', { cwd: 'relative', mcpServers: [] }, 'invalid_params');
  await c.fails('session/prompt', { sessionId, prompt: text('   ') }, 'invalid_params');
  await c.fails('no/such_method', {}, 'method_not_found');
  await c.fails('session/list', { cursor: 'not-a-cursor' }, 'invalid_cursor');
  await c.fails('initialize', { clientCapabilities: {} }, 'invalid_params');
  await c.ok('session/delete', { sessionId: unknown }); // (deleting is idempotent)
  await c.fails('session/fork', { sessionId: unknown, cwd, mcpServers: [] }, 'session_not_found');
  await c.fails('_troupe/steer', { sessionId, expectedTurnId: 'turn_x', prompt: text('go') }, 'no_active_turn');
  await c.ok('session/delete', { sessionId: forked.sessionId });
  await c.fails('session/load', { sessionId: forked.sessionId, cwd, mcpServers: [] }, 'session_not_found');

  await c.close();
  assert.deepEqual(c.violations, [], `what troupe wrote that breaks the ACP schema:\n${c.violations.join('\n')}`);
});

test('after a crash, the repaired turn troupe sends on session/resume and replays on session/load conforms too', async (t) => {
  const script = {
    replies: [
      { when: 'write please', items: [{ text: 'Writing.' }, { tool_call: { name: 'write_file', input: { path: 'c.txt', content: 'x\n' } } }] },
      { when: 'hang please', items: [{ thought: 'Thinking.' }, { text: 'partial' }, { hang: true }] },
    ],
  };
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const first = start(script);
  t.after(() => first.proc.kill('SIGKILL'));
  let asked = false;
  first.handlers.set('session/request_permission', () => ((asked = true), new Promise(() => undefined)));
  await first.ok('initialize', { protocolVersion: 1, clientCapabilities: {} });
  const writing = (await first.ok('session/new', { cwd, mcpServers: [] })).sessionId;
  const hanging = (await first.ok('session/new', { cwd, mcpServers: [] })).sessionId;
  void first.request('session/prompt', { sessionId: writing, prompt: text('write please') });
  void first.request('session/prompt', { sessionId: hanging, prompt: text('hang please') });
  await first.until(() => asked && first.updates(hanging, 'agent_message_chunk').length > 0, 'both turns under way');
  const exited = new Promise((r) => first.proc.once('exit', r));
  first.proc.kill('SIGKILL');
  await exited;

  const second = start(script, first.home);
  t.after(() => second.close());
  await second.ok('initialize', { protocolVersion: 1, clientCapabilities: { session: { notices: {} } } });
  await second.ok('session/resume', { sessionId: writing, cwd });
  assert.ok(second.updates(writing, 'tool_call_update').some((u) => u.status === 'failed'), 'the interrupted tool call, failed');
  assert.ok(second.updates(writing, 'notice').length > 0, 'the interrupted turn\'s end');
  await second.ok('session/load', { sessionId: hanging, cwd, mcpServers: [] });
  assert.ok(second.updates(hanging, 'agent_message_chunk').length > 0, 'the replay');
  await second.close();
  assert.deepEqual(first.violations, [], first.violations.join('\n'));
  assert.deepEqual(second.violations, [], `what troupe wrote that breaks the ACP schema:\n${second.violations.join('\n')}`);
});

test('MCP tools, resources and prompt commands, guidance, edits and other stop reasons conform too', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const extra = mkdtempSync(join(tmpdir(), 'troupe-extra-'));
  writeFileSync(join(cwd, 'e.txt'), 'one\ntwo\n');
  const mcp = (name: string, input: Record<string, unknown> = {}) => ({ tool_call: { name: `mcp__test__${name}`, input } });
  const c = start({
    replies: [
      [{ text: 'Tools done.' }],
      [{ text: 'Edited.' }],
      { when: 'mcp please', items: [mcp('echo', { text: 'hi' }), mcp('count', { n: 2, delayMs: 5 }), mcp('fail'), { tool_call: { name: 'mcp__list_resources', input: {} } }, { tool_call: { name: 'mcp__read_resource', input: { server: 'test', uri: 'test://notes' } } }] },
      { when: 'Please greet Ada', items: [{ text: 'Hello, Ada.' }] },
      { when: 'edit please', items: [{ tool_call: { name: 'edit_file', input: { path: 'e.txt', old_string: 'two', new_string: 'three' } } }] },
      { when: 'steer me', items: [{ text: 'partial' }, { hang: true }] },
      { when: 'refuse please', items: [{ text: 'No.' }, { stop: 'refusal' }] },
      { when: 'too long please', items: [{ text: 'Cut' }, { stop: 'max_tokens' }] },
    ],
  });
  t.after(() => c.close());
  c.handlers.set('session/request_permission', (p) => ({ outcome: { outcome: 'selected', optionId: p.options.find((o: any) => o.kind === 'allow_always').optionId } }));
  await c.ok('initialize', { protocolVersion: 1, clientCapabilities: {} });
  const server = { name: 'test', command: process.execPath, args: [resolve('dist/test/support/mcp-test-server.js')], env: [] };
  const { sessionId } = await c.ok('session/new', { cwd, additionalDirectories: [extra], mcpServers: [server] });
  await c.until(() => c.updates(sessionId, 'available_commands_update').some((u) => u.availableCommands.some((a: any) => a.name.startsWith('mcp__'))), 'the MCP prompts as commands');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('mcp please') })).stopReason, 'end_turn');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('/mcp__test__greet Ada') })).stopReason, 'end_turn');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('edit please') })).stopReason, 'end_turn');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('refuse please') })).stopReason, 'refusal');
  assert.equal((await c.ok('session/prompt', { sessionId, prompt: text('too long please') })).stopReason, 'max_tokens');
  // Guidance for a running turn (shown as a user message), left undelivered when the turn is cancelled.
  const steered = c.request('session/prompt', { sessionId, prompt: text('steer me') });
  await c.until(() => c.updates(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'partial'), 'the running turn');
  const turnId = c.updates(sessionId, 'agent_message_chunk').find((u) => u.content.text === 'partial')._meta.troupe.turnId;
  await c.ok('_troupe/steer', { sessionId, expectedTurnId: turnId, prompt: text('also this') });
  await c.fails('_troupe/steer', { sessionId, expectedTurnId: 'turn_other', prompt: text('and this') }, 'turn_mismatch');
  c.notify('session/cancel', { sessionId });
  assert.equal((await steered).result?.stopReason, 'cancelled');
  assert.ok((await c.ok('session/list', {})).sessions[0].additionalDirectories?.length === 1);
  await c.ok('session/load', { sessionId, cwd, additionalDirectories: [extra], mcpServers: [server] });
  await c.close();
  assert.deepEqual(c.violations, [], `what troupe wrote that breaks the ACP schema:\n${c.violations.join('\n')}`);
});
