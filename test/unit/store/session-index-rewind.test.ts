// A log that holds less than its index entry says (a machine crash kept only what was synced, a
// damaged tail was cut): once the log is opened, the entry follows it (spec/event-log.md §6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { sessionLogPath } from '../../../src/store/paths.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { logCatchUp, type LogCatchUp } from '../../../src/store/session-log-entry.js';
import { chunk, cutAfterCreation, sessionCreated, steppingClock, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

test('catchUp of a log cut short: the entry is the log\'s again (lastSeq, title, mode), stays failed, and another process\'s stale copy does not undo it', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const clock = steppingClock();
    const id = 'ses_cut';
    const written = await FileEventLog.forSession(dir, id, { create: true, clock });
    // A record each (appends of one turn of the loop share one).
    for (const input of [sessionCreated(id, dir), { type: 'session_configured', sessionId: id, title: 'Lost with the crash', mode: 'plan' } as const, turnCompleted(id)]) {
      await written.whenDurable(written.append(input).seq);
    }
    await written.close();
    const a = await SessionIndex.open(dir, { clock });
    assert.deepEqual([a.get(id)?.title, a.get(id)?.lastSeq], ['Lost with the crash', 3]);
    await a.setStatus(id, 'failed');
    cutAfterCreation(sessionLogPath(dir, id));
    // Another process writes the index meanwhile: its copy of the entry is the old one.
    const b = await SessionIndex.open(dir, { clock });
    await b.create({ id: 'ses_other', cwd: dir, model: 'm', mode: 'default', createdAt: clock.now() });

    clock.advance(1000);
    const log = await FileEventLog.forSession(dir, id, { clock });
    await a.catchUp(id, log);
    await log.close();
    const expected = ['failed', 1, undefined, 'default'];
    const of = (i: SessionIndex) => [i.get(id)?.status, i.get(id)?.lastSeq, i.get(id)?.title, i.get(id)?.mode];
    assert.deepEqual(of(a), expected);
    const reopened = await SessionIndex.open(dir);
    assert.deepEqual(of(reopened), expected, 'written, over the other process\'s copy');
    assert.ok(reopened.get('ses_other'), 'and the other process\'s entry is kept');
    await b.refresh();
    assert.deepEqual(of(b), expected, 'the other process takes it');
  } finally {
    cleanup();
  }
});

test('logCatchUp, the one reading for the agent\'s index and a daemon\'s child: the indexed events past the entry, or all of them with `rewound` when the log holds less', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const id = 'ses_read';
    const written = await FileEventLog.forSession(dir, id, { create: true });
    for (const input of [sessionCreated(id, dir), chunk(id, 'not indexed'), { type: 'session_configured', sessionId: id, title: 'T' } as const, turnCompleted(id)]) {
      await written.whenDurable(written.append(input).seq);
    }
    const seqsOf = (c: LogCatchUp) => [c.events.map((e) => e.seq), c.rewound];
    // The entry is behind the log: what it has not folded, chunks left out.
    assert.deepEqual(seqsOf(await logCatchUp(written, { entrySeq: 1, heldSeq: 4 })), [[3, 4], undefined]);
    // Level with it: nothing.
    assert.deepEqual(seqsOf(await logCatchUp(written, { entrySeq: 4, heldSeq: 4 })), [[], undefined]);
    // The log held less than the entry once opened: every indexed event, to make the entry from.
    assert.deepEqual(seqsOf(await logCatchUp(written, { entrySeq: 9, heldSeq: 4 })), [[1, 3, 4], 4]);
    await written.close();
  } finally {
    cleanup();
  }
});
