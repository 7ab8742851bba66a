// The client terminal CommandBackend against a fake ACP client: cancellation and release.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientTerminalBackend } from '../../../src/acp/client-bridges.js';
import type { ToolContent } from '../../../src/core/events.js';

type Exit = { exitCode: number | null; signal: string | null };

/** A client whose terminals run until killed; records what the backend did. */
function fakeClient(onCreate: () => void = () => {}) {
  const log: string[] = [];
  const client = {
    async createTerminal() {
      onCreate();
      let exit!: (status: Exit) => void;
      const exited = new Promise<Exit>((resolve) => (exit = resolve));
      return {
        id: 'term-1',
        waitForExit: () => exited,
        kill: async () => {
          log.push('kill');
          exit({ exitCode: null, signal: 'SIGTERM' });
        },
        currentOutput: async () => ({ output: 'partial', truncated: false, exitStatus: await exited }),
        release: async () => {
          log.push('release');
        },
      };
    },
  };
  return { client, log };
}

test('a cancel that arrives while the terminal is being created kills it at once', async () => {
  const controller = new AbortController();
  // The editor answers terminal/create after the user has cancelled.
  const { client, log } = fakeClient(() => controller.abort());
  const backend = clientTerminalBackend(client as never, 'sess-1');
  const updates: ToolContent[][] = [];
  const outcome = await backend.run(
    { command: 'sleep 1000', cwd: '/tmp', timeoutMs: 1000, outputByteLimit: 1000 },
    { signal: controller.signal, update: (c) => updates.push(c) },
  );
  assert.equal(outcome.timedOut, false);
  assert.equal(outcome.signal, 'SIGTERM');
  assert.deepEqual(log, ['kill', 'release']);
});
