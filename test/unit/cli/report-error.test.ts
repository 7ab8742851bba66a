// reportError with TROUPE_LOG=debug prints the error's chain of causes after its line: a cause that
// is null (`new Error(m, { cause: null })`, anything may be thrown) ends the chain, where reading its
// fields threw a TypeError out of the one function that reports every command's error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { reportError, type CliIo } from '../../../src/cli/cli-io.js';

function capture(): { io: CliIo; stderr: () => string } {
  const err = new PassThrough();
  let text = '';
  err.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const io = { stdout: new PassThrough(), stderr: err, env: { TROUPE_LOG: 'debug' }, stdin: new PassThrough() } as unknown as CliIo;
  return { io, stderr: () => text };
}

test('TROUPE_LOG=debug: the causes are printed down to one that is null, which ends the chain', () => {
  const { io, stderr } = capture();
  const err = new Error('the daemon went away', { cause: Object.assign(new Error('terminated', { cause: null }), { code: 'UND_ERR_SOCKET' }) });
  assert.equal(reportError(io, 'run', err), 1);
  assert.match(stderr(), /^troupe run: the daemon went away\n/);
  assert.match(stderr(), /\ncaused by: Error: terminated \(UND_ERR_SOCKET\)\n$/);
  const { io: io2, stderr: stderr2 } = capture();
  assert.equal(reportError(io2, 'run', new Error('boom', { cause: null })), 1);
  assert.doesNotMatch(stderr2(), /caused by/);
});
