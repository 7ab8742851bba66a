// session/load replays straight from a log file: the same updates the live projection gives, in
// order (the first through the SDK, the rest as ready-made lines behind it), and nothing at all for
// a log that needs the engine first (an interrupted turn, a torn tail, another session's file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { isTroupeError } from '../../../src/core/errors.js';
import type { AgentEvent, AgentEventInput } from '../../../src/core/events.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile } from '../../../src/store/log-file.reader.js';
import { replayLogFile, UpdateReplay } from '../../../src/acp/session-replay.js';
import { projectEvent } from '../../../src/acp/update.projection.js';
import { chunk, sessionCreated, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

const SID = 'ses_replay';
const CWD = '/work/project';
const caps = { notices: false, compaction: false };

/** A client that records what the SDK path would send, and a line writer that records the lines. */
function recorder() {
  const sent: { via: 'sdk' | 'lines'; params: acp.SessionNotification }[] = [];
  const client = {
    notify: async (method: string, params: acp.SessionNotification) => {
      assert.equal(method, 'session/update');
      sent.push({ via: 'sdk', params });
    },
  } as unknown as acp.AgentContext;
  const writeLines = async (text: string) => {
    assert.ok(text.endsWith('\n'));
    for (const line of text.slice(0, -1).split('\n')) {
      const msg = JSON.parse(line);
      assert.equal(msg.jsonrpc, '2.0');
      assert.equal(msg.method, 'session/update');
      assert.equal(msg.id, undefined);
      sent.push({ via: 'lines', params: msg.params });
    }
  };
  return { sent, client, writeLines };
}

function turn(turnId: string, prompt: string, words: number): AgentEventInput[] {
  return [
    { type: 'user_message', sessionId: SID, turnId, messageId: `msg_u_${turnId}`, content: [{ type: 'text', text: prompt }] },
    { type: 'turn_started', sessionId: SID, turnId, maxSteps: 25 },
    { type: 'agent_thought_chunk', sessionId: SID, turnId, messageId: `msg_t_${turnId}`, text: 'thinking "quoted" \\ and \n newline, ünïcødé' },
    ...Array.from({ length: words }, (_, i) => chunk(SID, `word ${i} `, turnId)),
  ];
}

async function writeLog(dir: string, inputs: AgentEventInput[]): Promise<AgentEvent[]> {
  const log = await FileEventLog.forSession(dir, SID, { create: true });
  for (const input of inputs) log.append(input);
  await log.close();
  return (await readLogFile(join(dir, `${SID}.log`))).events;
}

const completeHistory = (): AgentEventInput[] => [
  sessionCreated(SID, CWD),
  { type: 'session_configured', sessionId: SID, mode: 'plan' },
  ...turn('turn_1', 'first question', 1500),
  turnCompleted(SID, 'turn_1'),
  ...turn('turn_2', 'second question', 10),
  turnCompleted(SID, 'turn_2'),
];

test('a complete log is replayed as the live projection of every event (message and thought chunks written directly), in order, with its mode and model', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const events = await writeLog(dir, completeHistory());
    const expected = events.flatMap((e) => projectEvent(e, caps));
    const { sent, client, writeLines } = recorder();
    const summary = await replayLogFile(join(dir, `${SID}.log`), SID, CWD, new UpdateReplay(client, caps, writeLines));
    assert.ok(summary);
    assert.equal(summary.mode, 'plan');
    assert.equal(summary.model, 'scripted/demo');
    assert.deepEqual(
      sent.map((s) => s.params),
      expected,
    );
    assert.equal(sent[0]!.via, 'sdk', 'the first update goes through the SDK, behind what it already queued');
    assert.ok(sent.slice(1).every((s) => s.via === 'lines'));
    assert.ok(sent.some((s) => s.params.update.sessionUpdate === 'user_message_chunk'), 'user chunks are replayed');
    assert.ok(sent.every((s) => typeof (s.params.update as { _meta?: { troupe?: { seq?: number } } })._meta?.troupe?.seq === 'number'));

    // Without a line writer, every update goes through the SDK: same updates.
    const plain = recorder();
    await replayLogFile(join(dir, `${SID}.log`), SID, CWD, new UpdateReplay(plain.client, caps));
    assert.deepEqual(plain.sent.map((s) => s.params), expected);
    assert.ok(plain.sent.every((s) => s.via === 'sdk'));
  } finally {
    cleanup();
  }
});

test('an interrupted turn, a torn tail or another session’s file is left to the engine: nothing is sent', async () => {
  const { dir, cleanup } = tempDir();
  try {
    // The process died during turn_2: crash repair (which appends events) must run first.
    await writeLog(dir, [sessionCreated(SID, CWD), ...turn('turn_1', 'q', 3), turnCompleted(SID, 'turn_1'), ...turn('turn_2', 'q2', 3)]);
    const crashed = recorder();
    assert.equal(await replayLogFile(join(dir, `${SID}.log`), SID, CWD, new UpdateReplay(crashed.client, caps, crashed.writeLines)), undefined);
    assert.deepEqual(crashed.sent, []);
  } finally {
    cleanup();
  }
  const other = tempDir();
  try {
    await writeLog(other.dir, completeHistory());
    const path = join(other.dir, `${SID}.log`);
    // A file named for one session that belongs to another.
    copyFileSync(path, join(other.dir, 'ses_other.log'));
    const wrongFile = recorder();
    assert.equal(await replayLogFile(join(other.dir, 'ses_other.log'), 'ses_other', CWD, new UpdateReplay(wrongFile.client, caps, wrongFile.writeLines)), undefined);
    // A torn tail: the engine's writable open truncates it.
    appendFileSync(path, Buffer.from([7, 0, 0, 0, 1, 2]));
    const torn = recorder();
    assert.equal(await replayLogFile(path, SID, CWD, new UpdateReplay(torn.client, caps, torn.writeLines)), undefined);
    assert.deepEqual([...wrongFile.sent, ...torn.sent], []);
    // No file at all.
    assert.equal(await replayLogFile(join(other.dir, 'ses_missing.log'), 'ses_missing', CWD, new UpdateReplay(torn.client, caps)), undefined);
  } finally {
    other.cleanup();
  }
});

test('another cwd is refused with invalid_params before anything is sent', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await writeLog(dir, completeHistory());
    const r = recorder();
    await assert.rejects(
      replayLogFile(join(dir, `${SID}.log`), SID, '/elsewhere', new UpdateReplay(r.client, caps, r.writeLines)),
      (e: unknown) => isTroupeError(e) && e.code === 'invalid_params' && /never changes/.test(e.message),
    );
    assert.deepEqual(r.sent, []);
  } finally {
    cleanup();
  }
});
