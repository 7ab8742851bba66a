/** Helpers for store tests: temp directories and event inputs. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEventInput } from '../../../src/core/events.js';
import type { Clock } from '../../../src/core/ports.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { sessionIndexPath } from '../../../src/store/paths.js';

/** A fresh temp directory; `cleanup()` removes it. */
export function tempDir(prefix = 'troupe-store-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A new log of session `sessionId` in `dir` holding `events` (appended in order), closed: its path and reads still serve. */
export async function writtenLog(dir: string, sessionId: string, events: Iterable<AgentEventInput>): Promise<FileEventLog> {
  const log = await FileEventLog.forSession(dir, sessionId, { create: true });
  for (const e of events) log.append(e);
  await log.close();
  return log;
}

export function chunk(sessionId: string, text: string, turnId = 'turn_1'): AgentEventInput {
  return { type: 'agent_message_chunk', sessionId, turnId, messageId: 'msg_1', text };
}

export function turnCompleted(sessionId: string, turnId = 'turn_1'): AgentEventInput {
  return { type: 'turn_completed', sessionId, turnId, stopReason: 'end_turn', steps: 1 };
}

export function sessionCreated(sessionId: string, cwd: string, model = 'scripted/demo', mode = 'default'): AgentEventInput {
  return { type: 'session_created', sessionId, cwd, additionalDirectories: [], model, mode };
}

/** A clock whose time only moves when told; timers still run on real time (the writer needs them). */
export function steppingClock(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    advance(ms: number) {
      now += ms;
    },
  };
}

/** Collects everything a watcher yields until it ends, and how it ended. */
export async function drain<T>(it: AsyncIterable<T>, max = Infinity): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const x of it) {
      items.push(x);
      if (items.length >= max) break;
    }
  } catch (error) {
    return { items, error };
  }
  return { items };
}

/** The offset where each record of a log's bytes ends (spec/event-log.md §1: u32 length, u32 crc, payload). */
export function recordEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let at = 0; at + 8 <= bytes.length; ) ends.push((at += 8 + bytes.readUInt32LE(at)));
  return ends;
}

/**
 * Cuts a log file as a machine crash may leave it: its header, its first event record
 * (session_created) and half of the next, the rest lost. Returns the bytes it held before.
 */
export function cutAfterCreation(path: string): Buffer {
  const bytes = readFileSync(path);
  const [, created, next] = recordEnds(bytes);
  if (created === undefined || next === undefined) throw new Error(`${path} has no record after its session_created`);
  writeFileSync(path, bytes.subarray(0, created + Math.floor((next - created) / 2)));
  return bytes;
}

/**
 * Writes the session index file of `dir` again, as it is: as if a process wrote it after the logs
 * last changed, so that a daemon starting on it does not read them again (session-log-recheck.ts),
 * and what is tested is what the opening of a session does.
 */
export function indexWrittenAfterLogs(dir: string): void {
  const path = sessionIndexPath(dir);
  const bytes = readFileSync(path);
  const changed = (name: string) => statSync(join(dir, name), { bigint: true }).ctimeNs;
  const last = readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .reduce((max, n) => (changed(n) > max ? changed(n) : max), 0n);
  // File times come from a coarse clock (a few ms): a log written in the same tick as the index
  // counts as changed since. Written again until its time is past every log's.
  do writeFileSync(path, bytes);
  while (statSync(path, { bigint: true }).mtimeNs <= last);
}
