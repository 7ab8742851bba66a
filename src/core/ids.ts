/**
 * Identifiers. Session ids sort by creation time (a base-36 millisecond prefix) and carry 80 random
 * bits, so they are unique across processes without coordination and never reused.
 */
import { randomBytes } from 'node:crypto';

function timeSortable(prefix: string, now: number): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomBytes(10).toString('hex')}`;
}

export const newSessionId = (now = Date.now()): string => timeSortable('ses', now);
export const newTurnId = (now = Date.now()): string => timeSortable('turn', now);

/** Whether `id` is a turn id as `newTurnId` makes them (one a daemon chose for a prompt it forwards). */
export function isTurnId(id: unknown): id is string {
  return typeof id === 'string' && /^turn_[0-9a-z]{9}[0-9a-f]{20}$/.test(id);
}

/** Short ids for things that live inside one session (messages, tool calls, steers). */
export function newLocalId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** Session ids travel in HTTP headers and file names: keep them to a safe alphabet. */
export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(id);
}
