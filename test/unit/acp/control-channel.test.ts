// The supervised child's control channel (fd 3): the frames made in one turn of the loop leave in
// one write, in the order they were made; durable events leave at once; close() sends what is
// still queued before ending.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { ControlChannel } from '../../../src/acp/control-channel.js';
import { ControlFrameDecoder } from '../../../src/wire/control-frame.codec.js';
import type { ControlMessage } from '../../../src/wire/control-messages.js';
import type { AgentEvent } from '../../../src/core/events.js';
import type { EventLog } from '../../../src/core/ports.js';

/** A socket that keeps each write apart (a real one may merge them on the reader's side). */
function recordingSocket() {
  const writes: Buffer[] = [];
  let ended = false;
  const socket = {
    destroyed: false,
    write: (b: Buffer) => {
      assert.equal(ended, false, 'no write after end');
      writes.push(Buffer.from(b));
      return true;
    },
    end: () => void (ended = true),
  } as unknown as Socket;
  const decode = (chunks: Buffer[]): ControlMessage[] => new ControlFrameDecoder().push(Buffer.concat(chunks));
  return { socket, writes, decode, ended: () => ended };
}

const transition = (state: string) => ({ t: 'transition' as const, sessionId: 'ses_a', machine: 'turn' as const, state, event: 'x', at: 1 });
const nextTurn = () => new Promise((r) => setImmediate(r));

test('the frames of one loop turn leave in one write, in order', async () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  // The hello and the first heartbeat leave at once, together: the daemon waits for the hello.
  assert.equal(s.writes.length, 1);
  assert.deepEqual(s.decode(s.writes).map((m) => m.t), ['hello', 'hb']);

  for (const state of ['a', 'b', 'c']) channel.send(transition(state));
  assert.equal(s.writes.length, 1, 'queued until the end of the loop turn');
  await nextTurn();
  assert.equal(s.writes.length, 2, 'three frames, one write');
  assert.deepEqual(
    s.decode([s.writes[1]!]).map((m) => (m.t === 'transition' ? m.state : m.t)),
    ['a', 'b', 'c'],
  );

  channel.send(transition('d'));
  await nextTurn();
  assert.equal(s.writes.length, 3, 'a later turn writes again');
  channel.close();
});

test('close() sends what is queued before it ends the socket', () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  channel.send(transition('last'));
  channel.close();
  assert.equal(s.ended(), true);
  assert.deepEqual(
    s.decode(s.writes).map((m) => (m.t === 'transition' ? m.state : m.t)),
    ['hello', 'hb', 'last'],
  );
});

test('durable events leave at once, behind the frames queued before them', async () => {
  const s = recordingSocket();
  const channel = new ControlChannel(s.socket, 2 ** 30);
  let durable!: () => void;
  // A log that does not hand over its records: its events go as an `events` frame.
  const log = { sessionId: 'ses_a', whenDurable: () => new Promise<void>((resolve) => (durable = resolve)) } as unknown as EventLog;
  const closed = { type: 'session_closed', sessionId: 'ses_a', seq: 1, ts: 1, reason: 'closed' } as unknown as AgentEvent;
  channel.event(log, closed);
  await nextTurn(); // the channel waits for durability from the next turn of the loop
  channel.send(transition('queued'));
  durable();
  // Microtasks only, no turn of the loop: the agent writes a prompt's answer at this point, and the
  // daemon should already have the turn's events.
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.equal(s.writes.length, 2);
  assert.deepEqual(
    s.decode([s.writes[1]!]).map((m) => (m.t === 'transition' ? m.state : m.t)),
    ['queued', 'events'],
  );
  channel.close();
});
