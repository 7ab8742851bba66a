// A session/new still being served as `troupe acp` shuts down (SIGTERM) makes no session: it is
// refused capacity_exceeded, as the daemon refuses what arrives while it shuts down, and its log is
// removed before the agent exits. (Until 2026-12-07 it went on: its MCP servers stopped by the
// shutdown, the session was made without them after the shutdown had closed the sessions it knew,
// and its log and lock outlived the process, a session whose process was exiting.) A turn the stop
// cuts off says so: its command was recorded "Cancelled by the user while running" until 2026-12-07.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { processAlive } from '../../support/daemon.js';
import { hungServer } from '../../support/hung-mcp-server.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const sessionFiles = (home: string) => (existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')).filter((n) => n.startsWith('ses_')) : []);

test('a session/new whose MCP server is starting as the agent gets SIGTERM: refused capacity_exceeded, no session log nor lock left, exit 0', async (t) => {
  // A start timeout far longer than the test: the shutdown, not the timeout, ends the start.
  const c = AcpChild.start({ env: { TROUPE_MCP_START_TIMEOUT_MS: '600000' } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const hung = hungServer(cwd);
  const answered = c.agent.request('session/new', { cwd, mcpServers: [hung.server] }).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  const pid = await hung.pid();
  t.after(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
  assert.equal(sessionFiles(c.home).filter((n) => n.endsWith('.log')).length, 1, "the new session's log is made before its servers start");
  const exited = new Promise((resolve) => c.proc.once('exit', resolve));
  c.proc.kill('SIGTERM');
  assert.equal(await exited, 0, c.stderr);
  const outcome = (await answered) as { result?: unknown; error?: { code?: number; data?: { code?: string } } };
  assert.deepEqual([outcome.error?.code, outcome.error?.data?.code], [-32052, 'capacity_exceeded'], JSON.stringify(outcome));
  assert.deepEqual(sessionFiles(c.home), [], 'no session log nor lock is left');
  assert.equal(processAlive(pid), false, 'its server stopped before the agent exited');
});

test('a command the agent\'s own stop cuts off (SIGTERM, SIGHUP, or the end of its input) is recorded as cut off by that, not as cancelled by the user', async (t) => {
  const script = { replies: [{ when: 'run', items: [{ tool_call: { name: 'run_command', input: { command: 'touch started; sleep 1000' } } }] }] };
  // SIGHUP: the terminal the agent runs in closed; until 2026-12-07 it died of it, its turn never completed in its log.
  for (const [how, cause] of [['SIGTERM', 'the agent is shutting down'], ['SIGHUP', 'the agent is shutting down'], ['stdin', 'the agent is stopping: its input ended']] as const) {
    const c = AcpChild.start({ script });
    t.after(() => c.close());
    await c.initialize();
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
    const sessionId = await c.newSession(cwd);
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    const prompt = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run' }] }).catch((e) => e);
    await c.until(() => existsSync(join(cwd, 'started')), 'the command running');
    if (how !== 'stdin') {
      const exited = new Promise((resolve) => c.proc.once('exit', resolve));
      c.proc.kill(how);
      assert.equal(await exited, 0, c.stderr);
    } else {
      c.proc.stdin!.end();
      await prompt;
      assert.equal(await c.close(), 0, c.stderr);
    }
    const { events } = (await readLogFile(sessionLogPath(sessionsDir(c.home), sessionId))) as { events: any[] };
    const call = events.find((e) => e.type === 'tool_call_updated' && e.status === 'failed');
    const end = events.find((e) => e.type === 'turn_completed');
    assert.deepEqual([how, call?.output, end?.message], [how, `Cancelled while running: ${cause}.`, `cancelled: ${cause}`]);
  }
});
