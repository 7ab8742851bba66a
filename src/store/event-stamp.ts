/**
 * Turns an `AgentEventInput` into a stored `AgentEvent`: validation and projection first, so that a
 * refused event consumes no seq and leaves no hole; then the seq and timestamp.
 */
import type { AgentEvent, AgentEventInput } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { projectStrictJson } from './strict-json.codec.js';

/** A projected event without its stamp, and its size in bytes of compact JSON. */
export interface PreparedEvent {
  body: Record<string, unknown>;
  bytes: number;
}

const STAMP_KEYS: ReadonlySet<string> = new Set(['seq', 'ts']);

// `,"seq":` and `,"ts":` plus the digits are added once the stamp is known.
const STAMP_OVERHEAD = 12;

/** Validates and projects an input for the session `sessionId`. Throws `invalid_event_payload` / `event_too_large`. */
export function prepareEvent(input: AgentEventInput, sessionId: string, maxBytes: number): PreparedEvent {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new TroupeError('invalid_event_payload', 'an event must be a plain object', { path: '$' });
  }
  const raw = input as Record<string, unknown>;
  if (typeof raw.type !== 'string' || raw.type.length === 0) {
    throw new TroupeError('invalid_event_payload', 'an event needs a string `type`', { path: '$.type' });
  }
  if (raw.sessionId !== sessionId) {
    throw new TroupeError('invalid_event_payload', `event for session ${String(raw.sessionId)} appended to the log of ${sessionId}`, {
      path: '$.sessionId',
      sessionId,
    });
  }
  // Room for the stamp is reserved up front so that the limit bounds the stored event.
  const { value, bytes } = projectStrictJson(input, maxBytes - STAMP_OVERHEAD - 26, STAMP_KEYS);
  const body = value as Record<string, unknown>;
  return { body, bytes: bytes + STAMP_OVERHEAD + 26 };
}

/** Stamps a prepared event. The body object becomes the event (it is a private copy already). */
export function stampEvent(prepared: PreparedEvent, seq: number, ts: number): AgentEvent {
  const event = prepared.body;
  event.seq = seq;
  event.ts = ts;
  return event as unknown as AgentEvent;
}
