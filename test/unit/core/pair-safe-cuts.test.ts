// Text cut to a length never ends (or starts) between the two halves of a surrogate pair: a lone
// half is U+FFFD once encoded as UTF-8, and JSON that some clients refuse (`"\ud83d"`). The helpers
// of src/core/text-cut.ts, and the places that cut text a person, a model or a client reads, each
// given an emoji across its cut. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { elided, headOf, tailOf } from '../../../src/core/text-cut.js';
import { idData, quotedId } from '../../../src/daemon/quoted-id.js';
import { ProviderError, vendorText, type ModelMessage } from '../../../src/core/provider.js';
import { refuseWholeBody } from '../../../src/core/whole-body.js';
import { feedResume } from '../../../src/daemon/http/sse-cursor.js';
import { oneParam } from '../../../src/daemon/http/query-param.js';
import type { RouteRequest } from '../../../src/daemon/http/route.types.js';
import { inputProblem } from '../../../src/tools/mcp/mcp-input-check.js';
import { Conversation } from '../../../src/actors/conversation.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { TroupeError } from '../../../src/core/errors.js';
import { isWellFormed } from '../../../src/store/strict-json.codec.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('pair-safe-cuts');
const EMOJI = '😀'; // two UTF-16 units

/** `n` letters then an emoji: a cut at `n + 1` falls inside the emoji. */
const emojiAt = (n: number, after = 'b'.repeat(50)) => `${'a'.repeat(n)}${EMOJI}${after}`;

function assertWellFormed(s: string, what: string): void {
  assert.ok(isWellFormed(s), `${what} holds a lone surrogate: ${JSON.stringify(s.slice(-8))}`);
}

test('headOf, tailOf and elided keep every pair whole, and cut no more than the one unit a pair needs', () => {
  const text = fc.string({ unit: fc.constantFrom('a', 'é', '名', EMOJI, '👍🏽') });
  fc.assert(
    fc.property(text, fc.nat(40), (s, n) => {
      const head = headOf(s, n);
      const tail = tailOf(s, n);
      assertWellFormed(head, 'head');
      assertWellFormed(tail, 'tail');
      assert.ok(s.startsWith(head) && s.endsWith(tail));
      const want = Math.min(n, s.length);
      assert.ok(head.length === want || head.length === want - 1, `head of ${head.length} for ${n}`);
      assert.ok(tail.length === want || tail.length === want - 1, `tail of ${tail.length} for ${n}`);
      const cut = elided(s, n);
      assertWellFormed(cut, 'elided');
      assert.equal(cut, s.length <= n ? s : `${head}…`);
    }),
    { seed, numRuns: fcRuns(2000) },
  );
  assert.equal(headOf(emojiAt(3), 4), 'aaa');
  assert.equal(tailOf(`x${EMOJI}`, 1), '');
  assert.equal(elided(emojiAt(3), 4, ' [cut]'), 'aaa [cut]');
});

test("an over-long session id is quoted by its start, an emoji across the cut left out whole", () => {
  const id = emojiAt(63, 'b'.repeat(2_000));
  const data = idData(id);
  assertWellFormed(data.sessionId, 'the quoted id');
  assert.equal(data.sessionId, `${'a'.repeat(63)}…`);
  assert.equal(data.sessionIdLength, id.length);
  assertWellFormed(quotedId(id), 'the message');
});

test("a vendor's long error text and an HTML page's title are cut between characters", () => {
  const long = vendorText(emojiAt(1_999, 'z'.repeat(100)));
  assertWellFormed(long, 'the long text');
  assert.equal(long, `${'a'.repeat(1_999)}…`);
  const page = vendorText(`<html><head><title>${emojiAt(199, ' and more')}</title></head><body></body></html>`);
  assertWellFormed(page, 'the page');
  assert.match(page, new RegExp(`\\("${'a'.repeat(199)}"\\)`));
});

test("a whole JSON reply where a stream was asked for is quoted by its start, an emoji across the cut left out", async () => {
  const body = JSON.stringify({ answer: emojiAt(300 - '{"answer":"'.length - 1, 'z'.repeat(400)) });
  const response = new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  const err = await refuseWholeBody(response, () => undefined).then(
    () => assert.fail('a whole JSON body was taken for a stream'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ProviderError);
  assertWellFormed(err.vendorMessage, 'the vendor message');
  assert.ok(err.vendorMessage.endsWith('a…'), err.vendorMessage.slice(-10));
  assertWellFormed(err.explanation!, 'the explanation');
});

test('a refused feed cursor is repeated by its start, never half an emoji', () => {
  const request = (query: string, headers: Record<string, string> = {}) => ({ query: new URLSearchParams(query), headers }) as unknown as RouteRequest;
  const cursor = emojiAt(39);
  for (const req of [request(`after=${encodeURIComponent(cursor)}`), request('', { 'last-event-id': cursor }), request(`after=${encodeURIComponent(cursor)}&after=1`)]) {
    let refusal: unknown;
    try {
      feedResume(req, true);
    } catch (err) {
      refusal = err;
    }
    assert.ok(refusal instanceof TroupeError && refusal.code === 'invalid_cursor', String(refusal));
    assertWellFormed(refusal.message, 'the message');
    assertWellFormed(JSON.stringify(refusal.data), 'the data');
    assert.ok(!JSON.stringify(refusal.data).includes('\\ud'), JSON.stringify(refusal.data));
  }
});

test('a query parameter given twice is repeated in its refusal by its start, never half an emoji', () => {
  const value = emojiAt(63);
  let refusal: unknown;
  try {
    oneParam(new URLSearchParams(`session=${encodeURIComponent(value)}&session=b`), 'session');
  } catch (err) {
    refusal = err;
  }
  assert.ok(refusal instanceof TroupeError && refusal.code === 'invalid_params', String(refusal));
  assertWellFormed(JSON.stringify(refusal.data), 'the data');
  assert.deepEqual(refusal.data, { session: ['a'.repeat(63), 'b'] });
});

test("an MCP tool's long enum, named in a refusal, is cut between characters", () => {
  const values = [emojiAt(300 - 2 - 1), 'other'];
  const problem = inputProblem({ type: 'object', properties: { mode: { enum: values } } }, { mode: 'x' });
  assert.ok(problem);
  assertWellFormed(problem, 'the refusal');
  assert.match(problem, /a…\.$/);
});

test('a tool output a compaction cut keeps every pair whole, and counts what it removed', () => {
  const conv = new Conversation();
  const [sessionId, turnId, toolCallId] = ['ses_cut', 'turn_1', 'call_1'];
  const output = emojiAt(99, 'z'.repeat(500));
  const events = [
    { type: 'session_created', cwd: '/w', additionalDirectories: [], model: 'scripted/demo', mode: 'default' },
    { type: 'user_message', turnId, messageId: 'msg_1', content: [{ type: 'text', text: 'go' }] },
    { type: 'turn_started', turnId, maxSteps: 25 },
    { type: 'tool_call_started', turnId, toolCallId, name: 'read_file', kind: 'read', title: 'Read', status: 'in_progress', input: { path: 'a' }, locations: [] },
    { type: 'tool_call_updated', turnId, toolCallId, status: 'completed', output },
    { type: 'turn_completed', turnId, stopReason: 'end_turn', steps: 2 },
    { type: 'compaction_completed', compactionId: 'cmp_1', status: 'completed', toolOutputLimit: 100 },
  ];
  events.forEach((e, i) => conv.apply({ ...e, sessionId, seq: i + 1, ts: 0 } as unknown as AgentEvent));
  const tool = conv.messages().find((m): m is Extract<ModelMessage, { role: 'tool' }> => m.role === 'tool');
  const cut = tool!.results[0]!.output;
  assertWellFormed(cut, 'the cut output');
  assert.equal(cut, `${'a'.repeat(99)}\n[… ${output.length - 99} characters removed by compaction]`);
});
