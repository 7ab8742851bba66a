// The session host's create: a new session is reported only once its session_created is durable
// (a barrier, spec/event-log.md §3), and a log made ahead (a spare) is used and not made twice.
// Hosts of one process can share one session index. A replay of a live session is never interleaved
// with what the session emits meanwhile. A reopen that fails once its engine has started leaves its
// daemon what an unload does, and ends the report of its machines; so does a create that fails at
// its barrier, which also removes the log it made. A session opening as the host shuts down is closed
// by the shutdown, its request refused capacity_exceeded.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import type { InspectionEvent } from 'xstate';
import { HISTORY_PAGE_BYTES, silentLogger } from '../../../src/core/ports.js';
import { SessionHost } from '../../../src/acp/session-host.js';
import { loadConfig } from '../../../src/providers/config.js';
import { FileEventLog, SessionIndex, sessionsDir } from '../../../src/store/index.js';
import type { AgentEventInput } from '../../../src/core/events.js';
import type { SessionReporter } from '../../../src/acp/control-channel.js';
import { SessionEngine, type EngineOptions } from '../../../src/actors/session-engine.js';
import { transitionRecorder } from '../../../src/machines/transition-recorder.js';
import { MachineHub } from '../../../src/daemon/machine-hub.js';

/**
 * What the host hands the engine to report its transitions, caught as `SessionEngine[made]` is called
 * (the real one runs; both take the engine's options fourth).
 */
function reportsHandedTo(t: TestContext, made: 'create' | 'open'): ((ev: InspectionEvent) => void)[] {
  const reports: ((ev: InspectionEvent) => void)[] = [];
  const engine = SessionEngine as unknown as Record<typeof made, (...args: unknown[]) => unknown>;
  const real = engine[made];
  engine[made] = (...args) => {
    const inspect = (args[3] as EngineOptions | undefined)?.inspect;
    if (inspect) reports.push(inspect);
    return real.apply(SessionEngine, args);
  };
  t.after(() => void (engine[made] = real));
  return reports;
}

async function host(): Promise<{ h: SessionHost; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger });
  // create() builds the session's tools for a client; it never calls it.
  h.attach({} as acp.AgentContext, {});
  return { h, home };
}

test('create returns once session_created is durable', async (t) => {
  const { h, home } = await host();
  t.after(() => h.shutdown());
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  assert.equal(live.log.lastSeq(), 1);
  assert.equal(live.log.durableSeq(), 1, 'fdatasynced before the session is reported');
});

test('a spare log made ahead is the next session; an unused one is removed at shutdown', async () => {
  const { h, home } = await host();
  h.prepareSpareLog();
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  assert.deepEqual(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')), [`${live.engine.sessionId}.log`], 'the spare became the session: no other log');
  h.prepareSpareLog();
  // Let the second spare's file appear, then shut down without using it.
  for (let i = 0; i < 200 && readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')).length, 2);
  await h.shutdown();
  assert.deepEqual(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')), [`${live.engine.sessionId}.log`]);
});

test('hosts given one index share it: what one creates, the other lists at once', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  const index = await SessionIndex.open(sessionsDir(home), { logger: silentLogger });
  const open = async () => {
    const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger, index });
    h.attach({} as acp.AgentContext, {});
    return h;
  };
  const [a, b] = [await open(), await open()];
  t.after(async () => {
    await a.shutdown();
    await b.shutdown();
  });
  assert.equal(a.index, index);
  assert.equal(b.index, index);
  const live = await a.create({ cwd: home, additionalDirectories: [] });
  // The index is updated in the background (after session_created is durable).
  for (let i = 0; i < 200 && !b.index.get(live.engine.sessionId); i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(b.index.get(live.engine.sessionId)?.cwd, home, 'the other host sees the session without reading the file again');
});

test('a replay of a live session is whole and in order: what the session emits meanwhile follows it', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  // What reaches the client, in order: live updates (the host's line writer), the replay's first
  // update (through the SDK: held here until the session has emitted one more event) and the
  // replay's other lines.
  const seqs: number[] = [];
  const seqOf = (line: string) => JSON.parse(line).params.update._meta.troupe.seq as number;
  let holdSdk: Promise<void> | undefined;
  const client = {
    notify: async (_method: string, n: acp.SessionNotification) => {
      seqs.push((n.update._meta as any).troupe.seq);
      await holdSdk;
    },
  } as unknown as acp.AgentContext;
  const updateLines = (text: string) => void text.split('\n').filter(Boolean).forEach((l) => seqs.push(seqOf(l)));
  const writeLines = async (text: string) => updateLines(text);
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger, updateLines });
  t.after(() => h.shutdown());
  h.attach(client, {});
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  live.engine.configure({ mode: 'plan' });
  live.engine.configure({ mode: 'accept-edits' });
  const history = [...seqs];
  assert.deepEqual(history, [2, 3]);
  seqs.length = 0;
  let release!: () => void;
  holdSdk = new Promise((resolve) => (release = resolve));
  const { UpdateReplay } = await import('../../../src/acp/session-replay.js');
  const replaying = h.updates.replay(live, new UpdateReplay(client, h.projectionCaps, writeLines));
  // The replay has sent its first update; the session goes on meanwhile (a turn streaming, say).
  for (let i = 0; i < 100 && seqs.length === 0; i++) await new Promise((r) => setImmediate(r));
  live.engine.configure({ mode: 'bypass' });
  release();
  await replaying;
  for (let i = 0; i < 100 && seqs.length < 3; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(seqs, [2, 3, 4], 'the history whole and in order, then what came during the replay');
});

test('a replay of a live session reads its log in pages of at most HISTORY_PAGE_BYTES (a page of 1024 content parts was a GiB)', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  const client = { notify: async () => undefined } as unknown as acp.AgentContext;
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger });
  t.after(() => h.shutdown());
  h.attach(client, {});
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  const read = live.log.readAfter.bind(live.log);
  const asked: (number | undefined)[] = [];
  live.log.readAfter = (cursor, options) => (asked.push(options?.maxBytes), read(cursor, options));
  const { UpdateReplay } = await import('../../../src/acp/session-replay.js');
  await h.updates.replay(live, new UpdateReplay(client, h.projectionCaps));
  assert.ok(asked.length > 0);
  assert.deepEqual(asked, asked.map(() => HISTORY_PAGE_BYTES));
});

test('a session asked for while it is being unloaded opens again once its log is closed, not refused as locked', async (t) => {
  const { h, home } = await host();
  t.after(() => h.shutdown());
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  const id = live.engine.sessionId;
  // The idle sweep unloads it as a request for it arrives.
  const unloaded = h.unload(id);
  const again = await h.get(id);
  await unloaded;
  assert.notEqual(again, live, 'opened again from its log');
  assert.equal(again.log.lastSeq(), live.log.lastSeq());
  assert.ok(h.isOpen(id));
});

test('a reopen that fails after its engine started leaves the daemon what an unload does, and reports nothing more', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  // The daemon's side: transitions as the control channel sends them (transitionRecorder), folded by
  // the daemon's hub. Events reported fail once `failing` (the reopen then fails in its catch-up).
  const hub = new MachineHub();
  const recorders = new Map<string, (ev: InspectionEvent) => void>();
  let init: InspectionEvent | undefined;
  let failing = false;
  const reporter: SessionReporter = {
    event: () => {
      if (failing) throw new Error('the control channel failed');
    },
    indexed: () => undefined,
    transition: (sessionId, ev) => {
      if (ev.type === '@xstate.snapshot' && ev.event.type === 'xstate.init') init = ev;
      let record = recorders.get(sessionId);
      if (!record) recorders.set(sessionId, (record = transitionRecorder((tr) => hub.record(sessionId, tr))));
      record(ev);
    },
  };
  const reports = reportsHandedTo(t, 'open');
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger, reporter });
  t.after(() => h.shutdown());
  h.attach({ notify: async () => undefined } as unknown as acp.AgentContext, {});
  const id = (await h.create({ cwd: home, additionalDirectories: [] })).engine.sessionId;
  await h.unload(id);
  const unloaded = hub.states(id);
  assert.deepEqual(unloaded, { session: 'idle' }, 'an unload reports nothing when the session leaves');
  // A turn its process left open: the reopen ends it in the log, then reports the events it added.
  const log = await FileEventLog.forSession(sessionsDir(home), id, { logger: silentLogger });
  log.append({ type: 'user_message', sessionId: id, turnId: 't1', messageId: 'u1', content: [{ type: 'text', text: 'go' }] } as AgentEventInput);
  log.append({ type: 'turn_started', sessionId: id, turnId: 't1', maxSteps: 10 } as AgentEventInput);
  await log.whenDurable(log.lastSeq());
  await log.close();
  failing = true;
  const seen = hub.lastN;
  await assert.rejects(h.get(id), /the control channel failed/);
  assert.ok(hub.lastN > seen, 'the engine had started: its init was reported');
  assert.equal(h.isOpen(id), false);
  assert.deepEqual(hub.states(id), unloaded, 'the picture an unload leaves');
  // The session has left this process: a report of its machines from now on would reach the daemon
  // as this process running it (here its session machine's first state, told again).
  const after = hub.lastN;
  reports.at(-1)!(init!);
  assert.equal(hub.lastN, after, 'the report handed to the engine was ended');
});

test('a create whose session_created cannot be made durable removes its log and reports nothing more', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  const told: string[] = [];
  const reporter: SessionReporter = { event: () => undefined, indexed: () => undefined, transition: (sessionId) => void told.push(sessionId) };
  const reports = reportsHandedTo(t, 'create');
  // The barrier fails as a full disk would fail it.
  const realWhenDurable = FileEventLog.prototype.whenDurable;
  FileEventLog.prototype.whenDurable = () => Promise.reject(new Error('ENOSPC: no space left on device'));
  t.after(() => void (FileEventLog.prototype.whenDurable = realWhenDurable));
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger, reporter });
  t.after(() => h.shutdown());
  h.attach({} as acp.AgentContext, {});
  await assert.rejects(h.create({ cwd: home, additionalDirectories: [] }), /ENOSPC/);
  assert.deepEqual(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')), [], 'no log left behind');
  assert.equal(reports.length, 1);
  const sessionId = told[0]!;
  assert.ok(sessionId, 'the engine had started: its first state was reported');
  const before = told.length;
  reports[0]!({ type: '@xstate.event', actorRef: {} as never, rootId: 'x', sourceRef: undefined, event: { type: 'x' } } as InspectionEvent);
  assert.equal(told.length, before, 'the report handed to the engine was ended');
});

test('a session being opened as the host shuts down is not left open: its log is closed (and unlocked), its request and later ones refused capacity_exceeded', async () => {
  const first = await host();
  const id = (await first.h.create({ cwd: first.home, additionalDirectories: [] })).engine.sessionId;
  await first.h.shutdown();
  const env = { HOME: first.home, TROUPE_HOME: first.home, TROUPE_MODEL: 'scripted/demo' };
  const h = await SessionHost.open({ home: first.home, env, config: loadConfig(env), logger: silentLogger });
  h.attach({} as acp.AgentContext, {});
  // Asked for (a session/load, a prompt) just as the shutdown begins: its log opens meanwhile.
  const opening = h.get(id).then(
    (live) => ({ live }),
    (error: unknown) => ({ error }),
  );
  await h.shutdown();
  const outcome = await opening;
  assert.equal(h.isOpen(id), false, 'not left open after the shutdown');
  // The log is let go: another process can open it (a log left open keeps its lock).
  const log = await FileEventLog.forSession(sessionsDir(first.home), id, { logger: silentLogger });
  await log.close();
  // The request that asked for it is refused: its session is one whose process is exiting.
  assert.equal((outcome as { error?: { code?: string } }).error?.code, 'capacity_exceeded', JSON.stringify(Object.keys(outcome)));
  await assert.rejects(h.get(id), (err: { code?: string }) => err.code === 'capacity_exceeded');
});
