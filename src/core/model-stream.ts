/**
 * How every vendor adapter runs one streamed model call: an idle watchdog over the vendor stream,
 * and retries of failures that happen before anything has reached the caller.
 *
 * Why a watchdog: the SDKs' own timeouts do not cover a stream that goes silent. The Anthropic and
 * OpenAI SDKs' `timeout` ends when the response headers arrive; Gemini's `httpOptions.timeout` bounds
 * the whole request, so it cuts a long healthy reply too. Without this a silent stream (connection
 * open, no bytes) holds a turn until the person cancels it.
 */
import { ProviderError, type ProviderErrorKind, type ProviderEvent } from './provider.js';
import { timeoutAfterReads } from './after-reads.js';
import { MAX_TIMER_MS } from './option-values.js';

/**
 * Default `streamIdleTimeoutMs`: five minutes, the value Codex uses (`stream_idle_timeout_ms`) for
 * the same purpose. The wait for the first chunk counts, and a model may think (or a local server
 * read a long prompt) for minutes before it sends one, so the limit is generous.
 */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 300_000;

/** One vendor call, as the adapter knows how to make, read and classify it. */
export interface VendorStreamCall<Chunk> {
  /** Sends the request with `signal` (the watchdog's, linked to the caller's) and resolves to its stream. */
  open(signal: AbortSignal): Promise<AsyncIterable<Chunk>>;
  /** The vendor chunks → ProviderEvents. `signal` is the caller's. */
  map(chunks: AsyncIterable<Chunk>, signal: AbortSignal): AsyncIterable<ProviderEvent>;
  /** Anything `open`, the stream or `map` threw → a ProviderError (ProviderErrors pass through). */
  classify(err: unknown, signal: AbortSignal): ProviderError;
}

export interface StreamPolicy {
  /** How long the vendor may send nothing (waiting for the response, then between chunks); 0 disables. */
  idleMs: number;
  /** The config key of `idleMs`, named in the stall error. */
  setting: string;
  /**
   * How many times this layer retries a call. It is the only layer that does: every adapter turns
   * its SDK's retries off, so that each retry is announced and follows troupe's kinds.
   */
  maxRetries: number;
}

const RETRYABLE: ReadonlySet<ProviderErrorKind> = new Set(['rate_limited', 'overloaded', 'network']);

/** Whether a failure of this kind is worth the same call again (a rate limit, an overloaded or failed server, the network). */
export const isRetryable = (kind: ProviderErrorKind): boolean => RETRYABLE.has(kind);

/** The longest delay a vendor may ask for that a retry waits out (the Anthropic and OpenAI SDKs stop at 60 s too). */
const MAX_RETRY_WAIT_MS = 60_000;

/**
 * The delay a vendor asked for (`retry-after-ms`, `retry-after`, Gemini's RetryInfo) as a failure of
 * `kind` keeps it (`ProviderError.retryAfterMs`): on every failure this layer sends again (a
 * retryable kind, or one the vendor said to send again, `shouldRetry`), whose retry then waits it out
 * rather than troupe's backoff, and on a rate limit whatever else, whose delay the client is told
 * when the turn ends with it. Until 2026-12-07 the adapters kept it on rate limits only: a 503 or an
 * Anthropic 529 that said when to come back, or a 400 with OpenAI's `x-should-retry: true`, was sent
 * again after troupe's own backoff, sooner than the vendor asked.
 */
export function askedDelay(kind: ProviderErrorKind, shouldRetry: boolean | undefined, delayMs: number | undefined): number | undefined {
  return kind === 'rate_limited' || (shouldRetry ?? isRetryable(kind)) ? delayMs : undefined;
}

/**
 * Runs `call` under `policy`. A stall aborts the vendor request and is a `network` ProviderError
 * naming the setting. A failure is retried, with backoff (or the delay the vendor asked for), only
 * while no event has reached the caller: events already streamed cannot be taken back. Each retry is
 * announced first with a `retry` event (kind, status, delay, attempt). The caller's abort is always
 * `aborted`, never a stall.
 */
export async function* streamWithWatchdog<Chunk>(call: VendorStreamCall<Chunk>, policy: StreamPolicy, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    const vendor = new AbortController();
    const onAbort = () => vendor.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let delivered = false;
    try {
      const wait = <T>(work: Promise<T>) => waitIdle(work, policy, vendor, signal);
      const chunks = await wait(call.open(vendor.signal));
      for await (const event of call.map(watched(chunks, wait), signal)) {
        delivered = true;
        yield event;
      }
      return;
    } catch (err) {
      const failure = call.classify(err, signal);
      // The vendor's word on this failure, where it gave one, goes before its kind's (shouldRetry).
      if (delivered || attempt >= policy.maxRetries || !(failure.shouldRetry ?? isRetryable(failure.kind))) throw failure;
      // A vendor that asks for more than a minute (a quota spent for the hour or the day, a server
      // down for a while) is not waited for in silence: the turn ends with the failure and the delay
      // (a rate limit's or any other's, askedDelay), for the user to decide.
      if ((failure.retryAfterMs ?? 0) > MAX_RETRY_WAIT_MS) throw failure;
      const delayMs = retryDelayMs(failure.retryAfterMs, attempt);
      // Said before the wait, not after: until 2026-12-07 a retry was silent, and the person saw the
      // turn hang for up to a minute with no sign why. Not an event of the reply (`delivered` stays).
      yield { type: 'retry', kind: failure.kind, ...(failure.status === undefined ? {} : { status: failure.status }), vendorMessage: failure.vendorMessage, attempt: attempt + 2, attempts: policy.maxRetries + 1, delayMs };
      await abortableDelay(delayMs, signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Closes the HTTP request on every path: a stall, an error, a consumer that stopped early.
      vendor.abort();
    }
  }
}

/** The vendor's chunks, each read under the watchdog (`wait`). */
async function* watched<T>(chunks: AsyncIterable<T>, wait: <R>(work: Promise<R>) => Promise<R>): AsyncGenerator<T> {
  const it = chunks[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const next = await wait(it.next());
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Releases the SDK's stream when reading stopped early. Not awaited: after a stall or a cancel a
    // read is still pending, and it settles only once the aborted request gives up.
    if (!finished) void Promise.resolve(it.return?.()).catch(() => undefined);
  }
}

/**
 * `work`, unless the vendor stays silent for `idleMs` (then the request is aborted and this rejects
 * with the stall error) or the caller cancels (then it rejects `aborted` at once).
 */
function waitIdle<T>(work: Promise<T>, policy: StreamPolicy, vendor: AbortController, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      deadline?.cancel();
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(new ProviderError('aborted', 'the request was cancelled'));
    };
    // Judged after the loop turn's reads: a chunk that arrived in time while the process was busy is not a stall.
    const deadline =
      policy.idleMs > 0
        ? timeoutAfterReads(Math.min(policy.idleMs, MAX_TIMER_MS), () => {
            done();
            vendor.abort();
            reject(new ProviderError('network', `the model stream stalled: nothing arrived for ${duration(policy.idleMs)} (${policy.setting}; 0 turns the limit off)`));
          })
        : undefined;
    // Handled first, so that `work` never rejects unobserved, even when the caller has already cancelled.
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (err: unknown) => {
        done();
        reject(err);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Number((ms / 1000).toFixed(3))} s` : `${ms} ms`;
}

/**
 * How long retry `attempt` (0 for the first) waits: the delay the vendor asked for, in whole
 * milliseconds, if it is over 0; else troupe's backoff. A delay of 0 (`retry-after: 0`, Gemini's
 * `retryDelay: "0s"`) or less asks for nothing a retry can wait, and was waited as 0 ms until
 * 2026-12-07: every retry at once, a tight loop against a server that had just said it was overloaded
 * (the Anthropic SDK takes its own backoff for it too; the OpenAI SDK 7.x waits the 0).
 */
export function retryDelayMs(askedMs: number | undefined, attempt: number): number {
  return askedMs !== undefined && askedMs > 0 ? Math.ceil(askedMs) : Math.round(backoffMs(attempt));
}

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s … capped at 8 s. */
function backoffMs(attempt: number): number {
  return Math.min(8_000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.25);
}

/** Waits `ms`; a cancel (`signal`), before or during the wait, ends it with an `aborted` ProviderError. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => new ProviderError('aborted', 'the request was cancelled');
    if (signal.aborted) return reject(cancelled());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The longest a vendor's token count (`ModelProvider.countTokens`, made before a turn's first model
 * call) may take. A count answers in well under a second; one that does not is not worth waiting
 * for, since the engine then goes on with its offline estimate. The SDKs' own limits would hold the
 * turn for ten minutes an attempt (Anthropic, OpenAI) or for ever (Gemini, which turns fetch's limits
 * off), and only a cancel would end the wait.
 */
export const COUNT_TIMEOUT_MS = 10_000;

/**
 * The time limit of a count for a provider whose idle limit is `idleMs`: COUNT_TIMEOUT_MS, or the
 * idle limit when that is shorter (a person who lowered it wants no longer a wait for a count than
 * for a silent stream). The idle limit turned off (0) does not turn this one off.
 */
export function countTimeoutMs(idleMs: number): number {
  return idleMs > 0 ? Math.min(idleMs, COUNT_TIMEOUT_MS) : COUNT_TIMEOUT_MS;
}

/**
 * `work` (one vendor request, made with the signal it is given) within `ms`. When `ms` pass, the
 * request is aborted, which closes its HTTP request, and this rejects with a `network` ProviderError
 * saying that `what` did not answer. The caller's cancel aborts the request too and rejects `aborted`.
 */
export function withTimeLimit<T>(ms: number, signal: AbortSignal, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new ProviderError('aborted', 'the request was cancelled'));
    const vendor = new AbortController();
    const done = () => {
      deadline.cancel();
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      vendor.abort();
      reject(new ProviderError('aborted', 'the request was cancelled'));
    };
    // Judged after the loop turn's reads, as the stream's idle limit is: an answer that came in time counts.
    const deadline = timeoutAfterReads(Math.min(ms, MAX_TIMER_MS), () => {
      done();
      vendor.abort();
      reject(new ProviderError('network', `${what} did not answer within ${duration(ms)}`));
    });
    signal.addEventListener('abort', onAbort, { once: true });
    // A rejection after the deadline or a cancel (the aborted request giving up) is settled and ignored.
    Promise.resolve()
      .then(() => work(vendor.signal))
      .then(
        (value) => {
          done();
          resolve(value);
        },
        (err: unknown) => {
          done();
          reject(err);
        },
      );
  });
}

/** The config key of a provider's idle limit, as a person writes it in config.json. */
export function idleSetting(providerId: string): string {
  return /^[a-z]+$/.test(providerId) ? `providers.${providerId}.streamIdleTimeoutMs` : `providers["${providerId}"].streamIdleTimeoutMs`;
}
