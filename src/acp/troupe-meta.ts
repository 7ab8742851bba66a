/**
 * troupe's own fields of a request's `_meta` (`_meta.troupe`): what the daemon adds to the requests
 * it sends its children (the client's capabilities, the directories to keep, the seq its clients
 * were sent, who sent a prompt), read here in one way.
 */

import { isTurnId } from '../core/ids.js';

/** `params._meta.troupe`, if it is an object. */
export function troupeMeta(params: { _meta?: unknown }): Record<string, unknown> | undefined {
  const troupe = (params._meta as { troupe?: unknown } | null | undefined)?.troupe;
  return troupe && typeof troupe === 'object' && !Array.isArray(troupe) ? (troupe as Record<string, unknown>) : undefined;
}

/**
 * A field of the daemon's own `session/resume` of a session whose child it started again: the
 * highest seq of an update its clients were sent. A process killed at any moment has put in its log
 * every event it sent, but may not have sent every event it put there (a stdout write still buffered
 * when it died), nor every update of the last one (a prompt of several blocks makes an update each).
 * The new process sends its log from this seq on, with the events its open appended (the end of the
 * turn the crash interrupted); the daemon sends each client only the updates it lacks, so that the
 * clients miss none of the history (spec/daemon.md §Relay).
 */
export const SENT_SEQ = 'sentSeq';

/** `params._meta.troupe[key]` if it is a non-negative integer. */
function wholeNumberOf(params: { _meta?: unknown }, key: string): number | undefined {
  const value = troupeMeta(params)?.[key];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** The sent seq a resume carries, if it does. */
export const sentSeqOf = (params: { _meta?: unknown }): number | undefined => wholeNumberOf(params, SENT_SEQ);

/**
 * A field of a `session/resume` the daemon sends a child (its own, or a client's it forwards): the
 * child answers with LOG_SEQ in the result's `_meta.troupe`, which the daemon takes out.
 */
export const ASKS_LOG_SEQ = 'asksLogSeq';

/**
 * The field of that answer: the seq the session's log held once this process had it open for the
 * resume, before any later request appended to it. Until the daemon has sent a session's clients an
 * update, it knows from this where the history they have ends: after a crash, the new process sends
 * them what the log holds beyond it (SENT_SEQ), which the dead one may never have written out
 * (spec/daemon.md §Relay).
 */
export const LOG_SEQ = 'logSeq';

/** Whether a resume asks for LOG_SEQ. */
export const asksLogSeqOf = (params: { _meta?: unknown }): boolean => troupeMeta(params)?.[ASKS_LOG_SEQ] === true;

/** The LOG_SEQ an answer carries, if it does. */
export const logSeqOf = (result: { _meta?: unknown }): number | undefined => wholeNumberOf(result, LOG_SEQ);

/**
 * A field of a `session/prompt` the daemon forwards, and of the live echo of that prompt's content
 * (its `user_message_chunk`s): a number the daemon chose for the request. A client is not sent its
 * own prompt back (it shows what it sent already; editors that also show an echo show the prompt
 * twice), but the other clients of the session are: the daemon uses this field to tell them apart,
 * and takes it out before it sends the echo on (spec/daemon.md §Relay).
 */
export const PROMPTER = 'prompter';

/** The prompter a prompt carries, if it does. */
export const prompterOf = (params: { _meta?: unknown }): number | undefined => wholeNumberOf(params, PROMPTER);

/**
 * A field of a `session/prompt` the daemon forwards, next to PROMPTER: the id the prompt's turn is
 * to have (a turn id, src/core/ids.ts), so that the daemon knows the turn of each prompt it sent,
 * and can name them to the process that replaces a crashed one (PROMPTERS).
 */
export const TURN_ID = 'turnId';

/** The turn id a prompt carries, if it carries a well-formed one. */
export function turnIdOf(params: { _meta?: unknown }): string | undefined {
  const id = troupeMeta(params)?.[TURN_ID];
  return isTurnId(id) ? id : undefined;
}

/**
 * A field of the daemon's own `session/resume` of a session whose child it started again after a
 * crash, with SENT_SEQ: the prompts the dead process had and never answered, as turn id → PROMPTER.
 * The new process's catch-up (SENT_SEQ) echoes each of those prompts with its PROMPTER, as the live
 * echo would have been, so that its sender is not sent it back (spec/daemon.md §Relay). Until
 * 2026-12-06 the catch-up was untagged, and a prompt whose echo the dead process had not written out
 * came back to its sender.
 */
export const PROMPTERS = 'prompters';

/** The prompters a resume carries: turn id → PROMPTER (malformed entries left out). */
export function promptersOf(params: { _meta?: unknown }): Map<string, number> | undefined {
  const value = troupeMeta(params)?.[PROMPTERS];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out = new Map<string, number>();
  for (const [turnId, prompter] of Object.entries(value)) {
    if (isTurnId(turnId) && typeof prompter === 'number' && Number.isInteger(prompter) && prompter >= 0) out.set(turnId, prompter);
  }
  return out.size ? out : undefined;
}

/**
 * A field of a `session/load` the daemon forwards: the child says where the replay starts, with a
 * `_troupe/replay_started {sessionId, through}` notification on stdout just before the replay's first
 * update (`through`: the last seq the replay covers). The daemon sends the loading client nothing of
 * the session before it (the replay brings all of that), then the replay, then what the session made
 * meanwhile; and it sends no other client the replay. Replayed and live updates are otherwise alike
 * on the wire (spec/daemon.md §Relay).
 */
export const MARKS_REPLAY = 'marksReplay';

/** The notification that marks a replay's start (see MARKS_REPLAY); the daemon keeps it. */
export const REPLAY_STARTED = '_troupe/replay_started';

/** Whether a load asks for the replay's start to be marked. */
export const marksReplayOf = (params: { _meta?: unknown }): boolean => troupeMeta(params)?.[MARKS_REPLAY] === true;

/**
 * A field of every `session/load` and `session/resume` the daemon sends a child: the seq through
 * which the daemon's index entry of the session has folded its log. The daemon owns the index, and
 * its entry may lag the log: a daemon killed before its delayed index write, or a child killed
 * between appending a title and reporting it. The child, which reads the log anyway to open the
 * session, reports the indexed events after this seq (an `indexed` control message), so that the
 * daemon never reads a log itself to catch its entry up (spec/daemon.md §Control channel).
 */
export const INDEXED_SEQ = 'indexedSeq';

/** The indexed seq an opening request carries, if it does. */
export const indexedSeqOf = (params: { _meta?: unknown }): number | undefined => wholeNumberOf(params, INDEXED_SEQ);

/**
 * A field of the `session/cancel` the daemon sends each running session as it stops: `true`. The
 * child's cancelled turn then says the daemon shut down, not that its user cancelled it (a command
 * cut off by `troupe daemon stop` was recorded "Cancelled by the user while running").
 */
export const DAEMON_STOPPING = 'daemonStopping';

/** Whether a `session/cancel` comes from a daemon that is stopping. */
export const daemonStoppingOf = (params: { _meta?: unknown }): boolean => troupeMeta(params)?.[DAEMON_STOPPING] === true;

/**
 * A `session/new`'s `_meta.troupe.model`: the model the new session is made with, checked as a switch
 * to it is, instead of the default (`troupe run --model` sends it). Anything but a string is none.
 */
export const modelOf = (params: { _meta?: unknown }): string | undefined => {
  const model = troupeMeta(params)?.model;
  return typeof model === 'string' ? model : undefined;
};
