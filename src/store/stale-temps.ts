/**
 * Temp files that writers killed midway leave in a sessions directory: an atomic write's
 * `.<name>.<pid>.<hex>.tmp` (the index, a tombstone; atomic-write.ts) and an exclusive create's
 * `<name>.<pid>-<n>.tmp` (a lock; exclusive-create.ts). Nothing else ever removes them. Each name
 * carries its writer's pid: one whose process is gone is removed, a live writer's never (its rename
 * or link is still to come). A pid taken since by another process only keeps a file a little longer.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../core/ports.js';
import { isProcessAlive } from './process-alive.js';

const ATOMIC_WRITE_TEMP = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;
const EXCLUSIVE_CREATE_TEMP = /^.+\.(\d+)-\d+\.tmp$/;

/** The pid of the writer that made this temp file, from its name; `undefined` if it is not one. */
export function tempWriterPid(name: string): number | undefined {
  const m = ATOMIC_WRITE_TEMP.exec(name) ?? EXCLUSIVE_CREATE_TEMP.exec(name);
  const pid = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Removes the temp files in `dir` whose writer is no longer alive; returns their names. */
export async function removeDeadWritersTemps(dir: string, logger?: Logger): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    const pid = tempWriterPid(name);
    if (pid === undefined || pid === process.pid || isProcessAlive(pid)) continue;
    await rm(join(dir, name), { force: true });
    removed.push(name);
  }
  if (removed.length) logger?.info('removed temp files of writers killed midway', { dir, files: removed });
  return removed;
}
