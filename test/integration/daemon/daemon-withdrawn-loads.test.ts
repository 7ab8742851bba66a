// A client's `$/cancel_request` for its session/load while the load waits in the daemon for another
// load of the session (loads go to a session's process one at a time: src/daemon/relay/load-turns.ts):
// answered -32800 (request_cancelled) at once, never sent to the process, and the client is sent the
// session's updates from then on, as after a failed load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, printDaemonIfFailed, tempDir } from '../../support/daemon.js';

const script = { replies: [{ when: 'hello', items: [{ text: 'hello back' }] }] };

for (const [first, second] of [['http', 'ws'], ['ws', 'http']] as const) {
  test(`${second}: a load withdrawn while it waits for another's turn is answered cancelled, and its client follows the session from then on`, async (t) => {
    // The session's process is held stopped (SIGSTOP) while the first load is in it: no heartbeat
    // timeout may take it for hung meanwhile.
    const d = await Daemon.start({ script, args: ['--heartbeat-timeout-ms', '600000'] });
    printDaemonIfFailed(t, d);
    t.after(() => d.stop());
    const a = d.connect(first);
    const b = d.connect(second);
    t.after(() => (a.close(), b.close()));
    await a.init();
    await b.init();
    const cwd = tempDir();
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    const { pid } = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
    process.kill(pid, 'SIGSTOP');
    try {
      const aLoad = a.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
      // Answered by the daemon after it took A's load (a connection's messages are taken in order): the load is in flight.
      await a.agent.request('session/list', {});
      const cancel = new AbortController();
      const bLoad = b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }, { cancellationSignal: cancel.signal });
      cancel.abort();
      // B's cancel was taken once this is answered; the process may go on then (a load the cancel
      // missed would be answered with a result now).
      await b.agent.request('session/list', {});
      process.kill(pid, 'SIGCONT');
      await assert.rejects(bLoad, (e: any) => e.code === -32800 && e.data?.code === 'request_cancelled');
      await aLoad;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // B is not held for a load that will never come: it is sent A's next turn.
    const before = b.updatesFor(sessionId, 'agent_message_chunk').length;
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    await b.until(() => b.updatesFor(sessionId, 'agent_message_chunk').length > before, "B sent A's next turn");
    assert.equal(b.updatesFor(sessionId, 'user_message_chunk').length, 1, 'B was sent none of the history it withdrew its load of, only the new prompt');
  });
}
