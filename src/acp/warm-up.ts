/**
 * The warm-up of a pooled child (spec/daemon.md §Warm pool). A child waiting in the daemon's pool has
 * loaded its code but never run it: its first `initialize` and `session/new` would pay for V8's lazy
 * compilation and cold inline caches of the SDK's parsers and schemas, the agent app, the session
 * engine and its machines, the event log and the projection (about 15 ms of CPU here, against 2 ms
 * in a warm process). So while it waits, the child runs that exact path on a throwaway session: the
 * same agent app and the same NDJSON framing, over an in-memory pipe to an SDK client, with a session
 * host of its own whose home is a fresh scratch directory, removed when done (or at exit), and whose
 * reporter is a control channel writing to nowhere: nothing reaches stdout, fd 3, the daemon's home
 * or its index. The scratch directory is on /dev/shm when there is one: the log's fsyncs are free
 * there, where on a busy disk they could block the child's loop (and its heartbeats) for long.
 */
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { silentLogger } from '../core/ports.js';
import type { TroupeConfig } from '../providers/config.js';
import { createAgentApp } from './agent.app.js';
import { batchedStdout } from './batched-stdout.js';
import { SessionHost } from './session-host.js';
import { ControlChannel } from './control-channel.js';

/**
 * Rounds of the path: the first compiles it, the next ones fill the inline caches (5 rounds left
 * ~0.7 ms less CPU on the first real request than 2 here; 4 keep most of that).
 */
const ROUNDS = 4;

/**
 * Where the throwaway session lives: memory-backed if possible, named after the process. A child
 * killed (SIGKILL) during its warm-up cannot remove its directory: the next warm-up removes those of
 * processes that no longer exist.
 */
function scratchDir(): string {
  let base = '/dev/shm';
  try {
    accessSync(base, constants.W_OK);
  } catch {
    base = tmpdir();
  }
  for (const name of readdirSync(base)) {
    const pid = Number(/^troupe-warm-up-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !alive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(base, `troupe-warm-up-${process.pid}-`));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `asked`: whether a real request has arrived; the warm-up then stops after the current round. */
export async function warmUp(opts: { env: NodeJS.ProcessEnv; config: TroupeConfig; asked: () => boolean }): Promise<void> {
  const { env, config } = opts;
  const home = scratchDir();
  const remove = () => rmSync(home, { recursive: true, force: true });
  process.once('exit', remove);
  const toAgent = new PassThrough();
  const toClient = new PassThrough();
  // The real channel's encoding and batching, on a socket that drops every frame; no heartbeat.
  const nowhere = { destroyed: false, write: () => true, end: () => undefined } as unknown as Socket;
  const reporter = new ControlChannel(nowhere, 2 ** 30);
  const host = SessionHost.open({ home, env, config, logger: silentLogger, reporter });
  const app = createAgentApp({ openHost: () => host, env, config, logger: silentLogger });
  const input = acp.ndJsonStream(new WritableStream(), Readable.toWeb(toAgent) as ReadableStream<Uint8Array>);
  const agentSide = app.connect({ readable: input.readable, writable: batchedStdout(toClient).writable });
  const client = acp
    .client()
    .onNotification('session/update', () => undefined)
    .connect(acp.ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>));
  try {
    for (let i = 0; i < ROUNDS && !opts.asked(); i++) {
      await client.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'troupe-warm-up', version: '0' } });
      const { sessionId } = await client.agent.request('session/new', { cwd: home, mcpServers: [] });
      await client.agent.request('session/close', { sessionId });
    }
  } finally {
    client.close();
    toAgent.end();
    await agentSide.closed.catch(() => undefined);
    await (await host).shutdown();
    reporter.close();
    remove();
    process.removeListener('exit', remove);
  }
}
