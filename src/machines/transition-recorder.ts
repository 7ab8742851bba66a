/**
 * Machine transitions from XState inspection events, as the control channel reports them live and
 * the inspector's replay rebuilds them from a log: one per snapshot whose state path changed (or
 * that is an init), for the session and turn machines only.
 */
import type { InspectionEvent } from 'xstate';
import { sessionMachine } from './session.machine.js';
import { turnMachine } from './turn.machine.js';
import { describeMachine, eventLabel, statePath, type MachineDescription } from './serialize.js';

/** One change of a machine's state, as the inspector shows it. */
export interface MachineTransition {
  machine: 'session' | 'turn';
  /** The state path after the change (`tools.awaitingPermission`). */
  state: string;
  /** The machine event, labelled like the live feed (`done: modelStep`, `CANCEL`, `init`). */
  event: string;
  /** Epoch ms: when it happened (live), or the `ts` of the log event that caused it (replayed). */
  at: number;
}

const DESCRIPTIONS: Record<'session' | 'turn', MachineDescription> = { session: describeMachine(sessionMachine), turn: describeMachine(turnMachine) };

/** Calls `onTransition` for each transition of the machines one inspector (one session) sees. */
export function transitionRecorder(onTransition: (t: MachineTransition) => void, now: () => number = Date.now): (ev: InspectionEvent) => void {
  const last = new Map<string, string>();
  return (ev) => {
    if (ev.type !== '@xstate.snapshot') return;
    const machine = (ev.actorRef as { logic?: { id?: string } }).logic?.id;
    if (machine !== 'session' && machine !== 'turn') return;
    const value = (ev.snapshot as { value?: unknown }).value;
    if (value === undefined) return;
    const state = statePath(value);
    if (last.get(machine) === state && ev.event.type !== 'xstate.init') return;
    last.set(machine, state);
    onTransition({ machine, state, event: eventLabel(ev.event.type, DESCRIPTIONS[machine]), at: now() });
  };
}
