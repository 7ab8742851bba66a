// The CLI's own notes that quote what the agent or the daemon said: a stop reason, a session id, why
// a session failed, a tool call's kind in a permission question. They may be untrusted (a remote
// daemon, a misbehaving agent): their control characters are spelled out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk';
import { openedNote } from '../../../src/cli/chat.command.js';
import { decidePermission } from '../../../src/cli/permission-prompt.js';
import { sessionFailedNote, turnEndNote } from '../../../src/cli/run.command.js';
import { makeStyle } from '../../../src/cli/style.js';
import { play } from '../../support/cli/piped-repl.js';

const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
const plain = makeStyle(process.stdout, { NO_COLOR: '1' });

test("run's last line and its session-failed note spell out the stop reason, the session id and the reason", () => {
  // Until 2026-12-06 all three were printed raw.
  assert.equal(turnEndNote('max_tokens\x1b[2J', 'ses_0\x07x'), '[max_tokens\\x1b[2J · session ses_0\\x07x]');
  assert.equal(sessionFailedNote({ sessionId: 's', reason: 'gone\x1b]0;owned\x07' }), '[session failed: gone\\x1b]0;owned\\x07]');
  assert.equal(sessionFailedNote({}), '[session failed: unknown]');
});

test("a permission question spells out the tool call's kind", async () => {
  const notes: string[] = [];
  const req = {
    sessionId: 's',
    toolCall: { toolCallId: 't', title: 'Run ls', kind: 'execute\x1b[2J' },
    options: [{ optionId: 'y', name: 'Allow', kind: 'allow_once' }],
  } as unknown as acp.RequestPermissionRequest;
  const answer = await decidePermission(req, { yes: false, ask: async () => 'y', style: plain, note: (l) => notes.push(l) });
  assert.deepEqual(answer, { outcome: { outcome: 'selected', optionId: 'y' } });
  // Until 2026-12-06: `(execute<ESC>[2J)`.
  assert.ok(notes.every((n) => !RAW_CONTROL.test(n)), JSON.stringify(notes));
  assert.match(notes[0]!, /Allow Run ls\? \(execute\\x1b\[2J\)/);
});

test('a permission question shows the note that stands in for a diff too large to send, as it shows a diff', async () => {
  const notes: string[] = [];
  const req = {
    sessionId: 's',
    toolCall: {
      toolCallId: 't',
      title: 'Write big.txt',
      kind: 'edit',
      content: [
        { type: 'content', content: { type: 'text', text: '[The change is too large to show here.]\x1b[2J' } },
        { type: 'diff', path: '/w/a.txt', oldText: 'a\n', newText: 'b\n' },
      ],
    },
    options: [{ optionId: 'y', name: 'Allow', kind: 'allow_once' }],
  } as unknown as acp.RequestPermissionRequest;
  await decidePermission(req, { yes: false, ask: async () => 'y', style: plain, note: (l) => notes.push(l) });
  // Until 2026-12-07 only diffs were shown: the note was not, and the person saw no change at all.
  assert.deepEqual(notes.slice(1), ['  [The change is too large to show here.]\\x1b[2J', '  /w/a.txt', '  - a', '  + b']);
});

test("the chat spells out a turn's stop reason", async () => {
  const r = await play(['hello'], (method) => (method === 'session/prompt' ? { stopReason: 'refusal\x1b]0;owned\x07' } : {}));
  assert.ok(!RAW_CONTROL.test(r.printed), JSON.stringify(r.printed));
  assert.match(r.printed, /\[refusal\\x1b\]0;owned\\x07\]/);
});

test("the chat's first line spells out the session's id and directories", () => {
  const note = openedNote({ sessionId: 'ses_0\x1b]0;owned\x07', cwd: '/w/\x1b[2J', additionalDirectories: ['/x/\x07'], resumed: false });
  // Until 2026-12-06 the id was printed raw.
  assert.equal(note, '[new session ses_0\\x1b]0;owned\\x07 in /w/\\x1b[2J (also /x/\\x07) · /help for commands]');
});
