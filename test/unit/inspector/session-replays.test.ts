// The daemon's kept replays (SessionReplays) over real log files written by FileEventLog: an ask
// with the answer's replayId reads only what the log gained, a replaced log file or another
// replayId gets the whole replay again, and the kept folds are bounded in number and dropped once
// nobody asks (a clock the test moves, not a timer it waits for).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileEventLog } from '../../../src/store/index.js';
import { replaySession } from '../../../src/machines/replay.js';
import { readLogFile } from '../../../src/store/index.js';
import { SessionReplays } from '../../../src/daemon/inspector/session-replays.js';
import type { AgentEventInput } from '../../../src/core/events.js';
import { recordEnds } from '../../support/store/store-fixtures.js';
import { writeTombstoneLog } from '../../../src/store/session-tombstone.js';
import { sessionLogPath } from '../../../src/store/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-replays-'));
const path = (id: string) => join(dir, `${id}.log`);
after(() => rmSync(dir, { recursive: true, force: true }));

async function session(id: string): Promise<FileEventLog> {
  const log = await FileEventLog.create(path(id), { sessionId: id, durability: { sync: 'always' } });
  log.append({ type: 'session_created', sessionId: id, cwd: '/', additionalDirectories: [], model: 'm', mode: 'default' } as AgentEventInput);
  return log;
}
const turn = (log: FileEventLog, id: string, n: number, chunks: number) => {
  const turnId = `t${n}`;
  log.append({ type: 'user_message', sessionId: id, turnId, messageId: `u${n}`, content: [{ type: 'text', text: 'go' }] } as AgentEventInput);
  log.append({ type: 'turn_started', sessionId: id, turnId, maxSteps: 10 } as AgentEventInput);
  for (let i = 0; i < chunks; i++) log.append({ type: 'agent_message_chunk', sessionId: id, turnId, messageId: `a${n}`, text: `w${i} ` } as AgentEventInput);
};
const end = (log: FileEventLog, id: string, n: number) => log.append({ type: 'turn_completed', sessionId: id, turnId: `t${n}`, stopReason: 'end_turn', steps: 1 } as AgentEventInput);
const whole = async (id: string) => replaySession((await readLogFile(path(id))).events);

test('asks with the last answer read only what the log gained, and add up to the whole replay', async (t) => {
  let read = 0;
  let clock = 0;
  const replays = new SessionReplays({ logPath: path, pause: async () => {}, onRead: (_b, events) => void (read += events), now: () => clock });
  t.after(() => replays.close());
  const log = await session('s1');
  turn(log, 's1', 1, 2000);
  await log.whenDurable(log.lastSeq());
  const first = await replays.replay('s1');
  assert.equal(first.after, 0);
  assert.equal(read, log.lastSeq());
  let held = first.transitions;
  let since = { replayId: first.replayId, after: first.lastSeq };
  for (let k = 0; k < 5; k++) {
    read = 0;
    const before = log.lastSeq();
    if (k === 2) end(log, 's1', 1);
    else if (k === 3) turn(log, 's1', 2, 10);
    else log.append({ type: 'agent_message_chunk', sessionId: 's1', turnId: k < 3 ? 't1' : 't2', messageId: 'x', text: 'more' } as AgentEventInput);
    await log.whenDurable(log.lastSeq());
    const r = await replays.replay('s1', since);
    assert.equal(r.after, since.after, 'only what follows');
    assert.equal(read, log.lastSeq() - before, 'only the events the log gained were read');
    held = held.concat(r.transitions);
    since = { replayId: r.replayId, after: r.lastSeq };
    assert.deepEqual(held, await whole('s1'));
  }
  // Another replayId (another daemon, a replay rebuilt since): the whole replay, of the same fold.
  const other = await replays.replay('s1', { replayId: 'elsewhere.1', after: since.after });
  assert.deepEqual([other.after, other.replayId], [0, since.replayId]);
  assert.deepEqual(other.transitions, await whole('s1'));
  await log.close();
});

test('a replaced log file, too many sessions, and sessions nobody asks about drop their folds', async (t) => {
  let clock = 0;
  const replays = new SessionReplays({ logPath: path, pause: async () => {}, now: () => clock, maxHeld: 2, idleMs: 1000 });
  t.after(() => replays.close());
  const logs = await Promise.all(['a', 'b', 'c'].map((id) => session(id)));
  for (const [i, log] of logs.entries()) {
    turn(log, ['a', 'b', 'c'][i]!, 1, 3);
    await log.whenDurable(log.lastSeq());
  }
  const a = await replays.replay('a');
  await replays.replay('b');
  assert.equal(replays.size, 2);
  await replays.replay('c');
  assert.equal(replays.size, 2, 'at most maxHeld folds');
  // `a` was dropped: its old replayId gets the whole replay under a new one.
  const again = await replays.replay('a', { replayId: a.replayId, after: a.lastSeq });
  assert.equal(again.after, 0);
  assert.notEqual(again.replayId, a.replayId);
  // The file replaced under the same name (as a deletion's tombstone does): a new fold, all of it.
  await logs[0]!.close();
  rmSync(path('a'));
  const fresh = await session('a');
  await fresh.whenDurable(fresh.lastSeq());
  const replaced = await replays.replay('a', { replayId: again.replayId, after: again.lastSeq });
  assert.equal(replaced.after, 0);
  assert.notEqual(replaced.replayId, again.replayId);
  assert.deepEqual(replaced.transitions, await whole('a'));
  // Nobody asks for idleMs: nothing is kept.
  clock += 1000;
  replays.sweep();
  assert.equal(replays.size, 0);
  await fresh.close();
  for (const log of logs.slice(1)) await log.close();
});

test('a log cut short and written on (rewound): the kept fold goes, and the next ask is the replay of the log as it is', async (t) => {
  const replays = new SessionReplays({ logPath: path, pause: async () => {} });
  t.after(() => replays.close());
  const log = await session('cut');
  await log.whenDurable(log.lastSeq());
  const created = statSync(path('cut')).size;
  turn(log, 'cut', 1, 200);
  end(log, 'cut', 1);
  await log.whenDurable(log.lastSeq());
  const first = await replays.replay('cut');
  await log.close();
  const read = statSync(path('cut')).size;
  // What the process that opens it again finds after a machine crash: only what was synced first.
  truncateSync(path('cut'), created);
  const again = await FileEventLog.open(path('cut'), { durability: { sync: 'always' } });
  assert.equal(again.lastSeq(), 1);
  replays.rewound('cut');
  // It writes on, past where the kept fold stopped reading: other turns, other records.
  turn(again, 'cut', 2, 400);
  await again.whenDurable(again.lastSeq());
  assert.ok(statSync(path('cut')).size > read && again.lastSeq() > first.lastSeq);
  const r = await replays.replay('cut', { replayId: first.replayId, after: first.lastSeq });
  // Until 2026-12-07 the fold read on from its old offset, inside the new records: it answered
  // with what the log lost (lastSeq of the first turn), and nothing after it.
  assert.deepEqual([r.after, r.lastSeq], [0, again.lastSeq()]);
  assert.notEqual(r.replayId, first.replayId);
  assert.deepEqual(r.transitions, await whole('cut'));
  await again.close();
});

test('a rewind while a replay reads the log: what it read is not kept, the log is read again', async (t) => {
  let pauses = 0;
  let onPause = () => {};
  const replays = new SessionReplays({ logPath: path, pause: async () => (pauses++, onPause()) });
  t.after(() => replays.close());
  const log = await session('cutting');
  turn(log, 'cutting', 1, 10_000);
  await log.whenDurable(log.lastSeq());
  await log.close();
  // Read in pages of 4096 events with a pause between them: the rewind comes in the first pause.
  onPause = () => {
    onPause = () => {};
    truncateSync(path('cutting'), recordEnds(readFileSync(path('cutting')))[1]!);
    replays.rewound('cutting');
  };
  const r = await replays.replay('cutting');
  assert.ok(pauses > 0);
  assert.equal(r.lastSeq, (await readLogFile(path('cutting'))).events.at(-1)!.seq);
  assert.deepEqual(r.transitions, await whole('cutting'));
});

test('a session deleted while its replay reads the log: nothing of it is kept, and that ask and the one waiting behind it are refused session_not_found', async (t) => {
  let onPause = () => {};
  const replays = new SessionReplays({ logPath: path, pause: async () => onPause() });
  t.after(() => replays.close());
  const log = await session('deleting');
  turn(log, 'deleting', 1, 10_000);
  await log.whenDurable(log.lastSeq());
  await log.close();
  // Read in pages with a pause between them: the delete comes in the first pause.
  onPause = () => {
    onPause = () => {};
    replays.forget('deleting');
  };
  const asks = [replays.replay('deleting'), replays.replay('deleting')];
  // Until 2026-12-07 both were answered, and the fold kept for the deleted session.
  for (const ask of asks) await assert.rejects(ask, (err: any) => err.code === 'session_not_found' && err.data?.deleted === true);
  assert.equal(replays.size, 0, 'no fold kept');
  // The deletes counted for the id go with the asks they came during: a later ask (the daemon's
  // route refuses a deleted id before it asks) is not refused for them.
  assert.equal((await replays.replay('deleting')).lastSeq, (await readLogFile(path('deleting'))).events.at(-1)!.seq);
});

test('a log that is a tombstone (its session deleted, the daemon not told yet) is refused session_not_found, and the fold kept of the log before it goes', async (t) => {
  const replays = new SessionReplays({ logPath: path, pause: async () => {} });
  t.after(() => replays.close());
  const log = await session('tomb');
  turn(log, 'tomb', 1, 10);
  end(log, 'tomb', 1);
  await log.whenDurable(log.lastSeq());
  await log.close();
  const first = await replays.replay('tomb');
  assert.equal(replays.size, 1);
  // Another process's delete (or the daemon's own, before its index entry is marked): the log's place
  // holds a tombstone, and nobody called `forget`.
  const entry = { id: 'tomb', cwd: '/', model: 'm', mode: 'default', createdAt: 0, updatedAt: 0, status: 'active' as const, lastSeq: first.lastSeq };
  await writeTombstoneLog(dir, entry, 1, async () => {});
  assert.equal(path('tomb'), sessionLogPath(dir, 'tomb'));
  // Until 2026-12-07 the tombstone's one event was answered as the session's machines.
  for (const since of [undefined, { replayId: first.replayId, after: first.lastSeq }, { replayId: 'other', after: 0 }]) {
    await assert.rejects(replays.replay('tomb', since), (err: any) => err.code === 'session_not_found' && err.data?.deleted === true, JSON.stringify(since));
  }
  assert.equal(replays.size, 0, 'no fold kept');
});
