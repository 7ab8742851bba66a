/**
 * The warm-up of a pooled child (spec/daemon.md §Warm-up). A child waiting in the daemon's pool has
 * loaded its code but never run it: its first `initialize` and `session/new` would pay for V8's lazy
 * compilation and cold inline caches of the SDK's parsers and schemas, the agent app, the session
 * engine and its machines, the event log and the projection (about 15 ms of CPU here, against 2 ms
 * in a warm process), and its first turn for those of the turn machine, the provider stream, the
 * log's encoder and group commit, the projection to update lines and the control channel's record
 * forwarding (about 10 ms for a one-word reply, and 5× the CPU per update of a warm process for its
 * first long one). So while it waits, the child runs that exact path on a throwaway session: the
 * same agent app and the same NDJSON framing, over an in-memory pipe to an SDK client, with a session
 * host of its own whose home is a fresh scratch directory, removed when done (or at exit), whose
 * reporter is a control channel writing to nowhere, and whose update lines go to a writer that drops
 * them: nothing reaches stdout, fd 3, the daemon's home or its index. Its turn streams a few hundred
 * text chunks and one read-only tool call from the offline `scripted/replay` model, on an env of its
 * own (TROUPE_MODEL, TROUPE_SCRIPT), so the model the user configured is never called, and a
 * scripted/replay user's own script keeps its position. The scratch directory is on /dev/shm when
 * there is one: the log's fsyncs are free there, where on a busy disk they could block the child's
 * loop (and its heartbeats) for long.
 */
import { accessSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { silentLogger, type Logger } from '../core/ports.js';
import type { TroupeConfig } from '../providers/config.js';
import { createAgentApp } from './agent.app.js';
import { batchedStdout } from './batched-stdout.js';
import { SessionHost } from './session-host.js';
import { ControlChannel } from './control-channel.js';
import { collectGarbage } from './collect-garbage.js';
import { isProcessAlive } from '../store/index.js';

/**
 * Rounds of the path: the first compiles it, the next ones fill the inline caches (5 rounds left
 * ~0.7 ms less CPU on the first real request than 2 here; 4 keep most of that).
 */
const ROUNDS = 4;
/**
 * Rounds that also run a turn (the last ones), and the text chunks of its reply. Measured with
 * bench/pooled-first-turn.ts: 2 turns of 200 chunks take a pooled child's first one-word turn from
 * ~20 ms of CPU to ~3 ms and its first 400-item reply from ~75 to ~15 µs per update, for ~45 ms
 * of CPU while it waits and 0.6–1.2 MiB more private memory; 4 turns of 300 gained nothing more
 * and cost more, 1 turn left a third of the gap.
 */
const TURNS = 2;
const CHUNKS = 200;
const PROMPT = 'warm-up';

/** The warm-up turn: chunks and a read-only tool call (allowed by policy in every mode), then a closing reply per round. */
function script(chunkDelayMs: number): unknown {
  const chunks = Array.from({ length: CHUNKS }, (_, i) => ({ text: `w${i} ` }));
  return {
    chunkDelayMs,
    replies: [
      { when: PROMPT, items: [{ thought: 'warming up' }, ...chunks, { tool_call: { name: 'read_file', input: { path: 'warm-up.txt' } } }] },
      // Tool results are answered by unkeyed replies, each used once.
      ...Array.from({ length: ROUNDS }, () => [{ text: 'done' }]),
    ],
  };
}

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
    if (pid && pid !== process.pid && !isProcessAlive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(base, `troupe-warm-up-${process.pid}-`));
}

/**
 * `asked`: aborted when a real request arrives. The warm-up then cancels its running turn (a
 * `session/cancel`, as a client would) and starts no further step or round, so that the real
 * request does not share the loop with it for long.
 */
export async function warmUp(opts: { env: NodeJS.ProcessEnv; config: TroupeConfig; asked: AbortSignal; logger: Logger }): Promise<void> {
  const { config, asked, logger } = opts;
  const started = performance.now();
  const home = scratchDir();
  const remove = () => rmSync(home, { recursive: true, force: true });
  process.once('exit', remove);
  const scriptPath = join(home, 'warm-up-script.json');
  // TROUPE_WARM_UP_CHUNK_DELAY_MS (tests only) slows the warm-up turn's chunks down, so that a test
  // can send its request while the turn is surely running.
  writeFileSync(scriptPath, JSON.stringify(script(Number(opts.env.TROUPE_WARM_UP_CHUNK_DELAY_MS) || 0)));
  writeFileSync(join(home, 'warm-up.txt'), 'a file the warm-up reads\n');
  // Its own env object: the registry builds providers per env, so this one never shares a provider
  // (or a replay position) with the real sessions.
  const env: NodeJS.ProcessEnv = { ...opts.env, TROUPE_MODEL: 'scripted/replay', TROUPE_SCRIPT: scriptPath };
  const toAgent = new PassThrough();
  const toClient = new PassThrough();
  // The real channel's encoding and batching, on a socket that drops every frame; no heartbeat.
  const nowhere = { destroyed: false, write: () => true, end: () => undefined } as unknown as Socket;
  const reporter = new ControlChannel(nowhere, 2 ** 30);
  // Live updates take the real direct line path, into a writer whose sink drops them (the SDK
  // client would only spend CPU parsing them).
  const dropped = batchedStdout(new Writable({ write: (_chunk, _enc, done) => done() }));
  const host = SessionHost.open({ home, env, config, logger: silentLogger, reporter, updateLines: dropped.lines });
  const app = createAgentApp({ openHost: () => host, env, config, logger: silentLogger });
  const input = acp.ndJsonStream(new WritableStream(), Readable.toWeb(toAgent) as ReadableStream<Uint8Array>);
  const agentSide = app.connect({ readable: input.readable, writable: batchedStdout(toClient).writable });
  const client = acp
    .client()
    .onNotification('session/update', () => undefined)
    .connect(acp.ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>));
  let sessionId: string | undefined;
  const cancel = () => void (sessionId && client.agent.notify('session/cancel', { sessionId }).catch(() => undefined));
  asked.addEventListener('abort', cancel, { once: true });
  const done = { rounds: 0, turns: 0, cancelledTurns: 0 };
  try {
    for (let i = 0; i < ROUNDS && !asked.aborted; i++) {
      // A full collection before the last round, which then warms up again what it cleared (V8's
      // megamorphic and regexp caches): a child started from the code cache has allocated too little
      // for V8's first one by now, which would otherwise come in its first real turn (a 4000-update
      // reply about 30% slower). It also leaves the waiting child about 2 MiB smaller.
      if (i === ROUNDS - 1) collectGarbage();
      await client.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'troupe-warm-up', version: '0' } });
      if (asked.aborted) break;
      sessionId = (await client.agent.request('session/new', { cwd: home, mcpServers: [] })).sessionId;
      if (!asked.aborted && i >= ROUNDS - TURNS) {
        logger.debug('warm-up turn', { round: i });
        const { stopReason } = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: PROMPT }] });
        if (stopReason === 'cancelled') done.cancelledTurns++;
        else done.turns++;
      }
      await client.agent.request('session/close', { sessionId });
      sessionId = undefined;
      done.rounds++;
    }
  } finally {
    asked.removeEventListener('abort', cancel);
    client.close();
    toAgent.end();
    await agentSide.closed.catch(() => undefined);
    await (await host).shutdown();
    reporter.close();
    remove();
    process.removeListener('exit', remove);
  }
  logger.debug('warm-up done', { ...done, asked: asked.aborted, ms: Math.round(performance.now() - started) });
}
