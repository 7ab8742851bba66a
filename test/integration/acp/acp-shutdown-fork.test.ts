// A session/fork still being served as `troupe acp` shuts down is either made whole or not at all:
// on SIGTERM it is refused capacity_exceeded and leaves no log (as a session/new is,
// acp-shutdown-session-new.test.ts); at stdin's end it is answered (every request read before the
// end is), its log holding the source's history and the index listing it, before the agent exits.
// Verified 2026-12-07 against the suspicion that a fork could be cut short by the exit: a fork
// reaches its log only through SessionHost.create, which the shutdown waits for and which refuses
// once the shutdown has begun (make-session.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { processAlive } from '../../support/daemon.js';
import { hungServer } from '../../support/hung-mcp-server.js';
import { readLogFile } from '../../../src/store/index.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };
const sessionFiles = (home: string) => (existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')).filter((n) => n.startsWith('ses_')).sort() : []);
const indexed = (home: string): string[] => JSON.parse(readFileSync(join(home, 'sessions', 'index.json'), 'utf8')).sessions.map((s: { id: string }) => s.id).sort();
const settled = (p: Promise<any>) => p.then((result) => ({ result, error: undefined }), (error) => ({ result: undefined, error }));

/** An agent with one session that has had a turn, and the hung MCP server of its cwd. */
async function agentWithSession(t: { after(f: () => unknown): void }) {
  // A start timeout far longer than the test: the shutdown, not the timeout, ends the start.
  const c = AcpChild.start({ script, env: { TROUPE_MCP_START_TIMEOUT_MS: '600000' } });
  t.after(() => c.close());
  await c.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const { sessionId } = await c.agent.request('session/new', { cwd, mcpServers: [] });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  const hung = hungServer(cwd);
  const hungPid = async () => {
    const pid = await hung.pid();
    t.after(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
    return pid;
  };
  return { c, cwd, sessionId, hung: hung.server, hungPid, exited: () => new Promise((resolve) => c.proc.once('exit', resolve)) };
}

test('a session/fork whose MCP server is starting as the agent gets SIGTERM: refused capacity_exceeded, no log of it left, exit 0', async (t) => {
  const { c, cwd, sessionId, hung, hungPid, exited } = await agentWithSession(t);
  const before = sessionFiles(c.home);
  const forked = settled(c.agent.request('session/fork', { sessionId, cwd, mcpServers: [hung] }));
  await hungPid();
  const exit = exited();
  c.proc.kill('SIGTERM');
  assert.equal(await exit, 0, c.stderr);
  const { error } = await forked;
  assert.deepEqual([error?.code, error?.data?.code], [-32052, 'capacity_exceeded'], JSON.stringify(error));
  assert.deepEqual(sessionFiles(c.home), before.filter((n) => n.endsWith('.log')), "only the source's log: no fork's, no lock");
  assert.deepEqual(indexed(c.home), [sessionId]);
});

test("a session/fork waiting behind its source's load as stdin ends: answered, its log whole and in the index, before the agent exits", async (t) => {
  const { c, cwd, sessionId, hung, hungPid, exited } = await agentWithSession(t);
  // The load waits for its server's start; the fork (every request for the session) waits for the load.
  const loaded = settled(c.agent.request('session/load', { sessionId, cwd, mcpServers: [hung] }));
  await hungPid();
  const forked = settled(c.agent.request('session/fork', { sessionId, cwd, mcpServers: [] }));
  // A request sent after the fork, answered: the agent has read the fork's line, which came before.
  await c.agent.request('session/list', {});
  const exit = exited();
  c.proc.stdin!.end();
  assert.equal(await exit, 0, c.stderr);
  assert.equal((await loaded).error, undefined);
  const { result, error } = await forked;
  assert.equal(error, undefined, String(error));
  const forkId: string = result.sessionId;
  assert.deepEqual(indexed(c.home), [sessionId, forkId].sort());
  assert.deepEqual(sessionFiles(c.home), [`${sessionId}.log`, `${forkId}.log`].sort(), 'no lock left');
  const source = (await readLogFile(join(c.home, 'sessions', `${sessionId}.log`))).events;
  const fork = (await readLogFile(join(c.home, 'sessions', `${forkId}.log`))).events;
  assert.equal(fork[0]!.type, 'session_created');
  assert.deepEqual((fork[0] as { forkedFrom?: unknown }).forkedFrom, { sessionId, throughSeq: source.at(-1)!.seq });
  assert.deepEqual(fork.slice(1).map((e) => e.type), source.slice(1).map((e) => e.type), "the source's settled history, whole");
});
