/**
 * Turns an `AgentEventInput` into a stored `AgentEvent`: validation and projection first, so that a
 * refused event consumes no seq and leaves no hole; then the seq and timestamp.
 */
import type { AgentEvent, AgentEventInput } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { jsonStringBytes } from '../core/json-bytes.js';
import { isWellFormed, projectStrictJson } from './strict-json.codec.js';

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
  const limit = maxBytes - STAMP_OVERHEAD - 26;
  const chunk = textChunk(raw, limit);
  if (chunk) return chunk;
  const { value, bytes } = projectStrictJson(input, limit, STAMP_KEYS);
  const body = value as Record<string, unknown>;
  return { body, bytes: bytes + STAMP_OVERHEAD + 26 };
}

/** The keys of a text chunk as the engine writes them, in order. */
const CHUNK_KEYS = ['type', 'sessionId', 'turnId', 'messageId', 'text'] as const;
// `{}`, four commas, and each key quoted with its colon.
const CHUNK_FIXED_BYTES = 2 + 4 + CHUNK_KEYS.reduce((n, k) => n + k.length + 3, 0);

/**
 * The projection of a text chunk (nearly every event of a streamed reply) without the general
 * walk: for an input of exactly the chunk's string fields, in the engine's order, it gives the same
 * copy and size `projectStrictJson` would, at a fraction of the cost. Anything else: undefined.
 */
function textChunk(raw: Record<string, unknown>, limit: number): PreparedEvent | undefined {
  if (raw.type !== 'agent_message_chunk' && raw.type !== 'agent_thought_chunk') return undefined;
  if (Object.getPrototypeOf(raw) !== Object.prototype) return undefined;
  let i = 0;
  for (const key in raw) if (key !== CHUNK_KEYS[i++]) return undefined;
  if (i !== CHUNK_KEYS.length) return undefined;
  const { type, sessionId, turnId, messageId, text } = raw;
  if (typeof sessionId !== 'string' || typeof turnId !== 'string' || typeof messageId !== 'string' || typeof text !== 'string') return undefined;
  // Text with a lone surrogate takes the general path, which replaces it as the file would.
  if (!isWellFormed(text)) return undefined;
  const bytes = CHUNK_FIXED_BYTES + type.length + 2 + jsonStringBytes(sessionId) + jsonStringBytes(turnId) + jsonStringBytes(messageId) + jsonStringBytes(text);
  // Over the limit: the general path throws the error with its details.
  if (bytes > limit) return undefined;
  return { body: { type, sessionId, turnId, messageId, text }, bytes: bytes + STAMP_OVERHEAD + 26 };
}

/** Stamps a prepared event. The body object becomes the event (it is a private copy already). */
export function stampEvent(prepared: PreparedEvent, seq: number, ts: number): AgentEvent {
  const event = prepared.body;
  event.seq = seq;
  event.ts = ts;
  return event as unknown as AgentEvent;
}
