// Content larger than one event is logged in parts (spec/event-log.md §5.1). For any content and any
// event limit: every event the engine appends fits the limit, and everything that reads the log
// back (the conversation folded from it, a ContentJoiner over it) gets the content exactly as sent.
// The slicer alone: slices within budget, joined back to the text exactly, a surrogate pair never
// cut. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ContentJoiner, sliceJson, sliceText } from '../../../src/core/content-parts.js';
import type { AgentEvent, ContentBlock } from '../../../src/core/events.js';
import { EngineCore, type EngineDeps } from '../../../src/actors/engine-core.js';
import { Conversation } from '../../../src/actors/conversation.js';
import { MemoryEventLog } from '../../../src/store/index.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('content-parts');
const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));

// Text of every kind: ASCII, escapes (quotes, control characters), multi-byte and astral characters.
const text = fc.string({ unit: fc.oneof(fc.constantFrom('a', '"', '\\', '\n', '\u0001', 'é', '€', '😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 6000, size: 'xlarge' });
// Plain objects, as a client's parsed JSON gives (the log refuses objects of other prototypes).
const plain = { noNullPrototype: true };
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text }, plain),
  fc.record({ type: fc.constant('image' as const), mimeType: fc.constant('image/png'), data: fc.base64String({ maxLength: 12_000, size: 'xlarge' }) }, plain),
  fc.record({ type: fc.constant('resource' as const), resource: fc.record({ uri: fc.constant('file:///a.txt'), text }, plain) }, plain),
);

test('a message of any size is logged within the event limit and read back exactly', async () => {
  let parted = 0;
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(block, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1024, max: 8192 }), fc.boolean(), async (content, maxEventBytes, steer) => {
      const sessionId = 'ses_parts';
      const log = new MemoryEventLog({ sessionId, maxEventBytes });
      const core = new EngineCore(sessionId, { log } as unknown as EngineDeps);
      core.emit({ type: 'session_created', sessionId, cwd: '/w', additionalDirectories: [], model: 'scripted/replay', mode: 'default' });
      const shown: AgentEvent[] = [];
      core.observers.add((e) => shown.push(e));
      const emitted = steer
        ? core.emitMessage({ type: 'steer_received', sessionId, turnId: 'turn_1', steerId: 'steer_1', content })
        : core.emitMessage({ type: 'user_message', sessionId, turnId: 'turn_1', messageId: 'msg_1', content });
      const events = (await log.readAfter(0, { limit: 100_000 })).events;
      for (const e of events) assert.ok(Buffer.byteLength(JSON.stringify(e)) <= maxEventBytes, `event ${e.seq} fits`);

      // What the live side got: the message whole, with the seq the log gave it.
      assert.deepEqual((emitted as { content: ContentBlock[] }).content, content);
      assert.equal(emitted.seq, events.at(-1)!.seq);
      assert.ok(!('parts' in emitted));
      assert.equal(shown.at(-1), emitted);

      // What readers of the log get.
      const logged = events.at(-1)! as AgentEvent & { parts?: number; content: ContentBlock[] };
      runs++;
      if (logged.parts !== undefined) {
        parted++;
        assert.deepEqual(logged.content, []);
        assert.deepEqual(events.slice(-1 - logged.parts, -1).map((e) => e.type), Array(logged.parts).fill('content_part'));
      } else {
        assert.deepEqual(logged.content, content);
      }
      const joiner = new ContentJoiner();
      const joined = events.map((e) => joiner.take(e)).filter((e) => e !== undefined);
      assert.deepEqual((joined.at(-1) as { content: ContentBlock[] }).content, content);
      assert.ok(joined.every((e) => e.type !== 'content_part'));

      const folded = new Conversation();
      for (const e of events) folded.apply(e);
      if (steer) folded.apply({ type: 'steer_applied', sessionId, turnId: 'turn_1', steerId: 'steer_1', step: 1, seq: logged.seq + 1, ts: 0 });
      const user = folded.messages().at(-1) as { role: string; content: ContentBlock[] };
      assert.deepEqual(steer ? user.content.slice(1) : user.content, content);
    }),
    { seed, numRuns: fcRuns(120) },
  );
  // The property is about parts: most runs must have made some (and some not).
  assert.ok(parted > runs / 3 && parted < runs, `${parted} of ${runs} runs logged their message in parts`);
});

test('tool calls with inputs of any size, several in a step, are logged within the event limit and read back exactly', async () => {
  let parted = 0;
  let runs = 0;
  const input = fc.dictionary(fc.constantFrom('path', 'content', 'old_string', 'new_string'), fc.oneof(text, fc.integer(), fc.array(text, { maxLength: 3 })), { minKeys: 1, noNullPrototype: true });
  await fc.assert(
    fc.asyncProperty(fc.array(input, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1024, max: 8192 }), async (inputs, maxEventBytes) => {
      const sessionId = 'ses_parts';
      const log = new MemoryEventLog({ sessionId, maxEventBytes });
      const core = new EngineCore(sessionId, { log } as unknown as EngineDeps);
      core.emit({ type: 'session_created', sessionId, cwd: '/w', additionalDirectories: [], model: 'scripted/replay', mode: 'default' });
      core.emitMessage({ type: 'user_message', sessionId, turnId: 'turn_1', messageId: 'msg_1', content: [{ type: 'text', text: 'go' }] });
      const calls = inputs.map((input, i) => ({ type: 'tool_call_started' as const, sessionId, turnId: 'turn_1', toolCallId: `call_${i}`, name: 'write_file', kind: 'edit' as const, title: 'w', status: 'pending' as const, input, locations: [] }));
      const emitted = calls.map((call) => core.emitToolCall(call));
      const events = (await log.readAfter(0, { limit: 100_000 })).events;
      for (const e of events) assert.ok(Buffer.byteLength(JSON.stringify(e)) <= maxEventBytes, `event ${e.seq} fits`);
      assert.deepEqual(emitted.map((e) => (e as { input: object }).input), inputs, 'the live side gets each input whole');
      assert.ok(emitted.every((e) => !('parts' in e)));
      const logged = events.filter((e) => e.type === 'tool_call_started') as (AgentEvent & { parts?: number; input: object })[];
      runs++;
      if (logged.some((e) => e.parts !== undefined)) parted++;
      for (const e of logged) if (e.parts !== undefined) assert.deepEqual(e.input, {});
      const joiner = new ContentJoiner();
      const joined = events.map((e) => joiner.take(e)).filter((e) => e?.type === 'tool_call_started');
      assert.deepEqual(joined.map((e) => (e as { input: object }).input), inputs);
      assert.ok(joined.every((e) => !('parts' in e!)));
      const folded = new Conversation();
      for (const e of events) folded.apply(e);
      // (Followed by the calls' results, which the conversation makes up for calls that never ran.)
      const assistant = folded.messages().find((m) => m.role === 'assistant') as { toolCalls: { input: object }[] };
      assert.deepEqual(assistant.toolCalls.map((c) => c.input), inputs);
    }),
    { seed, numRuns: fcRuns(100) },
  );
  assert.ok(parted > runs / 4 && parted < runs, `${parted} of ${runs} runs logged a tool call in parts`);
});

/** Every slice is non-empty, within `budget` bytes as JSON, and no surrogate pair is cut between two. */
function assertSlices(slices: string[], budget: number): void {
  for (const [i, slice] of slices.entries()) {
    assert.ok(slice.length > 0);
    assert.ok(jsonBytes(slice) <= budget, `slice ${i}: ${jsonBytes(slice)} bytes > ${budget}`);
    const last = slice.charCodeAt(slice.length - 1);
    const next = slices[i + 1]?.charCodeAt(0);
    assert.ok(!(last >= 0xd800 && last <= 0xdbff && next !== undefined && next >= 0xdc00 && next <= 0xdfff), 'a pair is kept together');
  }
}

test('slices stay within their budget, never cut a surrogate pair, and join back to the text', () => {
  // Lone surrogates too: the slicer must take any string.
  const anyText = fc.string({ unit: fc.oneof(fc.constantFrom('a', '"', '\u0000', '😀', '\ud800', '\udc00', 'ü'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 3000, size: 'xlarge' });
  fc.assert(
    fc.property(anyText, fc.integer({ min: 16, max: 600 }), (s, budget) => {
      const slices = sliceText(s, budget);
      assert.equal(slices.join(''), s);
      assertSlices(slices, budget);
    }),
    { seed, numRuns: fcRuns(300) },
  );
});

test("a value's JSON is sliced as its text would be: within the budget, pairs whole, joined back exactly", () => {
  // Strings longer than the writer's chunk (8192 characters) too: they are escaped in pieces.
  const long = fc.string({ unit: fc.constantFrom('a', '"', '\u0001', '😀', '\ud800', 'ü'), minLength: 8000, maxLength: 20_000 });
  const value = fc.dictionary(fc.constantFrom('path', 'content', '😀'), fc.oneof(long, fc.array(long, { maxLength: 2 }), fc.integer()), { noNullPrototype: true });
  fc.assert(
    fc.property(value, fc.integer({ min: 16, max: 60_000 }), (v, budget) => {
      const slices: string[] = [];
      const count = sliceJson(v, budget, (s) => slices.push(s));
      assert.equal(count, slices.length);
      assert.equal(slices.join(''), JSON.stringify(v));
      assertSlices(slices, budget);
      assert.deepEqual(JSON.parse(slices.join('')), v);
    }),
    { seed, numRuns: fcRuns(60) },
  );
});

test('a budget under 16 bytes is refused, by sliceJson as by sliceText (it would give empty slices for ever)', () => {
  for (const budget of [0, 1, 10, 15]) {
    assert.throws(() => sliceText('abc', budget), RangeError);
    let slices = 0;
    assert.throws(() => sliceJson({ a: 'x'.repeat(100) }, budget, () => assert.ok(++slices < 1000, 'slicing without end')), RangeError);
  }
});

test('a message whose parts were not all read says so instead of showing a partial content', () => {
  const joiner = new ContentJoiner();
  const part = (index: number, data: string, seq: number) => ({ type: 'content_part' as const, sessionId: 's', turnId: 't', partOf: 'msg_1', index, data, seq, ts: 0 });
  const text = JSON.stringify([{ type: 'text', text: 'hello' }]);
  // Read from a cursor after the first part.
  assert.equal(joiner.take(part(1, text.slice(5), 11)), undefined);
  const message = { type: 'user_message' as const, sessionId: 's', turnId: 't', messageId: 'msg_1', content: [], parts: 2, seq: 12, ts: 0 };
  assert.deepEqual(joiner.contentOf(message), [{ type: 'text', text: '[content of 2 parts not available: seqs 10 to 11 were not read]' }]);
  // Both parts: the content; parts of another message before it (a crash left them) are ignored.
  joiner.add(part(0, 'xx', 1));
  joiner.add({ ...part(0, text.slice(0, 5), 10), partOf: 'msg_2' });
  joiner.add({ ...part(1, text.slice(5), 11), partOf: 'msg_2' });
  assert.deepEqual(joiner.contentOf({ ...message, messageId: 'msg_2' }), [{ type: 'text', text: 'hello' }]);
});
