// `troupe watch` prints a session's log as lines. Content logged in parts (spec/event-log.md §5.1)
// comes before its event: a message's parts are joined into the line of the message, and every other
// part (a tool call's input, which is not printed, or parts a crash left with no event) is let go at
// the next event, not held until the next prompt (a model writing a multi-megabyte file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { sliceText } from '../../../src/core/content-parts.js';
import { makeStyle } from '../../../src/cli/style.js';
import { watchFormatter } from '../../../src/cli/watch.command.js';

const sessionId = 'ses_0watch';
const turnId = 'turn_1';

function watching() {
  const out = new PassThrough();
  let printed = '';
  out.on('data', (c: Buffer) => (printed += c.toString()));
  const fmt = watchFormatter(out, makeStyle(out, { NO_COLOR: '1' }));
  let seq = 0;
  return {
    fmt,
    printed: () => printed,
    /** Feeds `e` with the next seq, and returns that seq. */
    feed(e: Record<string, unknown>) {
      fmt.event({ seq: ++seq, ts: 0, sessionId, ...e } as never);
      return seq;
    },
    /** Feeds the parts of `json` for `partOf`, and returns how many. */
    parts(partOf: string, json: string) {
      const slices = sliceText(json, 64);
      slices.forEach((data, index) => this.feed({ type: 'content_part', turnId, partOf, index, data }));
      return slices.length;
    },
  };
}

test("the parts of a tool call's input are let go at its event", () => {
  const w = watching();
  const n = w.parts('call_1', JSON.stringify({ path: 'big.txt', content: 'x'.repeat(1000) }));
  assert.ok(n > 10, `${n} parts`);
  assert.equal(w.fmt.heldParts, n, 'the premise: parts wait for their event');
  w.feed({ type: 'tool_call_started', turnId, toolCallId: 'call_1', name: 'write_file', kind: 'edit', title: 'Write big.txt', status: 'pending', input: {}, locations: [], parts: n });
  // Until 2026-12-07 they were held until the next message (a prompt or a steer).
  assert.equal(w.fmt.heldParts, 0);
  assert.match(w.printed(), /^\s+\d+ tool_call_started {2}Write big\.txt \(edit, pending\)\n$/m);
});

test('parts a crash left with no event after them are let go at the next event', () => {
  const w = watching();
  w.parts('call_lost', JSON.stringify({ path: 'big.txt', content: 'y'.repeat(500) }));
  w.feed({ type: 'turn_completed', turnId, stopReason: 'cancelled' });
  assert.equal(w.fmt.heldParts, 0);
});

test("a prompt's parts are still joined into its line", () => {
  const w = watching();
  const words = 'a prompt long enough to be logged in several parts';
  const n = w.parts('msg_1', JSON.stringify([{ type: 'text', text: words }]));
  assert.ok(n > 1, `${n} parts`);
  w.feed({ type: 'user_message', turnId, messageId: 'msg_1', content: [], parts: n });
  assert.equal(w.fmt.heldParts, 0);
  assert.match(w.printed(), new RegExp(`user_message {2}${words}\\n$`));
});
