// The replay the inspector's picture of a session (GET /v1/sessions/:id/inspect) is drawn from, over
// a real log of several scan slices and the real index's delete: a session deleted while its log is
// read, and one whose log is a tombstone the daemon's index does not know of (the window between a
// delete's tombstone and its index mark, or another process's delete), are refused
// session_not_found with `data.deleted`, as the inspector's /replay refuses one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayForPicture } from '../../../src/daemon/inspector/picture-replay.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { replaySession } from '../../../src/machines/replay.js';
import { longLog, nextTurn, SID } from '../../support/long-feed-log.js';

const goneDeleted = (err: any) => err.code === 'session_not_found' && err.data?.deleted === true && err.data?.sessionId === SID;

test('a session deleted while its picture is read from its log is refused session_not_found (deleted)', async (t) => {
  const { home, path } = await longLog(t);
  const index = await SessionIndex.open(sessionsDir(home));
  await index.applyEvents((await readLogFile(path)).events.slice(0, 1));
  const whole = replaySession((await readLogFile(path)).events);
  // Read as the daemon reads it: the same index, the same pause, nobody deleting.
  const deleted = () => index.get(SID)?.status === 'deleted';
  assert.deepEqual(await replayForPicture(path, SID, { deleted, pause: nextTurn }), whole);
  // The delete comes, whole (tombstone and index mark), at the read's first pause.
  let deleting: Promise<void> | undefined;
  const pause = async () => {
    deleting ??= index.tombstone(SID);
    await deleting;
  };
  // Until 2026-12-07 the route answered what it read, next to the entry it had read before the delete.
  await assert.rejects(replayForPicture(path, SID, { deleted, pause }), goneDeleted);
  assert.ok(deleted());
});

test("a log that is a tombstone the daemon's index does not know of is refused session_not_found (deleted), not replayed as the session", async (t) => {
  const { home, path } = await longLog(t);
  // Another process's index (an editor's agent on this home): the daemon's is not told.
  await (await SessionIndex.open(sessionsDir(home))).tombstone(SID);
  assert.equal(sessionLogPath(sessionsDir(home), SID), path);
  // Until 2026-12-07 the tombstone's one event was replayed as the session's machines.
  await assert.rejects(replayForPicture(path, SID, { deleted: () => false, pause: nextTurn }), goneDeleted);
});

test('a session with no log is session_not_found, not deleted', async (t) => {
  const { path } = await longLog(t);
  await assert.rejects(replayForPicture(`${path}.missing`, SID, { deleted: () => false, pause: nextTurn }), (err: any) => err.code === 'session_not_found' && err.data?.deleted === undefined);
});
