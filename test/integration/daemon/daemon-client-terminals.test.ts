/**
 * A command run in the terminal of the editor prompting (`terminal/create`) is shown as that terminal
 * to that editor only: every other client attached to the session is sent the tool call without it,
 * its output as text, exactly as a `session/load` replays it (spec/daemon.md §Relay, src/acp/terminal-content.ts).
 * Another client never had that terminal id; Zed fails a whole update naming one it does not know.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonWithClients, tempDir, waitFor } from '../../support/daemon.js';
import { ClientTerminals } from '../../support/client-terminals.js';
import { childWithdrawals, wireTapEnv } from '../../support/child-wire-tap.js';

const script = { replies: [[{ tool_call: { name: 'run_command', input: { command: 'echo from-terminal' } } }], [{ text: 'ran' }]] };

const terminalsOf = (updates: any[]) => updates.flatMap((u) => (u.content ?? []).filter((c: any) => c.type === 'terminal').map((c: any) => c.terminalId));

test("a command run in the prompting editor's terminal is shown as that terminal to that editor only; another client attached is sent its output as text, as a load replays it", async (t) => {
  // Both offer terminals: the other client has terminals of its own, not this one.
  const editorTerminals = new ClientTerminals('editor_term_');
  const otherTerminals = new ClientTerminals('other_term_');
  t.after(() => (editorTerminals.killAll(), otherTerminals.killAll()));
  const { d, a: editor, b: other } = await daemonWithClients(t, { script }, { handlers: { a: { terminals: editorTerminals }, b: { terminals: otherTerminals } }, capabilities: { a: { terminal: true }, b: { terminal: true } } });
  const cwd = tempDir();
  const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await other.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const before = other.updatesFor(sessionId, 'tool_call_update').length;
  assert.equal((await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] })).stopReason, 'end_turn');
  assert.deepEqual(editorTerminals.calls, ['create editor_term_1', 'release editor_term_1'], "the command ran in the prompting editor's terminal");
  assert.deepEqual(otherTerminals.calls, []);

  const mine = editor.updatesFor(sessionId, 'tool_call_update');
  assert.deepEqual(terminalsOf(mine), ['editor_term_1', 'editor_term_1'], 'its editor is sent the terminal as the process wrote it: embedded, and kept by the final update');
  const final = mine.at(-1);
  assert.equal(final.status, 'completed');
  assert.match(final.rawOutput.output, /^from-terminal\n/);

  // The editor's response came after the turn's updates were handed to every connection; the other
  // client reads another stream, so it is waited for.
  await other.until(() => other.updatesFor(sessionId, 'tool_call_update').length === before + mine.length, "the other client's updates");
  const theirs = other.updatesFor(sessionId, 'tool_call_update').slice(before);
  assert.deepEqual(terminalsOf(theirs), [], 'no terminal id it never had');
  assert.doesNotMatch(JSON.stringify(other.updates), /editor_term_/);
  const { content: _, ...embeddedOnly } = mine[0];
  assert.deepEqual(theirs[0], embeddedOnly, 'the update that only embedded the terminal changes nothing');
  assert.deepEqual(theirs.at(-1), { ...final, content: [{ type: 'content', content: { type: 'text', text: final.rawOutput.output } }] }, 'the final one shows the output as text');

  // What a load replays, to a client that loads the session now (the same one, or any other).
  const late = d.connect('http');
  t.after(() => late.close());
  await late.init({ terminal: true });
  await late.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(theirs, late.updatesFor(sessionId, 'tool_call_update'), 'live, as a load replays it');
});

/**
 * A command waiting in the terminal of an editor (offering terminals, it created the session) whose
 * prompt came from a CLI client (no terminals), and a later editor, offering terminals too, attached
 * while it runs: the command ends once `go` exists.
 */
async function commandInEditorTerminal(t: TestContext, prefixes: { editor: string; later: string }) {
  const go = join(tempDir(), 'go');
  const waiting = { replies: [[{ tool_call: { name: 'run_command', input: { command: `while [ ! -e ${go} ]; do sleep 0.05; done; echo done` } } }], [{ text: 'ran' }]] };
  const editorTerminals = new ClientTerminals(prefixes.editor);
  const laterTerminals = new ClientTerminals(prefixes.later);
  t.after(() => (editorTerminals.killAll(), laterTerminals.killAll(), rmSync(go, { force: true })));
  // The editor offers terminals; the CLI, which prompts, does not.
  const { d, a: editor, b: cli } = await daemonWithClients(t, { script: waiting }, { handlers: { a: { terminals: editorTerminals } }, capabilities: { a: { terminal: true } } });
  const cwd = tempDir();
  const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await cli.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const turn = cli.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
  await waitFor("the command started in the editor's terminal", () => editorTerminals.calls.length === 1);
  // Another editor, offering terminals too, attaches while the command runs: the latest attached.
  const later = d.connect('http', { terminals: laterTerminals });
  t.after(() => later.close());
  await later.init({ terminal: true });
  await later.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  return { go, editorTerminals, laterTerminals, editor, cli, later, sessionId, turn };
}

test("the process's later requests on a terminal (its output, its release) go to the client whose terminal it is, also when another client offering terminals attached since", async (t) => {
  const { go, editorTerminals, laterTerminals, editor, cli, later, sessionId, turn } = await commandInEditorTerminal(t, { editor: 'editor_term_', later: 'later_term_' });
  writeFileSync(go, '');
  assert.equal((await turn).stopReason, 'end_turn');
  assert.deepEqual(editorTerminals.calls, ['create editor_term_1', 'release editor_term_1']);
  assert.deepEqual(laterTerminals.calls, [], 'the later editor was asked nothing of a terminal it never had');
  await later.until(() => later.updatesFor(sessionId, 'tool_call_update').some((u) => u.status === 'completed'), 'the later editor sent the end of the call');
  for (const other of [cli, later]) assert.doesNotMatch(JSON.stringify(other.updates), /editor_term_/, 'nor shown it, live or replayed');
  const final = editor.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(final.status, 'completed');
  assert.match(final.rawOutput.output, /^done\n/);
});

test("the client whose terminal runs a command goes: the process's requests on that terminal are answered an error at once, never asked of another client, which has no such terminal (or one of its own under that id)", async (t) => {
  // The same ids on both: another editor's terminal of that id is its own.
  const { laterTerminals, editor, cli, sessionId, turn } = await commandInEditorTerminal(t, { editor: 'term_', later: 'term_' });
  // The editor quits while the process waits for the command's exit there.
  editor.close();
  assert.equal((await turn).stopReason, 'end_turn');
  assert.deepEqual(laterTerminals.calls, [], 'the other editor was asked nothing of the terminal');
  const final = cli.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(final.status, 'failed', JSON.stringify(final));
  assert.match(final.rawOutput.output, /has left the session/);
});

/** A command that runs until it is killed; the reply after it is reached only by a turn that goes on. */
const sleeper = { replies: [[{ tool_call: { name: 'run_command', input: { command: 'echo started; exec sleep 30' } } }], [{ text: 'seen' }]] };

/**
 * A daemon running `sleeper`, an editor (client a, on `transport`) offering terminals, its new session,
 * and another client (b, offering none); `holdCreate`: the editor answers terminal/create only when
 * the test says (late).
 */
async function editorWithTerminals(t: TestContext, { holdCreate = false, transport = 'http' as 'http' | 'ws' } = {}) {
  const editorTerminals = new ClientTerminals('editor_term_');
  t.after(() => editorTerminals.killAll());
  if (holdCreate) editorTerminals.held.methods.add('terminal/create');
  // What its processes read and write (child-wire-tap.ts): the answers they are sent to the requests they withdrew.
  const tap = tempDir();
  const env = wireTapEnv(tap);
  const { d, a: editor, b: other } = await daemonWithClients(t, { script: sleeper, env }, { a: transport, handlers: { a: { terminals: editorTerminals } }, capabilities: { a: { terminal: true } } });
  const cwd = tempDir();
  const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  return { d, editor, other, editorTerminals, sessionId, cwd, tap };
}

/** The held terminal/create, withdrawn, is answered all the same: the terminal made is released, its command ended, nothing else asked of it. */
async function lateTerminalReleased(editorTerminals: ClientTerminals, what: string): Promise<void> {
  await waitFor(`${what}: terminal/create withdrawn`, () => editorTerminals.held.withdrawn.length === 1);
  editorTerminals.held.answerAll();
  await waitFor(`${what}: the late terminal released, its command ended`, () => editorTerminals.calls.includes('release editor_term_1') && editorTerminals.ended('editor_term_1'));
  assert.deepEqual(editorTerminals.calls, ['create editor_term_1', 'release editor_term_1'], what);
}

test('a session/cancel while the editor has not yet answered terminal/create: the create is withdrawn, and a terminal the editor makes all the same is released by the relay, its command ended', async (t) => {
  const { editor, editorTerminals, sessionId, tap } = await editorWithTerminals(t, { holdCreate: true });
  const turn = editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
  await waitFor('terminal/create asked', () => editorTerminals.held.waiting.length === 1);
  await editor.agent.notify('session/cancel', { sessionId });
  assert.equal((await turn).stopReason, 'cancelled');
  await lateTerminalReleased(editorTerminals, 'cancel');
  // The process's create is answered -32800 once, the late terminal not passed on: released by the
  // relay alone (the process, handed it, would release it again).
  await processAnsweredWithdrawn(tap, ['terminal/create']);
});

test("the session's process dies while the editor has not yet answered terminal/create: the terminal the editor makes after is released by the relay, its command ended (no process is left to learn of it)", async (t) => {
  const { d, editor, editorTerminals, sessionId } = await editorWithTerminals(t, { holdCreate: true });
  const turn = editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] }).catch((e: any) => e?.data?.code);
  await waitFor('terminal/create asked', () => editorTerminals.held.waiting.length === 1);
  process.kill((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid, 'SIGKILL');
  assert.equal(await turn, 'agent_crashed');
  await lateTerminalReleased(editorTerminals, 'crash');
});

test('an editor closes the session while it has not yet answered terminal/create (another client stays): the create is withdrawn from it, and a terminal it makes all the same is released by the relay', async (t) => {
  for (const transport of ['http', 'ws'] as const) {
    // The CLI, which prompts, offers no terminals: asked the create next, it fails it, and the turn goes on.
    const { editor, other: cli, editorTerminals, sessionId, cwd } = await editorWithTerminals(t, { holdCreate: true, transport });
    await cli.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const turn = cli.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
    await waitFor('terminal/create asked', () => editorTerminals.held.waiting.length === 1);
    await editor.agent.request('session/close', { sessionId });
    assert.equal((await turn).stopReason, 'end_turn', transport);
    await lateTerminalReleased(editorTerminals, transport);
  }
});

test("a session/cancel while a command runs in the editor's terminal: the process's terminal/wait_for_exit is withdrawn there (its $/cancel_request relayed), and the terminal killed and released", async (t) => {
  const { editor, editorTerminals, sessionId, tap } = await editorWithTerminals(t);
  const turn = editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
  // Embedded: the process has its terminal, and asks for its exit right behind that update.
  await editor.until(() => terminalsOf(editor.updatesFor(sessionId, 'tool_call_update')).length > 0, 'the terminal embedded');
  await editor.agent.notify('session/cancel', { sessionId });
  assert.equal((await turn).stopReason, 'cancelled');
  await waitFor('the terminal released', () => editorTerminals.calls.includes('release editor_term_1'));
  // Withdrawn ahead of the kill, which goes the same way: seen by the time the release is.
  assert.deepEqual(editorTerminals.waitsWithdrawn, ['editor_term_1']);
  assert.deepEqual(editorTerminals.calls, ['create editor_term_1', 'kill editor_term_1', 'release editor_term_1']);
  await processAnsweredWithdrawn(tap, ['terminal/wait_for_exit']);
});

/**
 * The session's process withdrew these requests (`methods`, in order), and the relay answered each
 * -32800 once, as ACP has a withdrawn request answered: its SDK keeps a request until it is
 * answered. Until 2026-12-07 none was, and a long session's process held every one it withdrew.
 */
async function processAnsweredWithdrawn(tap: string, methods: string[]): Promise<void> {
  await waitFor("the process's withdrawn requests answered", () => childWithdrawals(tap).length === methods.length && childWithdrawals(tap).every((w) => w.answers.length > 0));
  assert.deepEqual(childWithdrawals(tap).map((w) => [w.method, w.answers]), methods.map((m) => [m, [-32800]]));
}

test("the session's process dies while its command runs in the editor's terminal: the relay withdraws the process's terminal/wait_for_exit and releases the terminal, its command ended (no process is left to)", async (t) => {
  const { d, editor, editorTerminals, sessionId } = await editorWithTerminals(t);
  const turn = editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] }).catch((e: any) => e?.data?.code);
  await editor.until(() => terminalsOf(editor.updatesFor(sessionId, 'tool_call_update')).length > 0, 'the terminal embedded');
  await waitFor('terminal/wait_for_exit asked', () => editorTerminals.waitsAsked.includes('editor_term_1'));
  process.kill((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid, 'SIGKILL');
  assert.equal(await turn, 'agent_crashed');
  await waitFor('the terminal released, its command ended', () => editorTerminals.calls.includes('release editor_term_1') && editorTerminals.ended('editor_term_1'));
  assert.deepEqual(editorTerminals.waitsWithdrawn, ['editor_term_1']);
  assert.deepEqual(editorTerminals.calls, ['create editor_term_1', 'release editor_term_1']);
});
