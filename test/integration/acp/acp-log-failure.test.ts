// A session whose event log cannot be written (a full disk; here the kernel's file-size limit, set
// on the real agent process with prlimit, makes its writes fail with EFBIG) stops with a typed
// error, and the agent process goes on serving its other sessions. Once the disk takes writes
// again, the session opens again from its log with its history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import type { AgentEvent } from '../../../src/core/events.js';

/** Larger than a new session's log, smaller than one long reply's (2,000 chunks of ~60 bytes). */
const FILE_SIZE_LIMIT = 64 * 1024;
const longReply = Array.from({ length: 2000 }, (_, i) => ({ text: `chunk ${i} of a reply longer than the file size limit. ` }));
const script = { replies: [{ when: 'long', items: longReply }, { when: 'short', items: [{ text: 'a short answer' }] }] };

async function eventsOf(home: string, sessionId: string): Promise<AgentEvent[]> {
  const log = await FileEventLog.open(sessionLogPath(sessionsDir(home), sessionId), { readOnly: true });
  try {
    return (await log.readAfter(0, { limit: 100_000 })).events;
  } finally {
    await log.close();
  }
}

test('a session whose log cannot be written fails with log_write_failed, the process serves its other sessions, and the session resumes from its log once writes work', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const agent = AcpChild.start({ script, under: ['prlimit', `--fsize=${FILE_SIZE_LIMIT}:unlimited`] });
  t.after(() => agent.close());
  await agent.initialize();
  const full = await agent.newSession(cwd);
  const other = await agent.newSession(cwd);

  const failed: any = await agent.prompt(full, 'long').catch((e) => e);
  assert.equal(failed?.code, -32026, JSON.stringify(failed));
  assert.equal(failed.data?.code, 'log_write_failed');
  assert.match(failed.message, /event log cannot be written: EFBIG/);

  // The process is alive and its other session works.
  assert.equal(agent.proc.exitCode, null);
  assert.equal((await agent.prompt(other, 'short')).stopReason, 'end_turn');

  // The failed session is refused the same way while its log still cannot take the turn.
  const again: any = await agent.prompt(full, 'long').catch((e) => e);
  assert.equal(again?.data?.code, 'log_write_failed', JSON.stringify(again));

  // Nor can its writer's lock be made (a full disk takes not even a small file): still that error,
  // not session_not_found (a client would give the session up for gone).
  execFileSync('prlimit', ['--pid', String(agent.proc.pid), '--fsize=1:unlimited']);
  const locked: any = await agent.prompt(full, 'short').catch((e) => e);
  assert.equal(locked?.data?.code, 'log_write_failed', JSON.stringify(locked));

  // The disk takes writes again: the session opens from its log and goes on.
  execFileSync('prlimit', ['--pid', String(agent.proc.pid), '--fsize=unlimited:unlimited']);
  assert.equal((await agent.prompt(full, 'short')).stopReason, 'end_turn');
  assert.equal((await agent.prompt(full, 'long')).stopReason, 'end_turn');
  await agent.agent.request('session/close', { sessionId: full });

  // Its log: every turn that started has ended, the interrupted ones as errors; the last two completed.
  const events = await eventsOf(agent.home, full);
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'contiguous seqs');
  const started = events.filter((e) => e.type === 'turn_started').map((e) => (e as { turnId: string }).turnId);
  const completed = events.filter((e) => e.type === 'turn_completed') as (AgentEvent & { turnId: string; stopReason: string })[];
  assert.deepEqual(completed.map((e) => e.turnId), started);
  assert.deepEqual(completed.slice(-2).map((e) => e.stopReason), ['end_turn', 'end_turn']);
  // Ended, once the log took writes again, with the error that stopped them: not as a crash.
  assert.ok(completed.length > 2);
  assert.deepEqual(
    completed.slice(0, -2).map((e) => [e.stopReason, (e as { errorCode?: string }).errorCode]),
    completed.slice(0, -2).map(() => ['error', 'log_write_failed']),
  );
  assert.equal(events.filter((e) => e.type === 'agent_message_chunk').length > longReply.length, true, 'the completed long reply is all there');

  // A new session whose log cannot even be created is refused, and leaves no file behind.
  const logsBefore = readdirSync(sessionsDir(agent.home)).filter((f) => f.endsWith('.log')).sort();
  execFileSync('prlimit', ['--pid', String(agent.proc.pid), '--fsize=16:unlimited']);
  const refused: any = await agent.agent.request('session/new', { cwd, mcpServers: [] }).catch((e) => e);
  assert.equal(refused?.data?.code, 'log_write_failed', JSON.stringify(refused));
  assert.deepEqual(readdirSync(sessionsDir(agent.home)).filter((f) => f.endsWith('.log')).sort(), logsBefore);
  assert.deepEqual(agent.schemaErrors, []);
});
