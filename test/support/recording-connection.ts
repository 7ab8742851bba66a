import type { RelayConnection } from '../../src/daemon/relay/relay-connection.js';

/** A stand-in for a RelayConnection that records what the fan-out sends it: update lines (`got`) and other messages (`told`). */
export function recordingConnection(name = '') {
  const got: string[] = [];
  const told: unknown[] = [];
  const conn = { isClosed: false, sendNotifications: (_: string, lines: string[]) => void got.push(...lines), send: async (m: unknown) => void told.push(m) };
  return { conn: conn as unknown as RelayConnection, got, told, name };
}
