// One end-to-end suite for every vendor adapter: a real `troupe acp` child, driven by the ACP SDK
// client, talks through the vendor's official SDK to the replay server on 127.0.0.1, which plays
// recorded vendor streams and records what troupe sent. Each vendor file supplies only what differs:
// its environment, endpoints, fixtures and where its wire format puts a tool result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer, type RecordedRequest, type ReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

/**
 * A prompt with a JPEG labelled `image/jpg` (as pasteboards label them) and a HEIC photo, which
 * no vendor's API takes: what each adapter sends for it is checked by its history test.
 */
export const TWO_PHOTOS_PROMPT = [
  { type: 'text', text: 'Compare these two photos.' },
  { type: 'image', mimeType: 'image/jpg', data: '/9j/4AAQSkZJRgABAQ==' },
  { type: 'image', mimeType: 'image/heic', data: 'AAAAGGZ0eXBoZWlj', uri: 'file:///photos/IMG_0001.HEIC' },
];

export interface VendorE2E {
  /** Fixture prefix and test label, e.g. `anthropic` → test/fixtures/providers/e2e-anthropic-*. */
  name: string;
  /** The full troupe model id. */
  modelId: string;
  /** Its section in the config file, where retries are turned off. */
  configSection: 'anthropic' | 'openai' | 'openai-compatible' | 'google';
  /** More settings for that section (e.g. the model's capabilities and prices). */
  configExtra?: Record<string, unknown>;
  /** Base URL and fake key variables, given the replay server's URL. */
  env(url: string): Record<string, string>;
  /** The path of a model call. */
  streamPath: RegExp;
  /**
   * The vendor's token-count endpoint (absent: troupe estimates). Preflight calls it for a prompt the
   * model has not measured yet: the session's first, and the first after a compaction; later ones
   * go by the usage of the last call, far inside the budget here.
   */
  count?: { path: RegExp; json: unknown };
  /** Text the tool-call response streams before its call, if any. */
  toolPreamble: string;
  /** The tool call as the model sent it, found in a later request body (the assistant turn replayed). */
  echoedCall(body: any): unknown;
  /** The read_file result as the vendor's format carries it in the next request body. */
  toolResult(body: any): unknown;
  /** Context window of the model, and the USD cost of the tool step and of the answer step. */
  contextWindow: number;
  costs: [number, number];
  /** The vendor's own context-length error text (in its real error body fixture). */
  overflowText: string;
  /** Other answers of the vendor's that say a request does not fit (`text` in their message), each compacted as the fixture's is. */
  otherOverflows?: { label: string; step: ReplayStep; text: string }[];
}

const NOTES = 'launch code: 4242\nowner: ada\n';
const ANSWER = 'The notes say the launch code is 4242.';
const SUMMARY = 'The user greeted the assistant; no files were touched yet.';

interface Run {
  child: AcpChild;
  server: ReplayServer;
  sessionId: string;
}

/** A workspace with notes.txt, a config that turns retries off, a child on this vendor, a session in bypass mode. */
async function start(v: VendorE2E, server: ReplayServer): Promise<Run> {
  const { home, configHome } = providerHome({ [v.configSection]: { maxRetries: 0, ...v.configExtra } });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  writeFileSync(join(cwd, 'notes.txt'), NOTES);
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: v.modelId, ...v.env(server.url) } });
  await child.initialize();
  const sessionId = await child.newSession(cwd);
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  return { child, server, sessionId };
}

const sse = (v: VendorE2E, kind: string): ReplayStep => ({ sse: fixture(`e2e-${v.name}-${kind}.sse`) });
const overflow = (v: VendorE2E): ReplayStep => ({ status: 400, json: JSON.parse(fixture(`e2e-${v.name}-overflow.json`)) });
/** The steps of a prompt the model has not measured yet: the preflight count where the vendor has one, then the model calls. */
const counted = (v: VendorE2E, ...calls: ReplayStep[]): ReplayStep[] => [...(v.count ? [{ json: v.count.json }] : []), ...calls];
/** The steps of a prompt after a measured call: the model calls alone. */
const measured = (...calls: ReplayStep[]): ReplayStep[] => calls;
const modelCalls = (v: VendorE2E, requests: RecordedRequest[]) => requests.filter((r) => v.streamPath.test(r.url));
const near = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-12;

export function providerE2E(v: VendorE2E): void {
  test(`${v.name}: a turn with a tool call through troupe acp`, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const run = await start(v, server);
    t.after(() => run.child.close());
    server.enqueue(...counted(v, sse(v, 'tool'), sse(v, 'answer')));

    const res = await run.child.prompt(run.sessionId, 'What does notes.txt say?');
    assert.equal(res.stopReason, 'end_turn', run.child.stderr.slice(-2000));

    // Exactly the requests expected, in order: count (where the vendor has one), then two model calls.
    assert.deepEqual(
      server.requests.map((r) => (v.streamPath.test(r.url) ? 'model' : v.count?.path.test(r.url) ? 'count' : r.url)),
      [...(v.count ? ['count'] : []), 'model', 'model'],
    );
    const [first, second] = modelCalls(v, server.requests);
    assert.ok(JSON.stringify(first!.body).includes('What does notes.txt say?'));
    assert.ok(JSON.stringify(first!.body).includes('"read_file"'), 'the tools were declared');
    // The second request carries the model's call and troupe's result for it, in the vendor's format.
    assert.ok(v.echoedCall(second!.body), `the tool call is replayed: ${JSON.stringify(second!.body).slice(0, 3000)}`);
    assert.equal(v.toolResult(second!.body), NOTES, 'the file content went back as the tool result');

    const updates = run.child.updatesFor(run.sessionId);
    const call = updates.find((u) => u.sessionUpdate === 'tool_call');
    assert.deepEqual([call?.title !== undefined, call?.kind, call?.rawInput], [true, 'read', { path: 'notes.txt' }]);
    const doneAt = updates.findIndex((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed');
    assert.ok(doneAt > 0, 'the tool ran to completion');
    assert.equal(updates[doneAt].rawOutput?.output, NOTES);
    const text = (from: number, to: number) =>
      updates.slice(from, to).filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
    assert.equal(text(0, doneAt), v.toolPreamble);
    assert.equal(text(doneAt, updates.length), ANSWER, 'the second response streamed as agent_message_chunk');

    const usage = updates.filter((u) => u.sessionUpdate === 'usage_update');
    assert.equal(usage.length, 2, 'one usage_update per model call');
    assert.deepEqual(usage.map((u) => [u.used, u.size, u.cost?.currency]), [
      [520, v.contextWindow, 'USD'],
      [645, v.contextWindow, 'USD'],
    ]);
    assert.ok(near(usage[0].cost.amount, v.costs[0]) && near(usage[1].cost.amount, v.costs[1]), JSON.stringify(usage.map((u) => u.cost)));
    assert.deepEqual(run.child.permissions, [], 'bypass mode asks nothing');
    assert.deepEqual(run.child.schemaErrors, []);
  });

  const overflows = [{ label: '', step: overflow(v), text: v.overflowText }, ...(v.otherOverflows ?? []).map((o) => ({ ...o, label: ` (${o.label})` }))];
  for (const { label, step: refusal, text: overflowText } of overflows) test(`${v.name}: the vendor's context overflow${label} compacts, then ends the turn context_overflow; the next prompt works`, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const run = await start(v, server);
    t.after(() => run.child.close());
    server.enqueue(
      ...counted(v, sse(v, 'answer')),
      // The big prompt: the vendor refuses it, troupe summarizes the earlier turn with the same
      // vendor and retries the step, which the vendor refuses again.
      ...measured(refusal, sse(v, 'summary'), refusal),
      // The compacted conversation has not been measured: counted again.
      ...counted(v, sse(v, 'answer')),
    );

    assert.equal((await run.child.prompt(run.sessionId, 'hello there')).stopReason, 'end_turn');
    await assert.rejects(run.child.prompt(run.sessionId, 'now the big one'), (e: any) => {
      assert.equal(e.code, -32040, JSON.stringify(e));
      assert.equal(e.data?.code, 'context_overflow');
      // troupe's own message; the vendor's words are kept for diagnosis.
      assert.match(String(e.message), /does not fit the context window of .*compacting the conversation could not make it fit.*\/compact/, e.message);
      assert.ok(String(e.data?.vendorMessage).includes(overflowText), e.data?.vendorMessage);
      return true;
    });
    const calls = modelCalls(v, server.requests);
    assert.equal(calls.length, 4, 'answer, refused, summary, refused again');
    const summary = JSON.stringify(calls[2]!.body);
    assert.ok(summary.includes('You write summaries of coding sessions.') && summary.includes('Summarize the conversation above'), `a summarization request: ${summary.slice(0, 2000)}`);
    assert.ok(summary.includes('hello there') && summary.includes(ANSWER), 'it carried the earlier turn');
    assert.ok(!summary.includes('"read_file"'), 'with no tools');
    const retried = JSON.stringify(calls[3]!.body);
    assert.ok(retried.includes(SUMMARY) && !retried.includes('hello there'), 'the retried step sent the summary instead of the earlier turn');
    assert.ok(retried.includes('now the big one'));

    // Never wedged: the session takes the next prompt, and the model sees the summary and the failed prompt.
    const next = await run.child.prompt(run.sessionId, 'shorter then');
    assert.equal(next.stopReason, 'end_turn');
    const last = JSON.stringify(modelCalls(v, server.requests)[4]!.body);
    assert.ok(last.includes(SUMMARY) && last.includes('shorter then'));
    assert.equal(server.requests.length, (v.count ? 2 : 0) + 5, 'every queued response was used, nothing more was asked');
    if (v.count) assert.deepEqual(server.requests.map((r) => (v.count!.path.test(r.url) ? 'count' : 'model')), ['count', 'model', 'model', 'model', 'model', 'count', 'model']);
    const notes = run.child.updatesFor(run.sessionId, 'agent_thought_chunk').map((u) => u.content.text);
    assert.ok(notes.some((n) => /Compacting the conversation: overflow/.test(n)) && notes.some((n) => /Compaction completed/.test(n)), JSON.stringify(notes));
    assert.deepEqual(run.child.schemaErrors, []);
  });

  test(`${v.name}: a summarization request the vendor refuses is retried smaller, and the turn recovers`, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const run = await start(v, server);
    t.after(() => run.child.close());
    server.enqueue(...counted(v, sse(v, 'answer')), ...measured(overflow(v), overflow(v), sse(v, 'summary'), sse(v, 'answer')));

    assert.equal((await run.child.prompt(run.sessionId, 'hello there')).stopReason, 'end_turn');
    const res = await run.child.prompt(run.sessionId, 'now the big one');
    assert.equal(res.stopReason, 'end_turn', run.child.stderr.slice(-2000));
    const calls = modelCalls(v, server.requests).map((r) => JSON.stringify(r.body));
    assert.equal(calls.length, 5, 'answer, refused, summary refused, summary, retried step');
    for (const i of [2, 3]) assert.ok(calls[i]!.includes('Summarize the conversation above') && calls[i]!.includes('hello there'), `call ${i} is a summarization request`);
    assert.ok(calls[4]!.includes(SUMMARY) && calls[4]!.includes('now the big one') && !calls[4]!.includes('hello there'), 'the retried step carried the summary');
    const turnId = (res._meta as any)?.troupe?.turnId;
    const said = run.child.updatesFor(run.sessionId, 'agent_message_chunk').filter((u) => u._meta?.troupe?.turnId === turnId);
    assert.equal(said.map((u) => u.content.text).join(''), ANSWER, 'the answer after the recovery streamed to the client');
    assert.deepEqual(run.child.schemaErrors, []);
  });
}
