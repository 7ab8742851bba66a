/**
 * Failures of a turn's effects, classified into stable codes before they reach the turn machine,
 * so that a turn never ends with a raw vendor or library error.
 */
import { isTroupeError } from '../core/errors.js';
import { isProviderError, type ProviderErrorKind } from '../core/provider.js';

export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** When the vendor said to try again (a rate limit's retry-after, or a retried failure's: askedDelay), for the client. */
    readonly retryAfterMs?: number,
    /** The vendor's own words, where `message` is troupe's account of the failure (for diagnosis). */
    readonly vendorMessage?: string,
    /** With `context_overflow` from a model step: whether a compaction could make the request smaller. */
    readonly compactable?: boolean,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

const PROVIDER_CODES: Record<ProviderErrorKind, string> = {
  auth: 'provider_auth',
  rate_limited: 'provider_rate_limited',
  quota_exceeded: 'provider_quota_exceeded',
  overloaded: 'provider_overloaded',
  context_overflow: 'context_overflow',
  invalid_request: 'provider_invalid_request',
  model_not_found: 'model_not_found',
  network: 'provider_network',
  aborted: 'provider_network',
};

/** The error code a failure of this kind ends a turn with. */
export const providerCode = (kind: ProviderErrorKind): string => PROVIDER_CODES[kind];

export function classify(err: unknown): StepError {
  if (err instanceof StepError) return err;
  if (isProviderError(err)) {
    // troupe's account, where it has one, with the vendor's words beside it (turn_completed.vendorMessage).
    if (err.explanation !== undefined) return new StepError(PROVIDER_CODES[err.kind], err.explanation, err.retryAfterMs, err.vendorMessage);
    return new StepError(PROVIDER_CODES[err.kind], err.vendorMessage, err.retryAfterMs);
  }
  if (isTroupeError(err)) return new StepError(err.code, err.message);
  return new StepError('internal_error', err instanceof Error ? err.message : String(err));
}

/** What troupe knows of a request the vendor found too long. */
export interface OverflowFigures {
  /** The full model id, as the session names it. */
  model: string;
  contextWindow: number;
  /** The request's size by the offline estimate. */
  requestTokens: number;
  /**
   * Whether the model had begun its reply when the window filled (Anthropic's stop reason
   * `model_context_window_exceeded`, Mistral's `model_length`, llama.cpp's "Context size has been
   * exceeded." mid-stream, OpenAI's `max_output_tokens` or a compatible server's `length` whose
   * counts show the window filled: src/providers/openai/window-full.ts),
   * rather than refused the request before it.
   */
  replyCut?: boolean;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * A model call the vendor refused as too long (or whose reply filled the window, `replyCut`), in
 * troupe's words: what happened, the figures troupe
 * is sure of, and what the person can do; the vendor's text is kept as `vendorMessage`. Until
 * 2026-12-06 the turn ended with the vendor's text alone ("prompt is too long: 212345 tokens >
 * 200000 maximum"), which says neither that troupe had already compacted nor what to do next.
 * `compactable` says whether a compaction could still make the request smaller: the turn machine
 * compacts and retries only then, and otherwise ends the turn with this message at once.
 */
export function contextOverflowError(vendorMessage: string, figures: OverflowFigures, compactable: boolean, compacted = false): StepError {
  const window = `the context window of ${figures.model} (${count(figures.contextWindow)} tokens)`;
  // The estimate is only a figure worth giving when it agrees with the vendor: it can count less
  // than the vendor's tokenizer, and "about 180,000 tokens" would contradict "too long for 200,000".
  const size = figures.requestTokens > figures.contextWindow ? ` (about ${count(figures.requestTokens)} tokens, by troupe's estimate)` : '';
  // What the model did, as it happened: refused the request, or stopped its reply where the window filled.
  const cut = `the model's reply filled the window and was cut off${size}`;
  // Said as it is: `compacted`, the turn compacted for its overflow already. With nothing a
  // compaction could make smaller (the session's first prompt), none was tried, and /compact would
  // not help either.
  const message = compactable || compacted
    ? `The conversation does not fit ${window}: ${figures.replyCut ? cut : `the model refused the request as too long${size}`}, and compacting the conversation could not make it fit. ` +
      'Send a smaller prompt (attach less, or split the work), run /compact to summarize the conversation, or start a new session.'
    : `The request does not fit ${window}: ${figures.replyCut ? cut : `the model refused it as too long${size}`}, and nothing earlier in the session could be compacted to make room. ` +
      'Send a smaller prompt (attach less, or split the work).';
  return new StepError(
    'context_overflow',
    message,
    undefined,
    vendorMessage,
    compactable,
  );
}
