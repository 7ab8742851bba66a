// The client terminal CommandBackend against a fake ACP client: cancellation, release and its output's bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFileBackend, clientPermissionAsker, clientTerminalBackend } from '../../../src/acp/client-bridges.js';
import { FileTooLargeError } from '../../../src/tools/index.js';
import type { ToolContent } from '../../../src/core/events.js';

type Exit = { exitCode: number | null; signal: string | null };

/** A client whose terminal runs until killed (or `onCreate` ends it); records what the backend did. */
function fakeClient(onCreate: (exit: (status: Exit) => void) => void = () => {}, output = 'partial') {
  const log: string[] = [];
  let exit!: (status: Exit) => void;
  const exited = new Promise<Exit>((resolve) => (exit = resolve));
  const client = {
    async request(method: string) {
      switch (method) {
        case 'terminal/create':
          onCreate(exit);
          return { terminalId: 'term-1' };
        case 'terminal/wait_for_exit':
          return exited;
        case 'terminal/kill':
          log.push('kill');
          exit({ exitCode: null, signal: 'SIGTERM' });
          return {};
        case 'terminal/output':
          return { output, truncated: false, exitStatus: await exited };
        case 'terminal/release':
          log.push('release');
          return {};
      }
      throw new Error(`unexpected ${method}`);
    },
  };
  return { client, log };
}

test('a cancel that arrives while the terminal is being created: the call ends at once, and the terminal, once made, is released', async () => {
  const controller = new AbortController();
  // The editor answers terminal/create after the user has cancelled.
  const { client, log } = fakeClient(() => controller.abort());
  const backend = clientTerminalBackend(client as never, 'sess-1', 60_000);
  const updates: ToolContent[][] = [];
  await assert.rejects(backend.run({ command: 'sleep 1000', cwd: '/tmp', timeoutMs: 1000, outputByteLimit: 1000 }, { signal: controller.signal, update: (c) => updates.push(c) }));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(updates, [], 'no terminal shown in a cancelled call');
  assert.deepEqual(log, ['release'], 'the late terminal released (which ends its command)');
});

test('output a client terminal kept beyond outputByteLimit is cut to its last bytes, from a character, and marked', async () => {
  const limit = 1000;
  const ended = (exit: (status: Exit) => void) => exit({ exitCode: 0, signal: null });
  const run = (output: string, outputByteLimit: number) =>
    clientTerminalBackend(fakeClient(ended, output).client as never, 'sess-1', 60_000).run(
      { command: 'noisy', cwd: '/tmp', timeoutMs: 60_000, outputByteLimit },
      { signal: new AbortController().signal, update: () => undefined },
    );
  // A client that ignores outputByteLimit (ACP says it cuts from the beginning) and sends it all.
  const outcome = await run(`${'start '.repeat(10_000)}${'é'.repeat(limit)}`, limit);
  assert.equal(outcome.truncated, true);
  // 1000 bytes from the end is a character's start: 500 é.
  assert.equal(outcome.output, `[... earlier output omitted: the client terminal kept the last ${limit} bytes ...]\n${'é'.repeat(limit / 2)}`);
  const odd = await run(`x${'é'.repeat(limit)}`, limit - 1);
  // 999 bytes from the end falls inside an é: the cut starts at the next one.
  assert.equal(odd.output.split('\n')[1], 'é'.repeat(limit / 2 - 1));
  const fits = await run('é'.repeat(limit / 2), limit);
  assert.deepEqual([fits.output, fits.truncated], ['é'.repeat(limit / 2), false]);
});

test("a client's text over the read's maxBytes is refused; at maxBytes it is returned", async () => {
  const content = 'é'.repeat(50); // 100 bytes in UTF-8, 50 characters
  const client = { request: async () => ({ content }) };
  const local = { readText: async () => assert.fail('the client reads'), writeText: async () => assert.fail('not written') };
  const backend = clientFileBackend(client as never, 'sess-1', local, () => ({ readTextFile: true, writeTextFile: true }), 60_000);
  const signal = new AbortController().signal;
  assert.equal(await backend.readText('/w/a.txt', { maxBytes: 100 }, signal), content);
  await assert.rejects(backend.readText('/w/a.txt', { maxBytes: 99 }, signal), (err: unknown) => err instanceof FileTooLargeError && err.maxBytes === 99);
});

test("a permission request walks the call's input once to fit it and its preview on one line", async () => {
  // A getter counts the walks of the input (the fake client sends nothing, so makes no JSON of it).
  let reads = 0;
  const input = Object.defineProperty({ path: '/w/a.txt' }, 'content', { enumerable: true, get: () => (reads++, 'new text') });
  const sent: unknown[] = [];
  const client = { request: async (_method: string, params: unknown) => (sent.push(params), { outcome: { outcome: 'selected', optionId: 'allow_once' } }) };
  const asker = clientPermissionAsker(client as never, 'sess-1');
  const preview: ToolContent[] = [{ type: 'diff', path: '/w/a.txt', oldText: 'old text', newText: 'new text' }];
  const request = { requestId: 'r1', toolCallId: 'call_1', toolName: 'write_file', title: 'Write a.txt', kind: 'edit' as const, input, options: ['allow_once' as const, 'reject_once' as const], content: preview };
  assert.equal(await asker.ask(request, new AbortController().signal), 'allow_once');
  assert.equal(reads, 1, 'one walk of the input');
  const toolCall = (sent[0] as { toolCall: { rawInput: unknown; content: unknown[] } }).toolCall;
  assert.equal(toolCall.rawInput, input);
  assert.equal(toolCall.content.length, 1, 'the preview is sent');
});
