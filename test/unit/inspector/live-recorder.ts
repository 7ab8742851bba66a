// An engine harness whose machine transitions are recorded exactly as a supervised child reports
// them: XState inspection events through the real ControlChannel, over a real Unix socket,
// decoded with the real control-frame codec.
import { createServer, Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ControlChannel } from '../../../src/acp/control-channel.js';
import { ControlFrameDecoder } from '../../../src/wire/control-frame.codec.js';
import { replaySession } from '../../../src/machines/replay.js';
import { makeHarness, type Harness, type HarnessOptions } from '../../support/engine-harness.js';
import type { ScriptItem } from '../../../src/providers/scripted/script-items.js';

export interface Live {
  machine: string;
  state: string;
  event: string;
}

export async function recorded(replies: ScriptItem[][], options: HarnessOptions = {}) {
  const path = join(mkdtempSync(join(tmpdir(), 'troupe-inspector-')), 'ctl.sock');
  const live: Live[] = [];
  const decoder = new ControlFrameDecoder();
  let serverSide!: Socket;
  const server = createServer((s) => {
    serverSide = s;
    s.on('data', (chunk) => {
      for (const m of decoder.push(chunk)) if (m.t === 'transition') live.push({ machine: m.machine, state: m.state, event: m.event });
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  const client = new Socket();
  await new Promise<void>((r) => client.connect(path, r));
  const channel = new ControlChannel(client, 60_000);
  const h = makeHarness(replies, options);
  h.engine.inspect((ev) => channel.transition(h.engine.sessionId, ev));
  return {
    h,
    /** Closes the channel and returns every transition the reader received. */
    async finish(): Promise<Live[]> {
      const ended = new Promise((r) => serverSide.once('end', r));
      channel.close();
      await ended;
      server.close();
      return live;
    },
  };
}

/** The replayed transitions, minus the session's first init (made before the test could listen). */
export function replayed(h: Harness): Live[] {
  const all = replaySession(h.events);
  assert.deepEqual(all[0] && [all[0].machine, all[0].state, all[0].event, all[0].cause.type], ['session', 'idle', 'init', 'session_created']);
  return all.slice(1).map((t) => ({ machine: t.machine, state: t.state, event: t.event }));
}

export const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 1));
};
