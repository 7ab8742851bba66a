// Property test of the session index file (spec/event-log.md §6): whatever the order of changes, by
// this process or another one sharing the file, the file is the plain JSON layout, sorted by id, and
// holds exactly the index as its last writer has it. The writer caches the file's bytes per block
// of entries, and keeps its ids sorted as they are added: this is what would show a stale block or
// an id out of place. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { steppingClock, tempDir } from '../../support/store/store-fixtures.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

type Op =
  | { kind: 'add'; by: 'us' | 'them'; keys: number[]; atEnd: boolean }
  | { kind: 'status'; by: 'us' | 'them'; picks: number[]; status: 'active' | 'closed' | 'failed' }
  | { kind: 'title'; picks: number[]; title: string };

const picks = fc.array(fc.nat(), { minLength: 1, maxLength: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  // Up to 300 sessions at a time: a few operations span several blocks of the file.
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('add' as const), by: fc.constantFrom('us' as const, 'them' as const), keys: fc.array(fc.nat(999_999), { minLength: 100, maxLength: 300 }), atEnd: fc.boolean() }),
  },
  // Up to 40 sessions changed at a time, anywhere: some are the first or last of a block.
  fc.record({ kind: fc.constant('status' as const), by: fc.constantFrom('us' as const, 'them' as const), picks, status: fc.constantFrom('active' as const, 'closed' as const, 'failed' as const) }),
  fc.record({ kind: fc.constant('title' as const), picks, title: fc.string({ maxLength: 12 }) }),
);

test('the index file is always the plain layout, sorted by id, and exactly what its last writer holds', async () => {
  let runs = 0;
  let most = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 10 }), async (ops) => {
      runs++;
      const { dir, cleanup } = tempDir('troupe-index-prop-');
      try {
        const clock = steppingClock();
        const us = await SessionIndex.open(dir, { clock });
        const them = await SessionIndex.open(dir, { clock });
        const ids: string[] = [];
        let serial = 0;
        let seq = 1;
        /** The index that wrote the file last: an operation that changes nothing writes nothing. */
        let lastWriter = us;
        for (const o of ops) {
          clock.advance(1);
          const writer = o.kind !== 'title' && o.by === 'them' ? them : us;
          if (o.kind === 'add') {
            // Random keys land anywhere in the sorted order; `atEnd` ones after every id so far, as
            // time-ordered ids do.
            const fresh = o.keys.map((k) => (o.atEnd ? `ses_z${String(serial++).padStart(6, '0')}` : `ses_${String(k).padStart(6, '0')}`)).filter((id, i, all) => !ids.includes(id) && all.indexOf(id) === i);
            ids.push(...fresh);
            if (fresh.length > 0) lastWriter = writer;
            await Promise.all(fresh.map((id) => writer.adopt({ id, cwd: '/p', model: 'm', mode: 'default', createdAt: clock.now() })));
          } else if (o.kind === 'status') {
            if (ids.length > 0) {
              await Promise.all(o.picks.map((k) => writer.setStatus(ids[k % ids.length]!, o.status)));
              lastWriter = writer;
            }
          } else if (ids.length > 0) {
            // Events fold into an entry the index has (a daemon's child reports only its own sessions).
            await us.refresh();
            lastWriter = us;
            await us.applyEvents(o.picks.map((k) => ({ type: 'session_configured', sessionId: ids[k % ids.length]!, title: o.title, seq: seq++, ts: clock.now() }) as AgentEvent));
          }
          await lastWriter.flush();
          const text = readFileSync(us.path, 'utf8');
          assert.equal(text, JSON.stringify(JSON.parse(text), null, 1) + '\n', 'the plain JSON layout');
          const onDisk = (JSON.parse(text) as { sessions: { id: string }[] }).sessions;
          assert.deepEqual(
            onDisk.map((s) => s.id),
            [...ids].sort(),
            'every session, sorted by id',
          );
          // The writer merged the other's entries before it wrote: it holds them all.
          for (const s of onDisk) assert.deepEqual(s, lastWriter.get(s.id), `the entry of ${s.id} as its last writer holds it`);
        }
        most = Math.max(most, ids.length);
        const reopened = await SessionIndex.open(dir);
        assert.deepEqual(
          reopened.list({ limit: 10_000, includeDeleted: true }).sessions.map((s) => s.id).sort(),
          [...ids].sort(),
        );
      } finally {
        cleanup();
      }
    }),
    { seed, numRuns: 25 },
  );
  assert.equal(runs >= 25, true);
  // Blocks hold 256 entries: some run must have changed a file of three or more.
  assert.ok(most > 512, `the largest index had ${most} sessions`);
  console.log('largest index', most);
});
