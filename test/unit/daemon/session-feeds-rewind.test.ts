// A session's log found holding less than the daemon's feed of it has (a damaged tail cut, a machine
// crash: `rewound`, spec/daemon.md §Management API): whatever the feed was doing then, its watchers
// end up on the log as it is, or are told plainly that they were sent events it lost. On real log
// files, cut as the process that opens them again leaves them (its valid prefix).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../../src/core/events.js';
import { isTroupeError } from '../../../src/core/errors.js';
import type { EventWatcher } from '../../../src/core/ports.js';
import { eventMark } from '../../../src/daemon/event-mark.js';
import { SessionFeeds } from '../../../src/daemon/session-feeds.js';
import { encodeEventRecord } from '../../../src/store/log-record.codec.js';
import { sessionsDir } from '../../../src/store/paths.js';
import { writeTombstoneLog } from '../../../src/store/session-tombstone.js';
import { chunk, recordEnds } from '../../support/store/store-fixtures.js';
import { BIG, longLog, N, nextTurn, SID, take } from '../../support/long-feed-log.js';

/** Cuts the log after the record of seq `k` (one event a record), as a repair leaves it. */
function cutAfter(path: string, k: number): void {
  // recordEnds()[0] is the end of the header record; [k] that of the k-th event.
  truncateSync(path, recordEnds(readFileSync(path))[k]!);
}

/** Events `seqs` as the session's next process writes them after the cut (not what the log lost). */
function afterCut(seqs: number[], size = 10): AgentEvent[] {
  return seqs.map((seq) => ({ ...chunk(SID, `after the cut ${seq} `.padEnd(size, '.')), seq, ts: seq }) as AgentEvent);
}

/** `afterCut`, appended to the log as one record. */
function appendAfterCut(path: string, seqs: number[], size = 10): AgentEvent[] {
  const events = afterCut(seqs, size);
  appendFileSync(path, encodeEventRecord(events));
  return events;
}

/** The next `n` events of a watcher, taken one by one (it stays open). */
async function next(w: EventWatcher, n: number): Promise<AgentEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: AgentEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    assert.equal(r.done, false, `ended after ${out.map((e) => e.seq).join(',')}`);
    out.push(r.value as AgentEvent);
  }
  return out;
}

const texts = (events: AgentEvent[]) => events.map((e) => (e.type === 'agent_message_chunk' ? e.text : e.type));
const oldText = (seq: number) => String(seq % 10).repeat(BIG);

test('a log cut while its feed scans it: the feed opens on what the log holds then, and the events appended after the cut reach its watchers', async (t) => {
  const { path, feeds } = await longLog(t);
  const K = 3;
  const subscribing = feeds.subscribe(SID, 0);
  // Between two slices of the scan, the session's next process opens the log: cut, reported so, appended to.
  await nextTurn();
  cutAfter(path, K);
  feeds.rewound(SID, K);
  assert.equal(feeds.knownLastSeq(SID), K, 'the known seq is the log’s while the feed still opens');
  const appended = appendAfterCut(path, [K + 1, K + 2]);
  feeds.publish(SID, appended);
  const w = await subscribing;
  t.after(() => w.close());
  // Until 2026-12-07 the feed opened at the seq its scan saw before the cut, past the log's end.
  assert.equal(feeds.knownLastSeq(SID), K + 2);
  const live = appendAfterCut(path, [K + 3]);
  feeds.publish(SID, live);
  const events = await next(w, K + 3);
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: K + 3 }, (_, i) => i + 1));
  assert.deepEqual(texts(events), [...[1, 2, 3].map(oldText), ...texts([...appended, ...live])]);
});

test('a watcher catching up from the log when it is cut, not yet past the cut: it goes on through the log as it is, and on to live events', async (t) => {
  const { path, feeds } = await longLog(t);
  // Two events past a batch of the catch-up (4 MiB: four events), which then reads on across the cut.
  const K = 6;
  const w = await feeds.subscribe(SID, 0);
  t.after(() => w.close());
  const first = await next(w, 2);
  cutAfter(path, K);
  feeds.rewound(SID, K);
  const appended = appendAfterCut(path, [K + 1, K + 2, K + 3]);
  feeds.publish(SID, appended);
  // And the next record is being written as the watcher reads on: the file ends in half of it.
  const live = afterCut([K + 4]);
  const record = encodeEventRecord(live);
  appendFileSync(path, record.subarray(0, record.length / 2));
  // Until 2026-12-07 it read the cut file past the cut with the old scan's offsets: log_corrupt (the
  // record being written, a record's middle), or a replay_gap.
  const rest = await next(w, K + 1);
  appendFileSync(path, record.subarray(record.length / 2));
  feeds.publish(SID, live);
  const events = [...first, ...rest, ...(await next(w, 1))];
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: K + 4 }, (_, i) => i + 1));
  assert.deepEqual(texts(events), [...Array.from({ length: K }, (_, i) => oldText(i + 1)), ...texts([...appended, ...live])]);
});

test('a watcher that was handed events the log then lost ends with replay_gap saying where the log ends now', async (t) => {
  const { path, feeds } = await longLog(t);
  const K = 3;
  const [live, behind] = [await feeds.subscribe(SID, N), await feeds.subscribe(SID, K + 1)];
  t.after(() => (live.close(), behind.close()));
  const waiting = live[Symbol.asyncIterator]().next();
  cutAfter(path, K);
  feeds.rewound(SID, K);
  // Until 2026-12-07 both ended as a deleted session's stream does: nothing said what was lost.
  for (const [w, pending] of [
    [live, waiting],
    [behind, behind[Symbol.asyncIterator]().next()],
  ] as const) {
    await assert.rejects(pending, (err: unknown) => isTroupeError(err, 'replay_gap') && err.data?.lastSeq === K);
    assert.equal((await w[Symbol.asyncIterator]().next()).done, true, 'and then ends');
  }
  assert.equal(feeds.knownLastSeq(SID), K);
});

test('a log cut while its feed fills a gap past the cut: its watcher, handed nothing the log lost, goes on with the events written after the cut', async (t) => {
  const { path, feeds } = await longLog(t);
  const w = await feeds.subscribe(SID, N);
  t.after(() => w.close());
  // Nine events written, their reports lost, the tenth reported: the feed fills N+1..N+10 from the log, a turn later.
  const lost = Array.from({ length: 10 }, (_, i) => ({ ...chunk(SID, `lost ${N + 1 + i}`), seq: N + 1 + i, ts: N + 1 + i }) as AgentEvent);
  appendFileSync(path, encodeEventRecord(lost.slice(0, 9)));
  appendFileSync(path, encodeEventRecord(lost.slice(9)));
  feeds.publish(SID, lost.slice(9));
  // Before it reads them, the log is found cut at N, and the next process writes three events.
  cutAfter(path, N);
  feeds.rewound(SID, N);
  const appended = appendAfterCut(path, [N + 1, N + 2, N + 3]);
  feeds.publish(SID, appended);
  const events = await next(w, 3);
  await nextTurn();
  await nextTurn();
  const live = appendAfterCut(path, [N + 4]);
  feeds.publish(SID, live);
  // Until 2026-12-07 the feed read on to fill what the log had lost, found it lacking, and ended:
  // the stream ended as a deleted session's while the session wrote on.
  events.push(...(await next(w, 1)));
  assert.deepEqual(texts(events), texts([...appended, ...live]));
});

test('a gap fill that finds the log cut before the rewind is told ends the feed as a rewind: its watcher goes on with the events written after the cut', async (t) => {
  const { path, feeds } = await longLog(t);
  const w = await feeds.subscribe(SID, N);
  t.after(() => w.close());
  const lost = Array.from({ length: 10 }, (_, i) => ({ ...chunk(SID, `lost ${N + 1 + i}`), seq: N + 1 + i, ts: N + 1 + i }) as AgentEvent);
  appendFileSync(path, encodeEventRecord(lost));
  feeds.publish(SID, lost.slice(9));
  // The next process cuts the log before the daemon has handled its report of the cut: the fill,
  // a turn later, finds the log short first.
  cutAfter(path, N);
  await nextTurn();
  await nextTurn();
  const appended = appendAfterCut(path, [N + 1, N + 2, N + 3]);
  feeds.rewound(SID, N);
  feeds.publish(SID, appended);
  // Until 2026-12-07 the fill ended the feed as a deleted session's: the stream ended.
  assert.deepEqual(texts(await next(w, 3)), texts(appended));
});

/** Deletes the session as the daemon does: its log replaced by its tombstone, then its feed forgotten. */
async function deleteSession(home: string, feeds: SessionFeeds, lastSeq: number): Promise<void> {
  const entry = { id: SID, cwd: '/', model: 'scripted/demo', mode: 'default', createdAt: 1, updatedAt: 1, status: 'active', lastSeq } as const;
  await writeTombstoneLog(sessionsDir(home), entry, Date.now(), nextTurn);
  feeds.forget(SID);
}

test('a session deleted while its watcher goes from a rewound feed to the feed opened again: the watcher ends, and is not served the tombstone', async (t) => {
  const { home, path, feeds } = await longLog(t);
  const K = 3;
  // A watcher at K, sent nothing past it; the log is cut there, which ends its feed (it reopens at its next pull).
  const w = await feeds.subscribe(SID, K);
  t.after(() => w.close());
  cutAfter(path, K);
  feeds.rewound(SID, K);
  await deleteSession(home, feeds, K);
  // Until 2026-12-07 the feed opened again checked only that the log file was there: the watcher
  // was handed the tombstone's session_closed (seq K + 1) as the session's next event.
  assert.deepEqual(await w[Symbol.asyncIterator]().next(), { value: undefined, done: true });
  assert.equal(feeds.open, 0, 'no feed left on the tombstone');
  // And a new watcher is refused, as the route refuses a deleted session.
  await assert.rejects(feeds.subscribe(SID, 0), (err: unknown) => isTroupeError(err, 'session_not_found'));
  assert.equal(feeds.open, 0);
});

test('a deleted session whose old log is put back: a watcher whose feed ends for a rewind is not served it again', async (t) => {
  const { home, path } = await longLog(t);
  let deleted = false;
  const feeds = new SessionFeeds(home, undefined, () => deleted);
  t.after(() => feeds.close());
  const K = 3;
  const w = await feeds.subscribe(SID, K);
  t.after(() => w.close());
  cutAfter(path, K);
  feeds.rewound(SID, K);
  // The index says deleted; the file at the log's path is the old log (a backup put back).
  deleted = true;
  feeds.forget(SID);
  assert.deepEqual(await w[Symbol.asyncIterator]().next(), { value: undefined, done: true });
  await assert.rejects(feeds.subscribe(SID, 0), (err: unknown) => isTroupeError(err, 'session_not_found'));
  assert.equal(feeds.open, 0);
});

test("a watcher from a cursor and the mark of the event the reader had there: taken while the log holds that event, told replay_gap once the seq names another", async (t) => {
  const { path, feeds } = await longLog(t);
  const K = 3;
  const mark = (e: AgentEvent) => eventMark(JSON.stringify(e));
  const had = await take(await feeds.subscribe(SID, 0), K);
  const [kept, last] = [had[K - 2]!, had[K - 1]!];
  // The log as the reader saw it: it goes on after its cursor.
  const same = await feeds.subscribe(SID, K, mark(last));
  assert.deepEqual((await next(same, 1)).map((e) => e.seq), [K + 1]);
  same.close();
  // Cut before the reader's last event, and written past it again.
  cutAfter(path, K - 1);
  feeds.rewound(SID, K - 1);
  const appended = appendAfterCut(path, [K, K + 1]);
  feeds.publish(SID, appended);
  const other = await feeds.subscribe(SID, K, mark(last));
  await assert.rejects(other[Symbol.asyncIterator]().next(), (err: unknown) => isTroupeError(err, 'replay_gap') && err.data?.lastSeq === 0 && err.data?.cursor === K);
  assert.equal((await other[Symbol.asyncIterator]().next()).done, true, 'and then ends');
  // From the event the cut kept, it goes on with the events written after the cut.
  const fromKept = await feeds.subscribe(SID, K - 1, mark(kept));
  t.after(() => fromKept.close());
  assert.deepEqual(texts(await next(fromKept, 2)), texts(appended));
  // A cursor beyond the log is refused with a mark as without.
  await assert.rejects(feeds.subscribe(SID, K + 2, mark(last)), (err: unknown) => isTroupeError(err, 'invalid_cursor'));
});

test('a log replaced by a shorter copy (put back by a rename) while its feed scans it: the feed scans the file now at the log’s path, not the one it had open', async (t) => {
  const { path, feeds } = await longLog(t);
  const K = 3;
  const subscribing = feeds.subscribe(SID, 0);
  await nextTurn();
  // An older copy of the log, holding through K, put in its place; the next process opens it and writes on.
  const copy = `${path}.copy`;
  writeFileSync(copy, readFileSync(path).subarray(0, recordEnds(readFileSync(path))[K]!));
  renameSync(copy, path);
  feeds.rewound(SID, K);
  const appended = appendAfterCut(path, [K + 1, K + 2]);
  feeds.publish(SID, appended);
  const w = await subscribing;
  t.after(() => w.close());
  assert.equal(feeds.knownLastSeq(SID), K + 2, 'the seq the log at its path holds');
  const events = await next(w, K + 2);
  assert.deepEqual(texts(events), [...[1, 2, 3].map(oldText), ...texts(appended)]);
});

test('a watcher asked for two events at once gives them in order, one call after the other: from a marked cursor, and across a rewind that opens its feed again', async (t) => {
  // The stream's `for await` never overlaps two next() calls, but a watcher is an iterator anyone
  // may hold, and the broker's own watchers serve overlapping calls in order (spec/event-log.md §4.4).
  const { path, feeds } = await longLog(t);
  const K = 3;
  const had = await take(await feeds.subscribe(SID, 0), K);
  // Until 2026-12-07 both calls took the mark to check: the second compared the event after the
  // cursor with it, and ended the watcher with a false replay_gap (the first then got `done`).
  const marked = await feeds.subscribe(SID, K, eventMark(JSON.stringify(had[K - 1])));
  const m = marked[Symbol.asyncIterator]();
  assert.deepEqual((await Promise.all([m.next(), m.next()])).map((r) => r.value?.seq), [K + 1, K + 2]);
  marked.close();
  assert.equal(feeds.open, 0);

  const w = await feeds.subscribe(SID, 0);
  assert.deepEqual((await next(w, K)).map((e) => e.seq), [1, 2, 3]);
  cutAfter(path, K);
  feeds.rewound(SID, K);
  const appended = appendAfterCut(path, [K + 1, K + 2]);
  feeds.publish(SID, appended);
  // Until 2026-12-07 both calls opened the feed again: one of the two views was never closed, and
  // the session's feed (its log file open) stayed after the watcher closed.
  const it = w[Symbol.asyncIterator]();
  const both = await Promise.all([it.next(), it.next()]);
  assert.deepEqual(texts(both.map((r) => r.value as AgentEvent)), texts(appended));
  w.close();
  assert.equal(feeds.open, 0, 'the feed goes with its last watcher');
});
