/**
 * The baseline agent of the ACP benchmarks: the least an ACP agent can be on the same SDK (app API,
 * ndJsonStream on stdio) — no engine, no log, no providers. troupe's figures are reported as ratios
 * against it, so that the same run on a noisy machine stays comparable.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Writes the baseline agent to `dir` and returns its path. It answers `initialize`, `session/new`,
 * `session/prompt` (one agent_message_chunk, then end_turn), `_troupe/session_state` (a constant
 * state, for relay-floor.ts) and `session/load` (replays BASELINE_REPLAY_UPDATES message chunks of
 * BASELINE_REPLAY_TEXT, then responds). With
 * BASELINE_CORKED=1 it writes through a coalescing stream: the fix proposed for replay cost.
 */
export function writeBaselineAgent(dir: string): string {
  // The temp dir has no node_modules: import the SDK by absolute URL.
  const sdk = pathToFileURL(createRequire(import.meta.url).resolve('@agentclientprotocol/sdk')).href;
  const source = `
import * as acp from ${JSON.stringify(sdk)};
import { Readable, Writable } from 'node:stream';
const replay = Number(process.env.BASELINE_REPLAY_UPDATES ?? 0);
const replayText = process.env.BASELINE_REPLAY_TEXT ?? 'word ';
let n = 0;
const chunk = (sessionId, text) => ({ sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });
const app = acp.agent({ name: 'baseline' })
  .onRequest('initialize', () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { loadSession: true }, authMethods: [] }))
  .onRequest('session/new', () => ({ sessionId: 'ses_' + (++n) }))
  .onRequest('session/load', async ({ params, client }) => {
    for (let i = 0; i < replay; i++) await client.notify('session/update', chunk(params.sessionId, replayText));
    return {};
  })
  .onRequest('session/prompt', async ({ params, client }) => {
    await client.notify('session/update', chunk(params.sessionId, 'pong'));
    return { stopReason: 'end_turn' };
  })
  // The request daemon-bench times round trips with (relay-floor.ts): answered from nothing.
  .onRequest('_troupe/session_state', (p) => p, ({ params }) => ({ sessionId: params.sessionId, session: 'idle' }));
// BASELINE_CORKED=1: the same agent, but outgoing messages are coalesced into one stdout write per
// loop turn (awaiting 'drain' when the pipe is full) instead of one write per message.
function corked() {
  let pending = [];
  let scheduled = false;
  let drained = Promise.resolve();
  const flush = () => {
    scheduled = false;
    const text = pending.join('');
    pending = [];
    if (!process.stdout.write(text)) drained = new Promise((r) => process.stdout.once('drain', r));
  };
  return new WritableStream({
    async write(message) {
      pending.push(JSON.stringify(message) + '\\n');
      if (!scheduled) (scheduled = true), setImmediate(flush);
      await drained;
    },
  });
}
const std = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const conn = app.connect(process.env.BASELINE_CORKED === '1' ? { readable: std.readable, writable: corked() } : std);
await conn.closed;
`;
  const path = join(dir, 'baseline-agent.mjs');
  writeFileSync(path, source);
  return path;
}
