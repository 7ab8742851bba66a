// Opening a session's feed in the daemon (src/daemon/session-feeds.ts) on a log of several scan
// slices: the scan that opens it lets the loop's other work run between its slices, and the feed it
// opens is the same as before: every event of the log, in order, the seam to live events exact, even
// for events appended and reported while it scanned. On real log files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import type { AgentEvent } from '../../../src/core/events.js';
import { isTroupeError } from '../../../src/core/errors.js';
import type { EventWatcher } from '../../../src/core/ports.js';
import { encodeEventRecord } from '../../../src/store/log-record.codec.js';
import { SessionFeeds } from '../../../src/daemon/session-feeds.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { sessionsDir } from '../../../src/store/paths.js';
import { chunk } from '../../support/store/store-fixtures.js';
import { BIG, longLog, N, nextTurn, SID, take } from '../../support/long-feed-log.js';

/** Bytes this process has read through read(2) and the like (proc(5)). */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);

test("a feed of a long log opens with the loop's other work run between the slices of its scan, and replays every event", async (t) => {
  const { feeds } = await longLog(t);
  let opened = false;
  const subscribing = feeds.subscribe(SID, 0).then((w) => ((opened = true), w));
  // Other work of the loop (a request of another client): it runs before the scan is done. Until
  // 2026-12-06 the scan ran in one go, and the feed was open before anything else could run.
  await nextTurn();
  assert.equal(opened, false, 'the feed opened before the loop had another turn');
  const w = await subscribing;
  const events = await take(w, N);
  w.close();
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: N }, (_, i) => i + 1));
  assert.ok(events.every((e) => e.type === 'agent_message_chunk' && e.text === String(e.seq % 10).repeat(BIG)));
  assert.equal(feeds.open, 0, 'the feed goes with its last watcher');
});

test('events appended and reported while the log is scanned are in the feed: a watcher at the last reported seq is taken, and the seam is exact', async (t) => {
  const { path, feeds } = await longLog(t);
  const fromStart = feeds.subscribe(SID, 0);
  // Between two slices of the scan, the session's child appends two events and reports them.
  const appended = [N + 1, N + 2].map((seq) => ({ ...chunk(SID, `late ${seq}`), seq, ts: seq }) as AgentEvent);
  await nextTurn();
  appendFileSync(path, encodeEventRecord(appended));
  feeds.publish(SID, appended);
  // A client that heard of the last one (from another feed, say) asks from there: not beyond the log.
  const atLast = await feeds.subscribe(SID, N + 2);
  const w = await fromStart;
  const live = { ...chunk(SID, 'live'), seq: N + 3, ts: N + 3 } as AgentEvent;
  appendFileSync(path, encodeEventRecord([live]));
  feeds.publish(SID, [live]);
  const events = await take(w, N + 3);
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: N + 3 }, (_, i) => i + 1), 'every seq once, in order, across the seam');
  assert.deepEqual((await take(atLast, 1)).map((e) => e.seq), [N + 3]);
  w.close();
  atLast.close();
  assert.equal(feeds.open, 0);
});

test('watchers that come while the log is scanned share its scan; one refused (a cursor beyond the log) leaves the feed to the others', async (t) => {
  const { path, feeds } = await longLog(t);
  const before = bytesRead();
  // The refused one first: its refusal, the first thing done once the scan ends, must not close the feed.
  const [beyond, a, b] = await Promise.allSettled([feeds.subscribe(SID, N + 1), feeds.subscribe(SID, 0), feeds.subscribe(SID, N)]);
  assert.ok(bytesRead() - before < 2 * statSync(path).size, 'the log was scanned once');
  assert.equal(beyond.status, 'rejected');
  assert.ok(isTroupeError((beyond as PromiseRejectedResult).reason, 'invalid_cursor'));
  assert.equal(a.status, 'fulfilled');
  assert.equal(b.status, 'fulfilled');
  const [wa, wb] = [(a as PromiseFulfilledResult<EventWatcher>).value, (b as PromiseFulfilledResult<EventWatcher>).value];
  assert.equal(feeds.open, 1);
  const live = { ...chunk(SID, 'live'), seq: N + 1, ts: N + 1 } as AgentEvent;
  feeds.publish(SID, [live]);
  assert.deepEqual((await take(wb, 1)).map((e) => e.seq), [N + 1]);
  assert.deepEqual((await take(wa, N + 1)).map((e) => e.seq), Array.from({ length: N + 1 }, (_, i) => i + 1));
  wa.close();
  wb.close();
  assert.equal(feeds.open, 0);
});

test('a session deleted while its log is scanned: its watchers are refused with session_not_found, and no feed is kept', async (t) => {
  const { feeds } = await longLog(t);
  const subscribing = feeds.subscribe(SID, 0);
  await nextTurn();
  feeds.forget(SID);
  await assert.rejects(subscribing, (err: unknown) => isTroupeError(err, 'session_not_found'));
  assert.equal(feeds.open, 0);
  assert.equal(feeds.knownLastSeq(SID), undefined, 'nothing of it is kept');
});

test('HEAD (check) of a cursor past what the daemon has seen scans the log with turns of the loop too, and answers as the feed would', async (t) => {
  const { feeds } = await longLog(t);
  let checked = false;
  const checking = feeds.check(SID, N).then(() => (checked = true));
  await nextTurn();
  assert.equal(checked, false, 'checked before the loop had another turn');
  await checking;
  await assert.rejects(feeds.check(SID, N + 1), (err: unknown) => isTroupeError(err, 'invalid_cursor'));
  assert.equal(feeds.open, 0, 'a check opens no feed');
});

test('a session deleted while a HEAD (check) scans its log: refused session_not_found, and nothing of it is kept', async (t) => {
  const { home } = await longLog(t);
  let deleted = false;
  // The daemon's: the index says whether a session is deleted, and it is told (forget) after.
  const feeds = new SessionFeeds(home, undefined, () => deleted);
  t.after(() => feeds.close());
  const checking = feeds.check(SID, N);
  await nextTurn();
  deleted = true;
  feeds.forget(SID);
  // Until 2026-12-07 it was answered as for the session, and its last seq kept.
  await assert.rejects(checking, (err: unknown) => isTroupeError(err, 'session_not_found'));
  assert.equal(feeds.knownLastSeq(SID), undefined, 'nothing of it is kept');
});

test('a HEAD (check) of a session another process deleted (its log a tombstone, the daemon not told) is refused session_not_found, as its GET is', async (t) => {
  const { home, feeds } = await longLog(t);
  await (await SessionIndex.open(sessionsDir(home))).tombstone(SID);
  await assert.rejects(feeds.subscribe(SID, 0), (err: unknown) => isTroupeError(err, 'session_not_found'), 'GET');
  // Until 2026-12-07 answered 200: the tombstone's seq was taken as the session's.
  await assert.rejects(feeds.check(SID, 1), (err: unknown) => isTroupeError(err, 'session_not_found'), 'HEAD');
  assert.equal(feeds.knownLastSeq(SID), undefined);
});

test('a feed whose last watcher goes while a gap is being filled leaves the seq its session reported, as a session with no feed keeps it', async (t) => {
  const { path, feeds } = await longLog(t);
  const w = await feeds.subscribe(SID, N);
  // Nine events written with their reports lost, the tenth reported: the feed is to fill N+1..N+10 from the log, a turn later.
  const written = Array.from({ length: 10 }, (_, i) => ({ ...chunk(SID, `late ${N + 1 + i}`), seq: N + 1 + i, ts: N + 1 + i }) as AgentEvent);
  appendFileSync(path, encodeEventRecord(written));
  feeds.publish(SID, written.slice(9));
  assert.equal(feeds.knownLastSeq(SID), N + 10);
  // The watcher goes before the fill has read anything: the feed goes with it.
  w.close();
  assert.equal(feeds.open, 0);
  // Until 2026-12-07 the feed kept what it was to fill through apart, and let it go with the feed: N.
  assert.equal(feeds.knownLastSeq(SID), N + 10);
  await feeds.check(SID, N + 10);
});

/** A child's report of `events` whose records are read only on demand; `undecodable`: reading them fails. */
function reported(events: AgentEvent[], undecodable = false) {
  const read = { times: 0 };
  return {
    read,
    report: {
      count: events.length,
      lastSeq: events.at(-1)!.seq,
      indexed: [],
      get events(): AgentEvent[] {
        read.times++;
        if (undecodable) throw new Error('not an event record');
        return events;
      },
    },
  };
}

test('a report reaches the feed only through an open feed: without one its records are not read, and its last seq is known; one whose records cannot be read is served from the log', { timeout: 30_000 }, async (t) => {
  const { path, feeds } = await longLog(t);
  const late = (seq: number) => ({ ...chunk(SID, `late ${seq}`), seq, ts: seq }) as AgentEvent;
  // No feed open: nothing is decoded, the daemon knows the seq (a watcher may ask from there).
  const first = [late(N + 1), late(N + 2)];
  appendFileSync(path, encodeEventRecord(first));
  const unread = reported(first);
  feeds.report(SID, unread.report);
  assert.equal(unread.read.times, 0, 'a burst no feed wants is not decoded');
  assert.equal(feeds.knownLastSeq(SID), N + 2);
  const w = await feeds.subscribe(SID, N);
  // A feed open: the next report is read, and a report that cannot be read is filled from the log.
  const second = [late(N + 3)];
  appendFileSync(path, encodeEventRecord(second));
  const read = reported(second);
  feeds.report(SID, read.report);
  assert.equal(read.read.times, 1);
  const third = [late(N + 4), late(N + 5)];
  appendFileSync(path, encodeEventRecord(third));
  feeds.report(SID, reported(third, true).report);
  const events = await take(w, 5);
  assert.deepEqual(events.map((e) => e.seq), [N + 1, N + 2, N + 3, N + 4, N + 5]);
  assert.deepEqual(events.slice(3).map((e) => e.type === 'agent_message_chunk' && e.text), [`late ${N + 4}`, `late ${N + 5}`], 'the unreadable burst, from the log');
});
