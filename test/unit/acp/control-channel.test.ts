// The supervised child's control channel (fd 3), in the order the daemon relies on: a machine's
// transition reaches the daemon before the agent's stdout output that follows it, durable events
// leave as soon as they are durable (before the prompt's answer), and close() ends the socket after
// every frame. (Batching the frames of a loop turn was tried on 2026-11-30 and, once it kept this
// order, saved nothing measurable: spec/daemon.md §Control channel.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { batchedStdout } from '../../../src/acp/batched-stdout.js';
import { ControlChannel } from '../../../src/acp/control-channel.js';
import { ControlFrameDecoder } from '../../../src/wire/control-frame.codec.js';
import type { ControlMessage } from '../../../src/wire/control-messages.js';
import type { AgentEvent } from '../../../src/core/events.js';
import type { EventLog } from '../../../src/core/ports.js';

const label = (m: ControlMessage) => (m.t === 'transition' ? m.state : m.t);

/** A socket that records each write apart, into `order` (a real one may merge them on the reader's side). */
function recordingSocket(order: string[] = []) {
  let ended = false;
  const socket = {
    destroyed: false,
    write: (b: Buffer) => {
      assert.equal(ended, false, 'no write after end');
      order.push(`fd3 ${new ControlFrameDecoder().push(Buffer.from(b)).map(label).join(',')}`);
      return true;
    },
    end: () => void (ended = true),
  } as unknown as Socket;
  return { socket, order, ended: () => ended };
}

const transition = (state: string) => ({ t: 'transition' as const, sessionId: 'ses_a', machine: 'turn' as const, state, event: 'x', at: 1 });

test('a transition reaches the daemon before the stdout output that follows it', async () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  const stdout = new Writable({ write: (chunk, _enc, done) => (s.order.push(`stdout ${String(chunk).trim()}`), done()) });
  const out = batchedStdout(stdout);
  channel.send(transition('running'));
  out.lines('{"update":1}\n');
  await out.flush();
  assert.deepEqual(s.order.slice(-2), ['fd3 running', 'stdout {"update":1}']);
  channel.close();
});

test('durable events leave as soon as they are durable, before the loop turns again', async () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  let durable!: () => void;
  // A log that does not hand over its records: its events go as an `events` frame.
  const log = { sessionId: 'ses_a', whenDurable: () => new Promise<void>((resolve) => (durable = resolve)) } as unknown as EventLog;
  const closed = { type: 'session_closed', sessionId: 'ses_a', seq: 1, ts: 1, reason: 'closed' } as unknown as AgentEvent;
  channel.event(log, closed);
  await new Promise((r) => setImmediate(r)); // the channel waits for durability from the next turn of the loop
  durable();
  // Microtasks only, no turn of the loop: the agent writes a prompt's answer at this point, and the
  // daemon should already have the turn's events.
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.equal(s.order.at(-1), 'fd3 events');
  channel.close();
});

test('close() ends the socket after every frame', () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  channel.send(transition('last'));
  channel.close();
  assert.equal(s.ended(), true);
  assert.deepEqual(s.order, ['fd3 hello', 'fd3 hb', 'fd3 last']);
});
