/**
 * The supervised child's side of the control channel (fd 3): a hello, heartbeats, each session's
 * events once durable, and machine transitions. Only `troupe acp --supervised` opens it; its daemon
 * reads it (spec/daemon.md §Control channel).
 */
import { Socket } from 'node:net';
import type { InspectionEvent } from 'xstate';
import type { AgentEvent } from '../core/events.js';
import type { EventLog } from '../core/ports.js';
import { VERSION } from '../core/version.js';
import { describeMachine, eventLabel, statePath } from '../machines/serialize.js';
import { sessionMachine } from '../machines/session.machine.js';
import { turnMachine } from '../machines/turn.machine.js';
import { encodeControlFrame } from '../wire/control-frame.codec.js';
import type { ControlMessage } from '../wire/control-messages.js';

const DESCRIPTIONS = { session: describeMachine(sessionMachine), turn: describeMachine(turnMachine) };

export interface SessionReporter {
  /** Called for every event as it is appended; forwards it once durable. */
  event(log: EventLog, event: AgentEvent): void;
  transition(sessionId: string, ev: InspectionEvent): void;
}

export class ControlChannel implements SessionReporter {
  private events = 0;
  private readonly timer: NodeJS.Timeout;
  /** Per session: events appended and not yet sent (waiting to become durable). */
  private readonly pending = new Map<string, AgentEvent[]>();
  private readonly lastState = new Map<string, string>();

  constructor(
    private readonly socket: Socket,
    heartbeatMs: number,
  ) {
    this.send({ t: 'hello', pid: process.pid, version: VERSION });
    this.timer = setInterval(() => this.heartbeat(), heartbeatMs);
    this.timer.unref();
    this.heartbeat();
  }

  /** fd 3 as a socket; undefined when the process was not given one. */
  static open(heartbeatMs: number): ControlChannel | undefined {
    try {
      const socket = new Socket({ fd: 3, readable: false, writable: true });
      socket.on('error', () => undefined); // the daemon went away: nothing left to tell
      return new ControlChannel(socket, heartbeatMs);
    } catch {
      return undefined;
    }
  }

  send(message: ControlMessage): void {
    if (!this.socket.destroyed) this.socket.write(encodeControlFrame(message));
  }

  event(log: EventLog, event: AgentEvent): void {
    this.events++;
    let queue = this.pending.get(event.sessionId);
    if (!queue) this.pending.set(event.sessionId, (queue = []));
    queue.push(event);
    // One wait per burst, not per event: after this loop turn, wait until the newest queued event is
    // durable and send everything durable by then in one frame.
    if (this.waiting.has(event.sessionId)) return;
    this.waiting.add(event.sessionId);
    setImmediate(() => this.sendWhenDurable(log, event.sessionId));
  }

  private readonly waiting = new Set<string>();

  private sendWhenDurable(log: EventLog, sessionId: string): void {
    const queue = this.pending.get(sessionId);
    const newest = queue?.at(-1)?.seq;
    if (newest === undefined) return void this.waiting.delete(sessionId);
    void log.whenDurable(newest).then(
      () => {
        this.flush(sessionId, newest);
        if (this.pending.get(sessionId)?.length) setImmediate(() => this.sendWhenDurable(log, sessionId));
        else this.waiting.delete(sessionId);
      },
      () => this.waiting.delete(sessionId),
    );
  }

  transition(sessionId: string, ev: InspectionEvent): void {
    if (ev.type !== '@xstate.snapshot') return;
    const machine = (ev.actorRef as { logic?: { id?: string } }).logic?.id;
    if (machine !== 'session' && machine !== 'turn') return;
    const value = (ev.snapshot as { value?: unknown }).value;
    if (value === undefined) return;
    const state = statePath(value);
    const key = `${sessionId}/${machine}`;
    if (this.lastState.get(key) === state && ev.event.type !== 'xstate.init') return;
    this.lastState.set(key, state);
    this.send({ t: 'transition', sessionId, machine, state, event: eventLabel(ev.event.type, DESCRIPTIONS[machine]), at: Date.now() });
  }

  close(): void {
    clearInterval(this.timer);
    this.socket.end();
  }

  private flush(sessionId: string, durableSeq: number): void {
    const queue = this.pending.get(sessionId);
    if (!queue?.length) return;
    let n = 0;
    while (n < queue.length && queue[n]!.seq <= durableSeq) n++;
    if (n > 0) this.send({ t: 'events', sessionId, events: queue.splice(0, n) });
  }

  private heartbeat(): void {
    const mem = process.memoryUsage();
    this.send({ t: 'hb', at: Date.now(), rss: mem.rss, heapUsed: mem.heapUsed, events: this.events });
  }
}
