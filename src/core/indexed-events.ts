/**
 * The events that change a session's index entry beyond its last seq: writers fold these, not every
 * chunk. In core, not store/, because a child names them among the events it reports to its daemon
 * (wire/control-messages.ts), so that the daemon need not decode a burst to find them. A module of
 * its own, with types only from events.ts: the control channel loads it as a child starts, and
 * events.ts builds the event schema (half a MiB of a waiting child's memory).
 */
import type { AgentEvent } from './events.js';

export const INDEXED_EVENT_TYPES: ReadonlySet<AgentEvent['type']> = new Set<AgentEvent['type']>(['session_created', 'session_configured', 'turn_started', 'turn_completed', 'session_closed']);
