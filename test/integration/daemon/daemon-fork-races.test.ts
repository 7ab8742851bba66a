// A fork through the daemon, used at once. The source session's child makes the fork and then
// unloads it; the index learns of it from that child's control channel, which may lag the fork's
// answer. A prompt sent as soon as the answer came was answered session_not_found, and a delete was
// refused session_locked (the source's child still held the log) or succeeded without deleting
// anything (the index did not know the fork yet). Found with a random request mix against a daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonWithClients, tempDir, waitFor, type Daemon } from '../../support/daemon.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';

const ROUNDS = 15;

test('a fork is usable at once: a prompt sent on its answer is served, a delete deletes it', { timeout: 120_000 }, async (t) => {
  const { b: ws } = await daemonWithClients(t, { script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }, ...Array.from({ length: 2 * ROUNDS }, () => [{ text: 'again' }])] } });
  const cwd = tempDir();
  const source = (await ws.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ws.agent.request('session/prompt', { sessionId: source, prompt: [{ type: 'text', text: 'hi' }] });
  for (let round = 0; round < ROUNDS; round++) {
    const prompted = ((await ws.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
    const answer: any = await ws.agent.request('session/prompt', { sessionId: prompted, prompt: [{ type: 'text', text: 'go on' }] }).catch((e: any) => e);
    assert.equal(answer?.stopReason, 'end_turn', `round ${round}: ${JSON.stringify(answer)}`);

    const deleted = ((await ws.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
    const del = await ws.agent.request('session/delete', { sessionId: deleted }).catch((e: any) => e);
    assert.deepEqual(del, {}, `round ${round}: ${JSON.stringify(del)}`);
    const load: any = await ws.agent.request('session/load', { sessionId: deleted, cwd, mcpServers: [] }).catch((e) => e);
    assert.equal(load?.data?.code, 'session_not_found', `round ${round}: the deleted fork is gone (${JSON.stringify(load)})`);
  }
  const listed = (await ws.agent.request('session/list', {})).sessions.map((s: { sessionId: string }) => s.sessionId);
  assert.equal(listed.length, 1 + ROUNDS, 'the source and the prompted forks, not the deleted ones');
});

/** The bytes of WebSocket frames the daemon has received (troupe_acp_bytes_total). */
async function wsReceived(d: Daemon): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  const samples = parsePrometheusText(text).get('troupe_acp_bytes_total')!.samples;
  return samples.find((s) => s.labels.transport === 'ws' && s.labels.direction === 'received')!.value;
}

test("a request for a fork its source's process has not unloaded yet holds back its connection's later messages, and a $/cancel_request sent meanwhile withdraws it (-32800)", async (t) => {
  // The source's process answers the fork's unload (a session/close, answered {}) only once the test
  // removes this file (test/support/held-empty-answers.ts): the fork's messages wait until then.
  const hold = join(tempDir(), 'hold');
  const preload = new URL('../../support/held-empty-answers.js', import.meta.url).href;
  const script = { replies: [{ when: 'hi', items: [{ text: 'hello' }] }, { when: 'go on', items: [{ text: 'went on' }] }] };
  const { d, b: ws } = await daemonWithClients(t, { script, env: { NODE_OPTIONS: `--import=${preload}`, TROUPE_HOLD_EMPTY_ANSWERS: hold } });
  t.after(() => rmSync(hold, { force: true }));
  const cwd = tempDir();
  const source = (await ws.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ws.agent.request('session/prompt', { sessionId: source, prompt: [{ type: 'text', text: 'hi' }] });
  writeFileSync(hold, '');
  const fork = ((await ws.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] })) as { sessionId: string }).sessionId;

  const before = await wsReceived(d);
  const answered: string[] = [];
  const cancel = new AbortController();
  const promptParams = { sessionId: fork, prompt: [{ type: 'text' as const, text: 'go on' }] };
  const prompt = ws.agent.request('session/prompt', promptParams, { cancellationSignal: cancel.signal }).then(
    (r) => (answered.push('prompt'), r),
    (e) => (answered.push('prompt'), e),
  );
  cancel.abort();
  const list = ws.agent.request('session/list', {}).then(() => void answered.push('list'));
  // The daemon has taken the three frames once it counts their bytes (the SDK writes each message as
  // {jsonrpc, id, method, params}; ids of one digit are the fewest bytes they can have): only then may
  // the fork's unload be answered. (A prompt, a cancel and a list of the next ids need more than the
  // prompt and the cancel alone.)
  const frames = [
    { jsonrpc: '2.0', id: 0, method: 'session/prompt', params: promptParams },
    { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 0 } },
    { jsonrpc: '2.0', id: 0, method: 'session/list', params: {} },
  ];
  const least = frames.reduce((n, f) => n + JSON.stringify(f).length, 0);
  await waitFor('the daemon took the prompt, its cancel and the list', async () => (await wsReceived(d)) - before >= least);
  rmSync(hold);

  const outcome: any = await prompt;
  assert.equal(outcome?.code, -32800, `the cancel found the prompt before its process had it: ${JSON.stringify(outcome)}`);
  assert.equal(outcome?.data?.code, 'request_cancelled');
  await list;
  assert.deepEqual(answered, ['prompt', 'list'], 'in the order they were sent: the list waited for the prompt');
  // The fork serves its next prompt.
  assert.equal(((await ws.agent.request('session/prompt', promptParams)) as { stopReason: string }).stopReason, 'end_turn');
});
