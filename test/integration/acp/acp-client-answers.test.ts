// The agent's requests that an editor's machinery answers (a file read or write through its buffers, a
// terminal's creation or output) are waited for a bounded time (TROUPE_CLIENT_ANSWER_TIMEOUT_MS): an
// editor that never answers one fails that tool call, `tool_timeout`, and the turn goes on; its late
// answer changes nothing (a terminal it makes late is released). A cancel ends the wait at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });
const workspace = () => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  return cwd;
};
/** Generous for an editor that does answer (the other requests of a case), under a loaded machine. */
const WAIT_MS = 1500;
/** The call that makes the agent ask the editor `method`. */
const CALLS: Record<string, ReturnType<typeof call>> = {
  'fs/read_text_file': call('read_file', { path: 'a.txt' }),
  'fs/write_text_file': call('write_file', { path: 'b.txt', content: 'new\n' }),
  'terminal/create': call('run_command', { command: 'echo from-terminal; exec sleep 30' }),
  'terminal/output': call('run_command', { command: 'echo from-terminal' }),
};

async function started(method: string, env: Record<string, string> = { TROUPE_CLIENT_ANSWER_TIMEOUT_MS: String(WAIT_MS) }) {
  const c = AcpChild.start({ script: { replies: [[CALLS[method]!], [{ text: 'seen' }], [{ text: 'still here' }]] }, env });
  c.unanswered.methods.add(method);
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
  const sessionId = await c.newSession(workspace());
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  return { c, sessionId };
}

test('an editor that never answers a read, a write, a terminal/create or a terminal/output: the call fails tool_timeout naming the method and the wait, the turn goes on, and the late answer changes nothing', async (t) => {
  for (const method of Object.keys(CALLS)) {
    const { c, sessionId } = await started(method);
    t.after(() => c.close());
    assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn', method);
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.equal(done.status, 'failed', method);
    assert.equal(done.rawOutput.errorCode, 'tool_timeout', method);
    const unanswered = `the client did not answer ${method} within ${WAIT_MS} ms (TROUPE_CLIENT_ANSWER_TIMEOUT_MS), so troupe stopped waiting for it`;
    const expected = {
      'fs/read_text_file': `${unanswered}`,
      'fs/write_text_file': `${unanswered}; the editor may still make the write`,
      'terminal/create': `Could not start the command: ${unanswered}; a terminal it makes later is released`,
      'terminal/output': `(no output)\n[the command ended (exit code 0), but the client's terminal did not give its output (terminal/output: ${unanswered})]`,
    }[method];
    assert.equal(done.rawOutput.output, expected, method);
    // The model read the failure: the turn's next step ran.
    assert.ok(c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'seen'), method);
    // Withdrawn from the editor ($/cancel_request), a terminal/create too: its late answer is still heeded.
    assert.deepEqual(c.unanswered.withdrawn, [method], method);
    if (method === 'terminal/output') {
      assert.deepEqual(done.content.map((x: any) => x.type), ['terminal', 'content'], 'the terminal stays in the call, the reason after it');
      await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
    }
    // The editor answers at last: a terminal made now runs a command nobody waits for, and is released.
    c.unanswered.answerAll();
    if (method === 'terminal/create') {
      await c.until(() => c.terminalCalls.includes('release term_1') && c.terminalEnded('term_1'), 'the late terminal released, its command ended');
      assert.deepEqual(c.terminalCalls, ['create term_1', 'release term_1']);
    }
    assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn', `${method}: the agent goes on`);
    assert.equal(c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed').length, 1, `${method}: the late answer changed no call`);
    assert.deepEqual(c.schemaErrors, [], method);
    assert.equal(await c.close(), 0, method);
  }
});

test('session/cancel while the editor holds a read or a terminal/create (the default wait, 30 s): the turn ends cancelled at once, the request is withdrawn, and a terminal made late all the same is released', async (t) => {
  for (const method of ['fs/read_text_file', 'terminal/create']) {
    const { c, sessionId } = await started(method, {});
    t.after(() => c.close());
    const running = c.prompt(sessionId, 'go');
    await c.until(() => c.unanswered.waiting.length === 1, `${method} asked`);
    await c.agent.notify('session/cancel', { sessionId });
    assert.equal((await running).stopReason, 'cancelled', method);
    await c.until(() => c.unanswered.withdrawn.length === 1, `${method} withdrawn`);
    assert.deepEqual(c.unanswered.withdrawn, [method]);
    // The editor answers all the same (ACP lets it): a terminal made now is released.
    c.unanswered.answerAll();
    if (method === 'terminal/create') {
      await c.until(() => c.terminalCalls.includes('release term_1') && c.terminalEnded('term_1'), 'the late terminal released, its command ended');
      assert.deepEqual(c.terminalCalls, ['create term_1', 'release term_1'], 'nothing else asked of it');
    }
    assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn', method);
    assert.deepEqual(c.schemaErrors, [], method);
    assert.equal(await c.close(), 0, method);
  }
});

test('a TROUPE_CLIENT_ANSWER_TIMEOUT_MS that is no whole number of milliseconds is the default, said once on stderr however many sessions open', async (t) => {
  const c = AcpChild.start({ script: { replies: [[{ text: 'one' }], [{ text: 'two' }]] }, env: { TROUPE_CLIENT_ANSWER_TIMEOUT_MS: '10s' } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true } });
  for (const text of ['first', 'second']) assert.equal((await c.prompt(await c.newSession(workspace()), text)).stopReason, 'end_turn');
  assert.equal(await c.close(), 0);
  const warnings = c.stderr.split('\n').filter((l) => l.includes('TROUPE_CLIENT_ANSWER_TIMEOUT_MS is not a whole number of milliseconds of 1 or more; using the default'));
  assert.equal(warnings.length, 1, c.stderr);
  assert.match(warnings[0]!, /10s/);
  assert.match(warnings[0]!, /30000/);
});
