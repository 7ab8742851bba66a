// A session/load or session/resume naming MCP servers, withdrawn (`$/cancel_request`) while they
// start, leaves its session with no MCP server in its process (spec/tools.md §7): the ones it had
// were stopped as the request began replacing them, the ones it named are stopped too. A process
// the daemon starts for the session later (after a crash, or to wake it after an idle stop) resumes
// it as that: with none, not with the servers the client withdrew with its request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { childPidsOf, daemonWithClient, processAlive, tempDir, waitFor } from '../../support/daemon.js';
import { hungServer } from '../../support/hung-mcp-server.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const script = {
  replies: [
    { when: 'env', items: [{ tool_call: { name: 'mcp__test__env', input: {} } }] },
    // The tool's result (or its failure) is answered by the unkeyed replies (each process reads the script anew).
    [{ text: 'seen' }],
    [{ text: 'seen' }],
  ],
};
// Long enough that the hung server is still starting when the request is withdrawn.
const START_TIMEOUT_MS = '10000';
const gone = (pid: number) => waitFor(`process ${pid} to exit`, () => !processAlive(pid), 10_000);

for (const method of ['session/load', 'session/resume'] as const) {
  for (const next of ['crash', 'idle stop'] as const) {
    test(`${method} withdrawn while its servers start: the process started after a${next === 'crash' ? ' crash' : 'n idle stop'} runs none of the session's servers`, async (t) => {
      const { d, c } = await daemonWithClient(t, next === 'crash' ? 'http' : 'ws', {
        script,
        env: { TROUPE_MCP_START_TIMEOUT_MS: START_TIMEOUT_MS },
        ...(next === 'idle stop' ? { args: ['--idle-ms', '300'] } : {}),
      });
      const cwd = tempDir();
      // The session's server writes its pid each time it starts: one started again shows there.
      const pidFile = join(cwd, 'test.pid');
      const first = { name: 'test', command: process.execPath, args: [SERVER], env: [{ name: 'MCP_TEST_PID_FILE', value: pidFile }] };
      const sessionId = ((await c.agent.request('session/new', { cwd, mcpServers: [first] })) as { sessionId: string }).sessionId;
      const firstPid = Number(readFileSync(pidFile, 'utf8'));
      const hung = hungServer(cwd);
      const cancel = new AbortController();
      const withdrawn = c.agent.request(method, { sessionId, cwd, mcpServers: [hung.server] }, { cancellationSignal: cancel.signal }).then((r) => r, (e) => e);
      const hungPid = await hung.pid();
      t.after(() => processAlive(hungPid) && process.kill(hungPid, 'SIGKILL'));
      cancel.abort();
      const outcome: any = await withdrawn;
      assert.deepEqual([outcome.code, outcome.data?.code], [-32800, 'request_cancelled'], JSON.stringify(outcome));
      // The process has no server of the session now: the one it had and the one the request named are stopped.
      await gone(firstPid);
      await gone(hungPid);
      const before = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
      if (next === 'crash') {
        process.kill(before, 'SIGKILL');
        await waitFor('the restarted child', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.restarts === 1);
      } else await waitFor('the child stopped idle', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.state === 'idleStopped');
      // A turn runs in the next process, once it has resumed the session: the model's call of the
      // server's tool finds no such tool, and no server of the session was started again.
      assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
      const call = c.updatesFor(sessionId, 'tool_call_update').at(-1);
      assert.equal(call.status, 'failed', `the withdrawn servers are not the session's: ${JSON.stringify(call.rawOutput)}`);
      const after = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
      assert.notEqual(after, before);
      assert.deepEqual(childPidsOf(after), [], 'the next process runs no MCP server');
      assert.equal(Number(readFileSync(pidFile, 'utf8')), firstPid, 'the server the session had before the withdrawn request never started again');
    });
  }
}
