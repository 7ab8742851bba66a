// Model-based test of the cursor broker (spec/event-log.md §4) against a plain reference: the list
// of every event appended, a count-bounded retention window, and per watcher the seq it has
// received. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isTroupeError } from '../../../src/core/errors.js';
import type { AgentEvent } from '../../../src/core/events.js';
import type { EventLog } from '../../../src/core/ports.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { chunk, tempDir } from '../../support/store/store-fixtures.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

const SID = 'ses_model';
/** How often each path was exercised: the run checks that every one of them was. */
const STATS: Record<string, number> = {};
const tally = (k: string): void => {
  STATS[k] = (STATS[k] ?? 0) + 1;
};

interface WatcherModel {
  cursor: number;
  pos: number;
  live: boolean;
  queueLimit: number;
  overflowPending: boolean;
  ended: boolean;
  received: number[];
}

interface Model {
  last: number;
  retain: number;
  closed: boolean;
  watchers: WatcherModel[];
  /** Text of each appended event, by seq - 1: what every reader must reproduce. */
  texts: string[];
  /** A file-backed log serves every evicted event from the file: it never has a gap. */
  fileBacked: boolean;
}

interface Real {
  log: EventLog & { droppedThrough(): number };
  iters: AsyncIterator<AgentEvent>[];
  closers: (() => void)[];
}

/** it.next(), failing instead of hanging if an event the model expects never comes (a hole at the seam). */
let stallMs = 10;
async function nextOrStall(it: AsyncIterator<AgentEvent>, expected: number): Promise<IteratorResult<AgentEvent>> {
  let timer: NodeJS.Timeout | undefined;
  // In memory an available event arrives within microtasks, before any timer; file reads get longer.
  const stall = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`watcher stalled waiting for seq ${expected}, which exists`)), stallMs);
  });
  try {
    return await Promise.race([it.next(), stall]);
  } finally {
    clearTimeout(timer);
  }
}

const dropped = (m: Model): number => Math.max(0, m.last - m.retain);
/** The gap rule: events after `cursor` are unservable iff memory evicted them and no file has them. */
const unservable = (m: Model, cursor: number): boolean => !m.fileBacked && cursor < dropped(m);

class Emit implements fc.AsyncCommand<Model, Real> {
  constructor(readonly n: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    tally('emit');
    for (let i = 0; i < this.n; i++) {
      const text = `e${m.last + 1}`;
      if (m.closed) {
        assert.throws(() => r.log.append(chunk(SID, text)), (e: unknown) => isTroupeError(e, 'session_closed'));
        return;
      }
      for (const w of m.watchers) {
        if (w.live && !w.ended && !w.overflowPending && m.last - w.pos >= w.queueLimit) {
          w.overflowPending = true;
          w.live = false;
        }
      }
      const e = r.log.append(chunk(SID, text));
      m.last++;
      m.texts.push(text);
      assert.equal(e.seq, m.last);
    }
    assert.equal(r.log.droppedThrough(), dropped(m), 'droppedThrough is the highest evicted seq');
  }
  toString = (): string => `emit(${this.n})`;
}

class Subscribe implements fc.AsyncCommand<Model, Real> {
  /** `thenEmit` events are appended in the same synchronous step as the subscribe: the seam. */
  constructor(readonly frac: number, readonly beyond: number, readonly queueLimit: number, readonly thenEmit: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const cursor = this.beyond > 0 ? m.last + this.beyond : Math.floor(this.frac * m.last);
    if (cursor > m.last) {
      assert.throws(() => r.log.subscribe(cursor, { queueLimit: this.queueLimit }), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
      return;
    }
    const w = r.log.subscribe(cursor, { queueLimit: this.queueLimit });
    r.iters.push(w[Symbol.asyncIterator]());
    r.closers.push(() => w.close());
    m.watchers.push({ cursor, pos: cursor, live: cursor === m.last && !m.closed, queueLimit: this.queueLimit, overflowPending: false, ended: false, received: [] });
    if (this.thenEmit > 0) await new Emit(this.thenEmit).run(m, r);
  }
  toString = (): string => `subscribe(${this.beyond > 0 ? `last+${this.beyond}` : this.frac.toFixed(2)}, q=${this.queueLimit}, then emit ${this.thenEmit})`;
}

class Pull implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number, readonly k: number) {}
  check = (m: Readonly<Model>): boolean => m.watchers.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const i = this.pick % m.watchers.length;
    const w = m.watchers[i]!;
    const it = r.iters[i]!;
    for (let n = 0; n < this.k; n++) {
      if (w.ended) {
        assert.equal((await it.next()).done, true, 'an ended watcher stays ended');
        return;
      }
      if (w.overflowPending) {
        await assert.rejects(it.next(), (e: unknown) => isTroupeError(e, 'event_overflow'));
        w.overflowPending = false;
        w.ended = true;
        tally('overflow');
        continue;
      }
      if (w.live) {
        if (w.pos === m.last) {
          if (!m.closed) return; // nothing to pull: a stalled read would wait for the next emit
          assert.equal((await it.next()).done, true, 'closed log: the end after every accepted event');
          w.ended = true;
          continue;
        }
      } else if (w.pos === m.last) {
        assert.ok(m.closed);
        assert.equal((await it.next()).done, true);
        w.ended = true;
        continue;
      } else if (unservable(m, w.pos)) {
        await assert.rejects(it.next(), (e: unknown) => isTroupeError(e, 'replay_gap'), `gap expected at ${w.pos} (dropped ${dropped(m)})`);
        tally('gap');
        w.ended = true;
        continue;
      }
      if (m.fileBacked && !w.live && w.pos < dropped(m)) tally('coldEvent');
      const res = await nextOrStall(it, w.pos + 1);
      assert.equal(res.done, false, `watcher ${i} at ${w.pos} expects seq ${w.pos + 1}`);
      const e = res.value as AgentEvent & { text: string };
      assert.equal(e.seq, w.pos + 1, 'no hole, no duplicate');
      assert.equal(e.text, m.texts[e.seq - 1]);
      w.pos = e.seq;
      w.received.push(e.seq);
      tally(w.live ? 'liveEvent' : 'catchupEvent');
      if (!w.live && w.pos === m.last && !m.closed) w.live = true;
    }
  }
  toString = (): string => `pull(w${this.pick}, ${this.k})`;
}

class CloseWatcher implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>): boolean => m.watchers.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const i = this.pick % m.watchers.length;
    r.closers[i]!();
    const w = m.watchers[i]!;
    w.ended = true;
    w.overflowPending = false;
    w.live = false;
    assert.equal((await r.iters[i]!.next()).done, true);
  }
  toString = (): string => `closeWatcher(w${this.pick})`;
}

class CloseLog implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>): boolean => !m.closed;
  async run(m: Model, r: Real): Promise<void> {
    await r.log.close();
    m.closed = true;
  }
  toString = (): string => 'closeLog';
}

class ReadAfter implements fc.AsyncCommand<Model, Real> {
  /** `maxBytes`: the page may stop early (at least one event), never skip or reorder one. */
  constructor(
    readonly frac: number,
    readonly limit: number,
    readonly maxBytes?: number,
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const cursor = Math.floor(this.frac * (m.last + 2));
    if (cursor > m.last) {
      await assert.rejects(r.log.readAfter(cursor), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
      return;
    }
    if (cursor < m.last && unservable(m, cursor)) {
      await assert.rejects(r.log.readAfter(cursor, { limit: this.limit }), (e: unknown) => isTroupeError(e, 'replay_gap'));
      return;
    }
    const page = await r.log.readAfter(cursor, { limit: this.limit, ...(this.maxBytes ? { maxBytes: this.maxBytes } : {}) });
    const all = Math.min(this.limit, m.last - cursor);
    const want = this.maxBytes ? page.events.length : all;
    assert.ok(want <= all && (want > 0 || all === 0), `${want} of ${all} events`);
    assert.deepEqual(page.events.map((e) => e.seq), Array.from({ length: want }, (_, j) => cursor + 1 + j));
    assert.equal(page.cursor, cursor + want);
    assert.equal(page.hasMore, cursor + want < m.last);
  }
  toString = (): string => `readAfter(${this.frac.toFixed(2)}, ${this.limit}${this.maxBytes ? `, ${this.maxBytes} bytes` : ''})`;
}

const emit = fc.integer({ min: 1, max: 8 }).map((n) => new Emit(n));
const pull = fc.tuple(fc.nat(), fc.integer({ min: 1, max: 20 })).map(([p, k]) => new Pull(p, k));
const commands = [
  emit,
  emit,
  pull,
  pull,
  pull,
  fc.tuple(
    fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(1)),
    fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
    fc.integer({ min: 1, max: 24 }),
    fc.integer({ min: 0, max: 4 }),
  ).map(([f, b, q, n]) => new Subscribe(f, b, q, n)),
  // Closing ends the interesting part of a run, so it is rare; a final close always happens.
  fc.oneof({ weight: 1, arbitrary: fc.constant<fc.AsyncCommand<Model, Real>>(new CloseLog()) }, { weight: 2, arbitrary: fc.nat().map((p) => new CloseWatcher(p)) }, { weight: 6, arbitrary: emit }),
  fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 20 })).map(([f, l]) => new ReadAfter(f, l)),
  // A few events' bytes (each is about 150): pages that stop early, from memory and from the file.
  fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 1000 })).map(([f, l, b]) => new ReadAfter(f, l, b)),
];

async function runModel(cmds: Iterable<fc.AsyncCommand<Model, Real>>, model: Model, real: Real): Promise<void> {
  await fc.asyncModelRun(() => ({ model, real }), cmds);
  // Final drain after close: every watcher that has not ended receives exactly the rest, then ends.
  await real.log.close();
  model.closed = true;
  for (let i = 0; i < model.watchers.length; i++) await new Pull(i, 1000).run(model, real);
  for (const w of model.watchers) {
    assert.ok(w.ended, 'every watcher ends once the log is closed and drained');
    assert.deepEqual(w.received, Array.from({ length: w.received.length }, (_, j) => w.cursor + 1 + j));
  }
}

test('broker against the reference model: replay + live, gaps, overflow, close', async () => {
  stallMs = 10;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 25 }), fc.commands(commands, { maxCommands: 80, size: 'max' }), async (retain, cmds) => {
      const model: Model = { last: 0, retain, closed: false, watchers: [], texts: [], fileBacked: false };
      const real: Real = { log: new MemoryEventLog({ sessionId: SID, retention: { maxEvents: retain } }), iters: [], closers: [] };
      await runModel(cmds, model, real);
    }),
    { seed, numRuns: 1000 },
  );
  console.log('model paths exercised', JSON.stringify(STATS));
  for (const path of ['emit', 'catchupEvent', 'liveEvent', 'gap', 'overflow']) assert.ok((STATS[path] ?? 0) > 0, `the generator never exercised ${path}`);
});

test('file-backed broker against the same model: evicted cursors are served from the file, never a gap', async () => {
  stallMs = 5000;
  const { dir, cleanup } = tempDir('troupe-model-');
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 25 }), fc.commands(commands, { maxCommands: 60, size: 'max' }), async (retain, cmds) => {
        const log = await FileEventLog.create(`${dir}/run${run++}.log`, { sessionId: SID, retention: { maxEvents: retain }, durability: { sync: 'never', groupCommitMs: 10_000 } });
        const model: Model = { last: 0, retain, closed: false, watchers: [], texts: [], fileBacked: true };
        await runModel(cmds, model, { log, iters: [], closers: [] });
      }),
      { seed, numRuns: 150 },
    );
    assert.ok((STATS.coldEvent ?? 0) > 0, 'the generator never made a watcher read evicted events from the file');
  } finally {
    cleanup();
  }
});

test('order holds under interleaved emits and concurrent consumers (fc.scheduler)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.scheduler(),
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 1, max: 64 })), { minLength: 1, maxLength: 4 }),
      async (s, producers, consumers) => {
        const log = new MemoryEventLog({ sessionId: SID });
        const results: { cursor: number; seqs: number[]; error?: unknown }[] = [];
        const produce = async (p: number, bursts: number): Promise<void> => {
          for (let b = 0; b < bursts; b++) {
            await s.schedule(Promise.resolve(`p${p}b${b}`));
            for (let i = 0; i < 3; i++) log.append(chunk(SID, `p${p}b${b}i${i}`));
          }
        };
        const consume = async (offset: number, queueLimit: number): Promise<void> => {
          await s.schedule(Promise.resolve(`sub${offset}`));
          const cursor = Math.max(0, log.lastSeq() - offset);
          const r: { cursor: number; seqs: number[]; error?: unknown } = { cursor, seqs: [] };
          results.push(r);
          try {
            for await (const e of log.subscribe(cursor, { queueLimit })) r.seqs.push(e.seq);
          } catch (err) {
            r.error = err;
          }
        };
        const tasks = [...producers.map((b, p) => produce(p, b)), ...consumers.map(([o, q]) => consume(o, q))];
        const producing = Promise.all(tasks.slice(0, producers.length));
        await s.waitFor(producing);
        await s.waitAll();
        await log.close();
        await Promise.all(tasks);
        const all = (await log.readAfter(0, { limit: 10_000 })).events;
        assert.deepEqual(all.map((e) => e.seq), Array.from({ length: all.length }, (_, i) => i + 1));
        for (const r of results) {
          assert.deepEqual(r.seqs, Array.from({ length: r.seqs.length }, (_, j) => r.cursor + 1 + j), 'in order, no hole, no duplicate');
          if (r.error === undefined) assert.equal(r.cursor + r.seqs.length, all.length, 'a consumer that did not overflow saw everything');
          else assert.ok(isTroupeError(r.error, 'event_overflow'), String(r.error));
        }
      },
    ),
    { seed, numRuns: 300 },
  );
});
