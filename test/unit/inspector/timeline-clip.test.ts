// The timeline cuts long texts (a prompt, a tool title, a message's first chunk) to one short row; a
// cut between the two halves of an emoji (a surrogate pair) left a lone surrogate, which the page
// shows as U+FFFD. The cut falls before the emoji instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRows } from '../../../src/inspector-ui/timeline.js';
import type { LogEvent } from '../../../src/inspector-ui/types.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('a text cut where an emoji is, is cut before it, never between its halves', () => {
  // 58 letters, then an emoji at UTF-16 units 58-59: the 60-unit row keeps 59 units and the ellipsis.
  const text = `${'a'.repeat(58)}😀 and more`;
  const events = [
    { seq: 1, ts: 1, type: 'user_message', content: [{ type: 'text', text }] },
    { seq: 2, ts: 2, type: 'tool_call_started', name: 'read_file', title: text },
    { seq: 3, ts: 3, type: 'agent_message_chunk', messageId: 'm', text },
  ] as unknown as LogEvent[];
  const rows = buildRows(events, [], [], []);
  assert.deepEqual(
    rows.map((r) => r.text),
    [`prompt "${'a'.repeat(58)}…"`, `tool call read_file: ${'a'.repeat(58)}…`, `agent message: "${'a'.repeat(58)}…"`],
  );
  for (const row of rows) assert.doesNotMatch(row.text, LONE_SURROGATE);
  // A text that fits, emoji and all, is not cut.
  const short = buildRows([{ seq: 1, ts: 1, type: 'tool_call_started', name: 'x', title: `${'a'.repeat(58)}😀` }] as unknown as LogEvent[], [], [], []);
  assert.equal(short[0]!.text, `tool call x: ${'a'.repeat(58)}😀`);
});

// A turn ended by crash repair is a crash on the timeline whatever the stop's code: until 2026-12-07
// only agent_crashed was, and a turn a stop's repair ended (the log failed) was drawn as any turn.
test('a turn ended by crash repair is a crash row, by its interrupted mark or (older logs) agent_crashed', () => {
  const ended = (extra: object) => ({ seq: 1, ts: 1, type: 'turn_completed', turnId: 't', stopReason: 'error', steps: 1, ...extra });
  const kinds = [
    ended({ errorCode: 'log_write_failed', interrupted: true }),
    ended({ errorCode: 'internal_error', interrupted: true }),
    ended({ errorCode: 'agent_crashed' }),
    ended({ errorCode: 'internal_error' }),
    ended({ stopReason: 'cancelled' }),
  ].map((e) => buildRows([e] as unknown as LogEvent[], [], [], [])[0]!.kind);
  assert.deepEqual(kinds, ['crash', 'crash', 'crash', 'turn', 'cancel']);
});
