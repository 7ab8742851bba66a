/**
 * A request of the agent's to its client that a machine answers (a file read or write through the
 * editor's buffers, a terminal's creation or output), waited for a bounded time. A permission prompt
 * waits for a person and has its own time (TROUPE_PERMISSION_TIMEOUT_MS); these do not: an editor
 * answers them in milliseconds, or not at all. Until 2026-12-07 an editor that never answered one
 * (a bug, a stalled UI thread, a plugin that drops the method) held its tool call, and the turn, until
 * the person cancelled it; `troupe run` and a daemon's unattended session could not.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { timeoutMsFromEnv } from '../core/option-values.js';

/**
 * 30 s: a hundred times what an editor busy with a large file, an indexing pass or a garbage
 * collection takes to answer, and about as long as a person watches a call that does not move before
 * cancelling it. An editor that asks its user before it starts a terminal needs more (the variable).
 */
const DEFAULT_CLIENT_ANSWER_MS = 30_000;

/** What each environment gave, read once: a bad value is warned of once, not at every session's opening. */
const readFrom = new WeakMap<NodeJS.ProcessEnv, number>();

/** TROUPE_CLIENT_ANSWER_TIMEOUT_MS, read as the other `…_MS` variables are (core/option-values.ts). */
export function clientAnswerMsFromEnv(env: NodeJS.ProcessEnv, logger: Logger): number {
  const known = readFrom.get(env);
  if (known !== undefined) return known;
  const ms = timeoutMsFromEnv(env, 'TROUPE_CLIENT_ANSWER_TIMEOUT_MS', DEFAULT_CLIENT_ANSWER_MS, logger);
  readFrom.set(env, ms);
  return ms;
}

/** The failure of a request the client did not answer within `waitMs` (`tool_timeout`, data.method, data.waitedMs). */
function unansweredError(method: string, waitMs: number, after = ''): TroupeError {
  return new TroupeError(
    'tool_timeout',
    `the client did not answer ${method} within ${waitMs} ms (TROUPE_CLIENT_ANSWER_TIMEOUT_MS), so troupe stopped waiting for it${after}`,
    { method, waitedMs: waitMs },
  );
}

export interface AskOptions<T> {
  /** How long to wait for the answer. */
  waitMs: number;
  /** Said after the reason when the wait runs out (what may still happen in the client). */
  after?: string;
  /**
   * Given an answer that comes after troupe stopped waiting (the wait ran out, or `signal` aborted):
   * what to undo of it (a terminal created late is released). Without it, such an answer is dropped.
   */
  late?: (answer: T) => void;
}

/**
 * `method` asked of the client, waited for until it answers, `signal` aborts (rejected at once, with
 * its reason) or `opts.waitMs` pass (rejected with {@link unansweredError}). Either way the client
 * is sent `$/cancel_request` for it; an answer that comes later (a client may answer a withdrawn
 * request all the same) is given to `opts.late`, or dropped. Under `troupe serve` the daemon's relay
 * answers a withdrawn request -32800 itself and routes no client's answer to it (client-asks.ts), so
 * `late` never runs there; it releases a terminal made late itself (relay-connection.ts).
 * The client's own error is rejected as it came.
 */
export function askClient<T>(client: acp.AgentContext, method: string, params: unknown, signal: AbortSignal, opts: AskOptions<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const withdraw = new AbortController();
  // Not `stopWaitingOnCancel`: the SDK would then drop a late answer, and a terminal created late
  // would run on in the editor, never released.
  const answer = client.request<T>(method, params, { cancellationSignal: withdraw.signal });
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const stop = (why: unknown) => {
      if (done) return;
      done = true;
      settle();
      withdraw.abort();
      reject(why);
      answer.then((late) => opts.late?.(late), () => undefined);
    };
    // Linked by hand and unlinked when settled: a tool call's signal outlives its requests.
    const onAbort = () => stop(signal.reason);
    const timer = setTimeout(() => stop(unansweredError(method, opts.waitMs, opts.after)), opts.waitMs);
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Aborted while the request was being sent (a handler of the signal's, or an in-process client).
    if (signal.aborted) onAbort();
    answer.then(
      (value) => {
        if (done) return;
        done = true;
        settle();
        resolve(value);
      },
      (err: unknown) => {
        if (done) return;
        done = true;
        settle();
        reject(err);
      },
    );
  });
}
