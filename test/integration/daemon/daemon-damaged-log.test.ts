// A session whose log is damaged, seen through the management API (spec/daemon.md §Management API,
// spec/event-log.md §2, §6): a HEAD of its events answers as its GET does, and the listing says that
// it cannot be opened; so does an ACP session/list (`_meta.troupe`), with a failed session's status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { Daemon, seqOfFeedId, tempDir, waitFor, type AcpClient, daemonWithClient } from '../../support/daemon.js';
import { readSse, type SseMessage } from '../../../src/cli/sse.reader.js';
import { scanLogFile, sessionIndexPath, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';
import { entryFromLog } from '../../../src/store/session-log-entry.js';
import { silentLogger } from '../../../src/core/ports.js';
import { cutAfterCreation, indexWrittenAfterLogs } from '../../support/store/store-fixtures.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };
const prompt = (c: AcpClient, sessionId: string) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });

/** A daemon with two sessions that each ran a turn, stopped: their logs are left to be damaged. */
async function stoppedWithSessions(t: { after(f: () => unknown): void }): Promise<{ home: string; ids: string[] }> {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
    assert.equal((await prompt(c, sessionId)).stopReason, 'end_turn');
    ids.push(sessionId);
  }
  c.close();
  await d.stop();
  return { home: d.home, ids };
}

async function restarted(t: { after(f: () => unknown): void }, home: string): Promise<{ d: Daemon; ask: (method: 'GET' | 'HEAD', id: string, after: number) => Promise<Response> }> {
  const d = await Daemon.start({ script, home });
  t.after(() => d.stop());
  const ask = (method: 'GET' | 'HEAD', id: string, after: number) => fetch(`${d.url}/v1/sessions/${id}/events?after=${after}`, { method, headers: d.headers });
  return { d, ask };
}

test('a log damaged after the index was written holds fewer events than the index says: HEAD of its events refuses the cursors its GET refuses, with the same status', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const id = ids[0]!;
  const indexed: number = JSON.parse(readFileSync(sessionIndexPath(sessionsDir(home)), 'utf8')).sessions.find((s: { id: string }) => s.id === id).lastSeq;
  // A flipped byte in the last record: it fails its CRC, and the log ends before it.
  const path = sessionLogPath(sessionsDir(home), id);
  const bytes = readFileSync(path);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  writeFileSync(path, bytes);
  const held = scanLogFile(path).lastSeq;
  assert.ok(held < indexed, `the log holds ${held}, the index says ${indexed}`);

  const { ask } = await restarted(t, home);
  // HEADs first: a GET opens the feed, after which the daemon knows what the log holds anyway.
  // Until 2026-12-06 the HEAD took the index's word: 200 where the GET was 400 invalid_cursor.
  const heads = [await ask('HEAD', id, indexed), await ask('HEAD', id, held)];
  const gets = [await ask('GET', id, indexed), await ask('GET', id, held)];
  assert.deepEqual(
    heads.map((r) => r.status),
    gets.map((r) => r.status),
  );
  assert.deepEqual(
    gets.map((r) => r.status),
    [400, 200],
  );
  assert.equal(((await gets[0]!.json()) as { error: { code: string } }).error.code, 'invalid_cursor');
  await gets[1]!.body!.cancel();
  // The other session's log is whole: its cursors are served.
  assert.equal((await ask('HEAD', ids[1]!, indexed)).status, 200);
});

test('a log with a record that does not decode: listed with `damaged` (status kept), its HEAD and GET both 200, the GET ending in event: error log_corrupt', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const [bad, good] = ids as [string, string];
  const path = sessionLogPath(sessionsDir(home), bad);
  const lastSeq = scanLogFile(path).lastSeq;
  const offset = readFileSync(path).length;
  appendFileSync(path, frameRecord(new Packr().pack([lastSeq + 1, 1, 'not a list of events'])));
  // The index is rebuilt from the logs: that is where it reads them.
  rmSync(sessionIndexPath(sessionsDir(home)));

  const { d, ask } = await restarted(t, home);
  const listed = (await d.api('GET', '/v1/sessions')).json.sessions as { id: string; status: string; damaged?: unknown }[];
  const of = (id: string) => listed.find((s) => s.id === id)!;
  // Until 2026-12-06 it was listed `active` like the other, and nothing said it would not open.
  assert.deepEqual([of(bad).status, of(bad).damaged], ['active', { code: 'log_corrupt', offset }]);
  assert.deepEqual([of(good).status, of(good).damaged], ['active', undefined]);
  assert.deepEqual((await d.api('GET', `/v1/sessions/${bad}`)).json.damaged, { code: 'log_corrupt', offset });

  // Its feed serves what decodes, then says why it stops: the GET is 200, and so is its HEAD.
  assert.equal((await ask('HEAD', bad, 0)).status, 200);
  const get = await ask('GET', bad, 0);
  assert.equal(get.status, 200);
  const messages = [];
  for await (const m of readSse(get.body!, AbortSignal.timeout(30_000))) {
    messages.push(m);
    if (m.event !== 'event') break;
  }
  assert.equal(messages.at(-1)!.event, 'error');
  assert.equal(JSON.parse(messages.at(-1)!.data).code, 'log_corrupt');
});

test('session/list over ACP says what GET /v1/sessions says: a damaged log (`_meta.troupe.damaged`) and a failed session (`_meta.troupe.status`)', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const [bad, failed] = ids as [string, string];
  const path = sessionLogPath(sessionsDir(home), bad);
  const offset = readFileSync(path).length;
  appendFileSync(path, frameRecord(new Packr().pack([scanLogFile(path).lastSeq + 1, 1, 'not a list of events'])));
  const indexPath = sessionIndexPath(sessionsDir(home));
  const index = JSON.parse(readFileSync(indexPath, 'utf8'));
  // The other crashed past the restart intensity before the daemon stopped: its entry says so.
  index.sessions.find((s: { id: string }) => s.id === failed).status = 'failed';
  // The damaged one is read from its log, as a log the index does not know.
  index.sessions = index.sessions.filter((s: { id: string }) => s.id !== bad);
  writeFileSync(indexPath, JSON.stringify(index));

  const { d } = await restarted(t, home);
  const c = d.connect('ws');
  t.after(() => c.close());
  await c.init();
  // Through the SDK client, which parses the answer with its zod schema: `_meta` survives it.
  const listed = (await c.agent.request('session/list', {})).sessions;
  const troupeOf = (id: string) => listed.find((s) => s.sessionId === id)?._meta?.troupe;
  const api = (await d.api('GET', '/v1/sessions')).json.sessions as { id: string; status: string; damaged?: unknown }[];
  const apiOf = (id: string) => api.find((s) => s.id === id)!;
  // Until 2026-12-07 both were listed over ACP as any session that opens.
  assert.deepEqual([troupeOf(failed), apiOf(failed).status], [{ status: 'failed' }, 'failed']);
  assert.deepEqual([troupeOf(bad), apiOf(bad).damaged], [{ status: 'active', damaged: { code: 'log_corrupt', offset } }, { code: 'log_corrupt', offset }]);
});

test('a log cut short while the daemon was down (a machine crash tore its tail): once opened, its index entry follows the log, lastSeq and title, not the events it lost', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const id = ids[0]!;
  const dir = sessionsDir(home);
  const before = JSON.parse(readFileSync(sessionIndexPath(dir), 'utf8')).sessions.find((s: { id: string }) => s.id === id);
  assert.equal(before.title, 'ping', 'the turn titled the session');
  // What a machine crash leaves: a prefix of what was written, here the header, session_created and
  // half of the next record (the turn, its title included, is lost).
  const path = sessionLogPath(dir, id);
  cutAfterCreation(path);
  assert.equal(scanLogFile(path).lastSeq, 1);
  // Not read again at the daemon's start (the next test): the opening of the session is tested here.
  indexWrittenAfterLogs(dir);

  const { d } = await restarted(t, home);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  await c.agent.request('session/resume', { sessionId: id, cwd: before.cwd, mcpServers: [] });
  // The entry a rebuild from the repaired log gives: the truth the index must follow.
  const truth = (await entryFromLog(dir, id, silentLogger))!;
  assert.equal(truth.title, undefined);
  const shown = async () => {
    const s = (await d.api('GET', `/v1/sessions/${id}`)).json as { lastSeq: number; title?: string };
    return { lastSeq: s.lastSeq, title: s.title };
  };
  // The daemon hears of it from the child (the control channel): wait for it, bounded. Until
  // 2026-12-07 the entry kept the lastSeq and the title of the events the log lost.
  await waitFor('the entry to follow the log', async () => (await shown()).lastSeq === truth.lastSeq).catch(async () => assert.fail(JSON.stringify(await shown())));
  assert.deepEqual(await shown(), { lastSeq: truth.lastSeq, title: undefined });
  assert.deepEqual((await c.agent.request('session/list', {})).sessions.find((s) => s.sessionId === id)?.title, undefined);
});

test('logs damaged or cut short while the daemon was down are read again once it serves: listed damaged, and with what they hold, before anything opens them', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const [bad, cut] = ids as [string, string];
  const dir = sessionsDir(home);
  const badPath = sessionLogPath(dir, bad);
  const offset = readFileSync(badPath).length;
  appendFileSync(badPath, frameRecord(new Packr().pack([scanLogFile(badPath).lastSeq + 1, 1, 'not a list of events'])));
  cutAfterCreation(sessionLogPath(dir, cut));
  const indexBytes = readFileSync(sessionIndexPath(dir));

  const { d } = await restarted(t, home);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const listed = async () => (await d.api('GET', '/v1/sessions')).json.sessions as { id: string; status: string; lastSeq: number; title?: string; damaged?: unknown }[];
  // Read in the background once the daemon serves: wait for it, bounded. Until 2026-12-07 both were
  // listed as the index had them until a request opened them.
  await waitFor('the changed logs to be read again', async () => (await listed()).find((s) => s.id === bad)?.damaged).catch(async () => assert.fail(JSON.stringify(await listed())));
  const of = async (id: string) => (await listed()).find((s) => s.id === id)!;
  assert.deepEqual((await of(bad)).damaged, { code: 'log_corrupt', offset });
  assert.deepEqual((await c.agent.request('session/list', {})).sessions.find((s) => s.sessionId === bad)?._meta?.troupe, { status: 'active', damaged: { code: 'log_corrupt', offset } });
  const truth = (await entryFromLog(dir, cut, silentLogger))!;
  await waitFor('the cut log to be read again', async () => (await of(cut)).lastSeq === truth.lastSeq).catch(async () => assert.fail(JSON.stringify(await of(cut))));
  assert.deepEqual([(await of(cut)).lastSeq, (await of(cut)).title, (await of(cut)).status], [1, undefined, 'active']);
  // Neither log was opened for it: both are as they were left.
  assert.equal(scanLogFile(sessionLogPath(dir, cut)).warnings.length, 1, 'the torn tail is still there');
  assert.ok(!readFileSync(sessionIndexPath(dir)).equals(indexBytes), 'and the index file says it');
});

/**
 * A daemon with a session that ran a turn and rests (closed), whose log is then cut while the daemon
 * runs, and opened again: `feedOpen` holds a feed of it open across the cut. What the listing shows.
 */
async function cutWhileServing(t: { after(f: () => unknown): void }, feedOpen: boolean, beforeCut?: (d: Daemon, id: string) => Promise<void>) {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const cwd = tempDir();
  const { sessionId: id } = await c.agent.request('session/new', { cwd, mcpServers: [] });
  assert.equal((await prompt(c, id)).stopReason, 'end_turn');
  const path = sessionLogPath(sessionsDir(d.home), id);
  const listed = async () => ((await d.api('GET', `/v1/sessions/${id}`)).json as { lastSeq: number }).lastSeq;
  const before = scanLogFile(path).lastSeq;
  await waitFor('the turn to be listed', async () => (await listed()) === before);
  assert.ok(before > 1);
  const stream = { ended: false, messages: [] as SseMessage[] };
  if (feedOpen) {
    const get = await fetch(`${d.url}/v1/sessions/${id}/events?after=${before}`, { headers: d.headers });
    assert.equal(get.status, 200);
    void (async () => {
      for await (const m of readSse(get.body!, AbortSignal.timeout(60_000))) stream.messages.push(m);
      stream.ended = true;
    })();
  }
  await c.agent.request('session/close', { sessionId: id });
  await beforeCut?.(d, id);
  // Damaged while no process has it open (a person, a tool, the disk): the turn is lost.
  cutAfterCreation(path);
  await c.agent.request('session/resume', { sessionId: id, cwd, mcpServers: [] });
  const truth = (await entryFromLog(sessionsDir(d.home), id, silentLogger))!;
  assert.equal(truth.lastSeq, 1);
  // The index follows the log once the process that opened it says so (the control channel).
  const indexed = () => JSON.parse(readFileSync(sessionIndexPath(sessionsDir(d.home)), 'utf8')).sessions.find((s: { id: string }) => s.id === id)?.lastSeq;
  await waitFor('the index to follow the log', async () => indexed() === truth.lastSeq);
  return { listed, truth, stream, d, c, id, path };
}

test('a log cut short while the daemon runs (its session at rest): once opened again, GET /v1/sessions shows the seq the log holds, not the one the daemon heard of before the cut', { timeout: 120_000 }, async (t) => {
  const { listed, truth } = await cutWhileServing(t, false);
  // Until 2026-12-07 it showed the seq the daemon had heard of (the max of the index and the feeds').
  assert.equal(await listed(), truth.lastSeq);
});

test('a log cut short while the daemon runs, with a feed of it open: the stream, which sent events the log lost, ends with replay_gap saying where the log ends, and the listing shows the seq the log holds', { timeout: 120_000 }, async (t) => {
  const { listed, truth, stream } = await cutWhileServing(t, true);
  await waitFor('the feed to end', async () => stream.ended);
  // Until 2026-12-07 it just ended, as a deleted session's stream does.
  assert.deepEqual(
    stream.messages.map((m) => m.event).filter((e) => e !== 'event'),
    ['replay_gap'],
  );
  assert.equal(stream.messages.at(-1)!.event, 'replay_gap');
  assert.equal(JSON.parse(stream.messages.at(-1)!.data).lastSeq, truth.lastSeq);
  assert.equal(await listed(), truth.lastSeq);
});

test("a log cut short while the daemon runs: the inspector's replay of it, kept from an ask before the cut, is made again from the log as it is", { timeout: 120_000 }, async (t) => {
  type Replay = { replayId: string; after: number; lastSeq: number; transitions: unknown[] };
  const replay = async (d: Daemon, id: string, since = '') => (await d.api('GET', `/v1/sessions/${id}/replay${since}`)).json as Replay;
  let kept: Replay | undefined;
  let size = 0;
  const { d, c, id, path } = await cutWhileServing(t, false, async (d, id) => {
    kept = await replay(d, id);
    size = statSync(sessionLogPath(sessionsDir(d.home), id)).size;
  });
  // The session writes on, past where the kept replay stopped reading the log before the cut.
  for (let i = 0; i < 2; i++) assert.equal((await prompt(c, id)).stopReason, 'end_turn');
  assert.ok(statSync(path).size > size);
  const r = await replay(d, id, `?since=${encodeURIComponent(kept!.replayId)}&after=${kept!.lastSeq}`);
  // Until 2026-12-07 it read on from where it had stopped, inside the new records: the turn the log
  // lost, and nothing after it.
  assert.deepEqual([r.after, r.lastSeq], [0, scanLogFile(path).lastSeq]);
  assert.notEqual(r.replayId, kept!.replayId);
});

/** The messages of an events stream until it ends, or through the first `n` (the request then aborted). */
async function firstMessages(d: Daemon, id: string, headers: Record<string, string>, n: number, query = ''): Promise<SseMessage[]> {
  const ac = new AbortController();
  const res = await fetch(`${d.url}/v1/sessions/${id}/events${query}`, { headers: { ...d.headers, ...headers }, signal: ac.signal });
  assert.equal(res.status, 200);
  const out: SseMessage[] = [];
  try {
    for await (const m of readSse(res.body!, ac.signal)) if (out.push(m) >= n) break;
  } finally {
    ac.abort();
  }
  return out;
}

test('a reader away while the log is cut short and written past its cursor again: back with its last event id, it is told replay_gap, not served the new events as the ones after its own', { timeout: 120_000 }, async (t) => {
  let had: SseMessage[] = [];
  const { d, c, id, path } = await cutWhileServing(t, false, async (d, id) => {
    // A reader of the whole log, then gone (a network blip).
    had = await firstMessages(d, id, {}, scanLogFile(sessionLogPath(sessionsDir(d.home), id)).lastSeq);
    // Back before the cut, with the id of an event it had: served the events after it.
    const back = await firstMessages(d, id, { 'Last-Event-ID': had[1]!.id! }, 1);
    assert.deepEqual([back[0]!.event, seqOfFeedId(back[0]!.id)], ['event', 3]);
  });
  const idOf = (m: SseMessage | undefined) => m?.id ?? assert.fail('an event with an id');
  const lastId = idOf(had.at(-1));
  const cursor = seqOfFeedId(lastId);
  // The session writes on after the cut, past the seq the reader had.
  while (scanLogFile(path).lastSeq <= cursor) assert.equal((await prompt(c, id)).stopReason, 'end_turn');
  // Until 2026-12-07 (ids were bare seqs) it was served the events after its seq, though the seqs
  // it had are other events now. Whether the reader comes back by itself (Last-Event-ID) or opens
  // the stream again from its last id (`?after=`, as the inspector does).
  for (const [headers, query] of [
    [{ 'Last-Event-ID': lastId }, ''],
    [{}, `?after=${lastId}`],
  ] as [Record<string, string>, string][]) {
    const told = await firstMessages(d, id, headers, 2, query);
    assert.deepEqual(
      told.map((m) => m.event),
      ['replay_gap'],
      'one replay_gap, and the stream ends',
    );
    // Where its events and the log's part is not known: none of them is vouched for.
    assert.deepEqual([JSON.parse(told[0]!.data).after, JSON.parse(told[0]!.data).lastSeq], [cursor, 0]);
  }
  // The event the cut left (session_created, seq 1) is still the one the reader had: it goes on from it.
  const fromKept = await firstMessages(d, id, { 'Last-Event-ID': idOf(had[0]) }, 1);
  assert.deepEqual([fromKept[0]!.event, seqOfFeedId(fromKept[0]!.id)], ['event', 2]);
  assert.notEqual(fromKept[0]!.id, had[1]!.id, 'seq 2 is another event now');
  // A bare seq (an older client's id) says nothing of the event it had: it is taken as before.
  const bare = await firstMessages(d, id, { 'Last-Event-ID': String(cursor) }, 1);
  assert.deepEqual([bare[0]!.event, seqOfFeedId(bare[0]!.id)], ['event', cursor + 1]);
  // A mark that is not of the form is refused, as any malformed cursor is; the transition feed's ids
  // are bare seqs, and it takes nothing else.
  for (const [feed, cursor] of [
    [`/v1/sessions/${id}/events`, '1-xyz'],
    ['/v1/inspect/transitions', idOf(had[0])],
  ] as const) {
    const res = await fetch(`${d.url}${feed}`, { headers: { ...d.headers, 'Last-Event-ID': cursor }, signal: AbortSignal.timeout(5_000) });
    assert.equal(res.status, 400, `${feed} ${cursor}`);
    assert.equal((await res.json()).error.code, 'invalid_cursor');
  }
});

test('a session whose log was gone while the daemon was down is listed again once its log is back; one deleted by its id meanwhile stays deleted', { timeout: 120_000 }, async (t) => {
  const { home, ids } = await stoppedWithSessions(t);
  const [back, deleted] = ids as [string, string];
  const dir = sessionsDir(home);
  const away = (id: string) => `${sessionLogPath(dir, id)}.away`;
  for (const id of ids) renameSync(sessionLogPath(dir, id), away(id));
  const first = await restarted(t, home);
  const listed = async (d: Daemon) => (await d.api('GET', '/v1/sessions?all=1')).json.sessions as { id: string; status: string; gone?: true; title?: string }[];
  await waitFor('the gone logs to be seen', async () => (await listed(first.d)).every((s) => s.status === 'deleted')).catch(async () => assert.fail(JSON.stringify(await listed(first.d))));
  assert.deepEqual((await listed(first.d)).map((s) => s.gone), [true, true]);
  assert.equal((await first.d.api('DELETE', `/v1/sessions/${deleted}`)).status, 200);
  await first.d.stop();

  // Both logs put back while the daemon is down (a restore, a move back).
  for (const id of ids) renameSync(away(id), sessionLogPath(dir, id));
  const { d } = await restarted(t, home);
  // Read in the background once it serves. The deleted one is newer, so the pass came to it first.
  await waitFor('the log back to be read', async () => (await listed(d)).find((s) => s.id === back)?.status === 'active').catch(async () => assert.fail(JSON.stringify(await listed(d))));
  const now = await listed(d);
  assert.deepEqual([now.find((s) => s.id === back)?.gone, now.find((s) => s.id === back)?.title], [undefined, 'ping']);
  assert.deepEqual([now.find((s) => s.id === deleted)?.status, now.find((s) => s.id === deleted)?.gone], ['deleted', undefined]);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  assert.equal((await prompt(c, back)).stopReason, 'end_turn', 'it runs again, from its log');
});
