// What the agent sends is the agent's text, and the agent may be untrusted (a remote daemon, a
// misbehaving model or MCP server): the renderer spells out the control characters of every field it
// prints, not only of message text and tool titles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type * as acp from '@agentclientprotocol/sdk';
import { makeStyle } from '../../../src/cli/style.js';
import { UpdateRenderer } from '../../../src/cli/update.renderer.js';

const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

function render(updates: unknown[]): string {
  const out = new PassThrough();
  let printed = '';
  out.on('data', (c: Buffer) => (printed += c.toString()));
  const renderer = new UpdateRenderer(out, new PassThrough(), makeStyle(out, { NO_COLOR: '1' }), { spinner: false });
  for (const update of updates) renderer.update({ sessionId: 'ses_0test', update } as acp.SessionNotification);
  renderer.done();
  return printed;
}

test("a mode id the agent announces is shown spelled out", () => {
  const printed = render([{ sessionUpdate: 'current_mode_update', currentModeId: 'plan\x1b]0;owned\x07' }]);
  // Until 2026-12-06: `[mode: plan<ESC>]0;owned<BEL>]`, which retitled the terminal.
  assert.equal(printed, '[mode: plan\\x1b]0;owned\\x07]\n');
});

test("a tool call's kind and status, and a content block's type, are shown spelled out", () => {
  const printed = render([
    { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Read x', kind: 'read\x1b[2J', status: 'pending\x07' },
    { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'done\x9b31m' },
    { sessionUpdate: 'agent_message_chunk', content: { type: 'image\x1b]0;owned\x07', data: '', mimeType: 'image/png' } },
  ]);
  // Until 2026-12-06 kind, status and type were printed raw.
  assert.ok(!RAW_CONTROL.test(printed), JSON.stringify(printed));
  assert.match(printed, /Read x \(read\\x1b\[2J, pending\\x07\)/);
  assert.match(printed, /Read x \(read\\x1b\[2J, done\\x9b31m\)/);
  assert.match(printed, /\[image\\x1b\]0;owned\\x07\]/);
});

test('bidi overrides and isolates are spelled out too, in one-line fields and in text shown as lines', () => {
  // "Trojan Source": raw, U+202E makes the terminal show `\u202Etxt.exe` as `exe.txt`, and U+2066–U+2069
  // reorder what follows them; until 2026-12-07 the CLI printed them raw.
  const printed = render([
    { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Read \u202Etxt.exe', kind: 'read', status: 'pending' },
    { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a \u2066b\u2069 c\u202A\u202B\u202C\u202D\nnext\u2067\u2068 line\n' } },
  ]);
  assert.doesNotMatch(printed, /[\u202a-\u202e\u2066-\u2069]/, JSON.stringify(printed));
  assert.match(printed, /Read \\u202etxt\.exe \(read, pending\)/);
  assert.match(printed, /a \\u2066b\\u2069 c\\u202a\\u202b\\u202c\\u202d\nnext\\u2067\\u2068 line\n/, 'line breaks stay, bidi is spelled');
});
