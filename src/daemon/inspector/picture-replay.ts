/**
 * The replay `GET /v1/sessions/:id/inspect` draws its picture from (the session's machine states
 * and transitions rebuilt from its log), refused as the inspector's other routes refuse a session
 * deleted while they read: 404 `session_not_found` with `data.deleted`. spec/daemon.md.
 */
import { TroupeError } from '../../core/errors.js';
import { replaySessionInSlices, type ReplayedTransition } from '../../machines/replay.js';
import { readLogFilePaged } from '../../store/index.js';
import { idData, quotedId } from '../quoted-id.js';

export interface PictureReplayOptions {
  /** Whether the session is deleted now (the daemon's index says so). */
  deleted: () => boolean;
  /** Awaited between slices of the read and the replay (the daemon's loop serves others meanwhile). */
  pause: () => Promise<void>;
}

/** A log that cannot be read because it is not there is the session's `session_not_found`; any other failure is itself. */
export function noLog(id: string, err: unknown): never {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TroupeError('session_not_found', `session ${quotedId(id)} has no log`, idData(id));
  throw err;
}

const gone = (id: string) => new TroupeError('session_not_found', `session ${quotedId(id)} was deleted`, { ...idData(id), deleted: true });

/**
 * The whole replay of session `id`'s log at `path`. A log that is a tombstone (the session deleted,
 * the daemon's index not marked yet, or deleted by another process on this home), or a session
 * deleted before the replay is done, is refused: until 2026-12-07 the route answered the
 * tombstone's one event as the session's machines, next to the index entry it had read before, so
 * a deleted session was shown as if live. A log that is not there is `session_not_found` too.
 */
export async function replayForPicture(path: string, id: string, opts: PictureReplayOptions): Promise<ReplayedTransition[]> {
  let read;
  try {
    read = await readLogFilePaged(path, opts.pause);
  } catch (err) {
    if (opts.deleted()) throw gone(id);
    return noLog(id, err);
  }
  if (read.scan.header?.tombstone || opts.deleted()) throw gone(id);
  const replayed = await replaySessionInSlices(read.events, opts.pause);
  // Deleted while it was replayed: what was read is of a session no route names any more.
  if (opts.deleted()) throw gone(id);
  return replayed;
}
