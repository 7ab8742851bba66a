import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isTroupeError } from '../../../src/core/errors.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { chunk, drain, steppingClock, turnCompleted } from '../../support/store/store-fixtures.js';

const SID = 'ses_mem';
const seqs = (events: AgentEvent[]): number[] => events.map((e) => e.seq);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('append stamps seq from 1 without holes and ts from the clock, synchronously', () => {
  const clock = steppingClock(1000);
  const log = new MemoryEventLog({ sessionId: SID, clock });
  const a = log.append(chunk(SID, 'a'));
  clock.advance(5);
  const b = log.append(chunk(SID, 'b'));
  assert.deepEqual([a.seq, a.ts, b.seq, b.ts], [1, 1000, 2, 1005]);
  assert.equal(log.lastSeq(), 2);
});

test('readAfter pages with limit, scanLimit and filter; the cursor advances over filtered-out events', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  for (let i = 1; i <= 10; i++) log.append(i % 5 === 0 ? turnCompleted(SID) : chunk(SID, `c${i}`));
  const p1 = await log.readAfter(0, { limit: 4 });
  assert.deepEqual([seqs(p1.events), p1.cursor, p1.hasMore], [[1, 2, 3, 4], 4, true]);
  const p2 = await log.readAfter(p1.cursor, { limit: 100 });
  assert.deepEqual([seqs(p2.events), p2.cursor, p2.hasMore], [range(5, 10), 10, false]);
  const onlyTurns = (e: AgentEvent): boolean => e.type === 'turn_completed';
  const f1 = await log.readAfter(0, { filter: onlyTurns, scanLimit: 3 });
  assert.deepEqual([seqs(f1.events), f1.cursor, f1.hasMore], [[], 3, true], 'scanLimit bounds the scan even when nothing matches');
  const f2 = await log.readAfter(0, { filter: onlyTurns, limit: 1 });
  assert.deepEqual([seqs(f2.events), f2.cursor, f2.hasMore], [[5], 5, true]);
  const end = await log.readAfter(10);
  assert.deepEqual([end.events, end.cursor, end.hasMore], [[], 10, false]);
});

test('a cursor beyond the latest seq or malformed is invalid_cursor', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  log.append(chunk(SID, 'a'));
  for (const c of [2, -1, 1.5, NaN]) {
    await assert.rejects(log.readAfter(c), (e: unknown) => isTroupeError(e, 'invalid_cursor'), String(c));
    assert.throws(() => log.subscribe(c), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
  }
  await assert.rejects(log.whenDurable(2), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
});

test('bounded retention: droppedThrough is the highest evicted seq; older cursors are replay_gap in memory', async () => {
  const log = new MemoryEventLog({ sessionId: SID, retention: { maxEvents: 3 } });
  for (let i = 1; i <= 5; i++) log.append(chunk(SID, `c${i}`));
  assert.equal(log.droppedThrough(), 2);
  assert.deepEqual(seqs((await log.readAfter(2)).events), [3, 4, 5]);
  await assert.rejects(log.readAfter(1), (e: unknown) => isTroupeError(e, 'replay_gap'));
  const w = log.subscribe(0);
  const r = await drain(w);
  assert.deepEqual(r.items, []);
  assert.ok(isTroupeError(r.error, 'replay_gap'));
});

test('retention by bytes evicts the oldest events first', async () => {
  const log = new MemoryEventLog({ sessionId: SID, retention: { maxBytes: 2000 } });
  for (let i = 1; i <= 10; i++) log.append(chunk(SID, 'x'.repeat(500)));
  const dropped = log.droppedThrough();
  assert.ok(dropped >= 6 && dropped < 10, `dropped through ${dropped}`);
  assert.deepEqual(seqs((await log.readAfter(dropped)).events), range(dropped + 1, 10));
});

test('subscribe replays after the cursor, then delivers live events, with no duplicate or hole at the seam', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  for (let i = 1; i <= 3; i++) log.append(chunk(SID, `c${i}`));
  const w = log.subscribe(1);
  const it = w[Symbol.asyncIterator]();
  assert.equal((await it.next()).value.seq, 2);
  log.append(chunk(SID, 'c4'));
  assert.equal((await it.next()).value.seq, 3);
  const pending = it.next();
  log.append(chunk(SID, 'c5'));
  assert.equal((await pending).value.seq, 4);
  assert.equal((await it.next()).value.seq, 5);
  w.close();
  assert.equal((await it.next()).done, true);
});

test('overflow is terminal: one event_overflow, then the end, no buffered tail', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const w = log.subscribe(0, { queueLimit: 2 });
  for (let i = 1; i <= 5; i++) log.append(chunk(SID, `c${i}`));
  const it = w[Symbol.asyncIterator]();
  await assert.rejects(it.next(), (e: unknown) => isTroupeError(e, 'event_overflow'));
  assert.equal((await it.next()).done, true);
  assert.equal((await it.next()).done, true);
  // The session is not affected.
  assert.equal(log.append(chunk(SID, 'after')).seq, 6);
  assert.equal(log.broker.liveWatchers(), 0);
});

test('a live queue is bounded by bytes too: one event over the bound waits alone, the next one overflows it', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const w = log.broker.subscribe(0, { queueMaxBytes: 1000 });
  const it = w[Symbol.asyncIterator]();
  log.append(chunk(SID, 'x'.repeat(5000)));
  assert.ok(log.broker.queuedBytes() > 5000, 'a large event alone is queued');
  assert.equal((await it.next()).value?.seq, 1);
  assert.equal(log.broker.queuedBytes(), 0, 'taken, it is no longer counted');
  log.append(chunk(SID, 'y'.repeat(600)));
  log.append(chunk(SID, 'z'.repeat(600)));
  // Until 2026-12-06 only the count (10,000 by default) bounded it.
  await assert.rejects(it.next(), (e: unknown) => isTroupeError(e, 'event_overflow'));
  assert.equal(log.broker.queuedBytes(), 0, 'what it held is let go');
  assert.equal((await it.next()).done, true);
});

/** A full garbage collection, for tests that check what is let go (WeakRef). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

test('retention lets go of the events it evicts', async () => {
  const log = new MemoryEventLog({ sessionId: SID, retention: { maxEvents: 2 } });
  const refs = Array.from({ length: 20 }, () => new WeakRef(log.append(chunk(SID, 'x'.repeat(1000)))));
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  // Until 2026-12-06 evicted events stayed reachable until more than 1024 of them had gone.
  assert.deepEqual(refs.map((r) => r.deref()?.seq).filter((seq) => seq !== undefined), [19, 20], 'only the retained');
  assert.deepEqual(seqs((await log.readAfter(18)).events), [19, 20]);
});

test('a live queue that never runs empty lets go of each event its reader has taken', async () => {
  const log = new MemoryEventLog({ sessionId: SID, retention: { maxEvents: 1 } });
  const it = log.subscribe(0)[Symbol.asyncIterator]();
  const refs: WeakRef<AgentEvent>[] = [];
  const append = (): void => void refs.push(new WeakRef(log.append(chunk(SID, 'x'.repeat(1000)))));
  append();
  append();
  // A reader one event behind all along: the queue is never empty.
  for (let i = 0; i < 20; i++) {
    assert.equal((await it.next()).value?.seq, i + 1);
    append();
  }
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  // Until 2026-12-06 the queue held every event taken since it was last empty (here all 20).
  const held = refs.slice(0, 20).filter((r) => r.deref() !== undefined).length;
  assert.equal(held, 0, 'taken events are not held by the queue');
  assert.ok(log.broker.queuedBytes() > 2000 && log.broker.queuedBytes() < 3000, 'the two waiting are counted');
});

test('closing a watcher ends it alone; closing the log delivers every accepted event, then the end', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const a = log.subscribe(0);
  const b = log.subscribe(0);
  for (let i = 1; i <= 4; i++) log.append(chunk(SID, `c${i}`));
  a.close();
  assert.deepEqual(await drain(a), { items: [] });
  await log.close();
  assert.throws(() => log.append(chunk(SID, 'late')), (e: unknown) => isTroupeError(e, 'session_closed'));
  const r = await drain(b);
  assert.deepEqual(seqs(r.items), [1, 2, 3, 4]);
  assert.equal(r.error, undefined);
  // Subscribing after close replays and ends.
  assert.deepEqual(seqs((await drain(log.subscribe(2))).items), [3, 4]);
});

test('a waiting watcher ends when the log closes', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const w = log.subscribe(0);
  const it = w[Symbol.asyncIterator]();
  const pending = it.next();
  await log.close();
  assert.equal((await pending).done, true);
});

test('whenDurable resolves at once for a memory log', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const e = log.append(turnCompleted(SID));
  await log.whenDurable(e.seq);
});

test('breaking out of for-await closes the watcher without affecting the log', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  for (let i = 1; i <= 5; i++) log.append(chunk(SID, `c${i}`));
  const w = log.subscribe(0);
  const r = await drain(w, 2);
  assert.deepEqual(seqs(r.items), [1, 2]);
  assert.equal(log.broker.liveWatchers(), 0);
  log.append(chunk(SID, 'c6'));
  assert.equal(log.lastSeq(), 6);
});
