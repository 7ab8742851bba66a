/** A session log of several scan slices, and the daemon's feeds on its home (test/unit/daemon/session-feeds*.test.ts). */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import type { AgentEvent } from '../../src/core/events.js';
import type { EventWatcher } from '../../src/core/ports.js';
import { SessionFeeds } from '../../src/daemon/session-feeds.js';
import { FileEventLog } from '../../src/store/file-event-log.store.js';
import { SCAN_SLICE_BYTES } from '../../src/store/log-file.reader.js';
import { makeDirs, sessionLogPath, sessionsDir } from '../../src/store/paths.js';
import { chunk, drain, tempDir } from './store/store-fixtures.js';

export const SID = 'ses_long';
/** Events of 1 MB: a log of three scan slices and a bit in 25 of them. */
export const BIG = 1_000_000;
export const N = Math.ceil((3 * SCAN_SLICE_BYTES) / BIG) + 1;
/** A turn of the loop: a paced scan does one slice per turn. */
export const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** A home with one session whose log holds `N` events of a megabyte, each its seq repeated, each its own record. */
export async function longLog(t: { after(f: () => unknown): void }): Promise<{ home: string; path: string; feeds: SessionFeeds }> {
  const { dir: home, cleanup } = tempDir();
  t.after(cleanup);
  makeDirs(sessionsDir(home), 0o700);
  const log = await FileEventLog.forSession(sessionsDir(home), SID, { create: true, maxEventBytes: 2 * BIG });
  for (let i = 1; i <= N; i++) log.append(chunk(SID, String(i % 10).repeat(BIG)));
  await log.close();
  const path = sessionLogPath(sessionsDir(home), SID);
  assert.ok(statSync(path).size > 3 * SCAN_SLICE_BYTES);
  const feeds = new SessionFeeds(home);
  t.after(() => feeds.close());
  return { home, path, feeds };
}

/** The first `n` events a watcher yields (a live watcher does not end by itself); the watcher is closed after. */
export async function take(w: EventWatcher, n: number): Promise<AgentEvent[]> {
  const { items, error } = await drain(w, n);
  assert.equal(error, undefined);
  return items;
}
