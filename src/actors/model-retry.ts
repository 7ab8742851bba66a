/**
 * A model call's retry, as the session log records it (`model_retry`): what failed, how long troupe
 * waits, and which attempt comes next. The client, the CLI, `session/load` and the inspector show it
 * from the log; before 2026-12-07 a retry was silent, and a turn waiting out a rate limit looked hung.
 */
import { clipped } from '../core/text-cut.js';
import type { ProviderEvent } from '../core/provider.js';
import type { EngineCore } from './engine-core.js';
import { providerCode } from './step-error.js';

/** The most of the vendor's words a `model_retry` keeps: a status line, not a page. */
const MESSAGE_MAX = 1_000;

export function emitModelRetry(core: EngineCore, turnId: string | undefined, provider: string, ev: Extract<ProviderEvent, { type: 'retry' }>): void {
  const message = clipped(ev.vendorMessage, MESSAGE_MAX);
  core.emit({
    type: 'model_retry',
    sessionId: core.sessionId,
    ...(turnId ? { turnId } : {}),
    provider,
    errorCode: providerCode(ev.kind),
    ...(ev.status === undefined ? {} : { status: ev.status }),
    message,
    attempt: ev.attempt,
    attempts: ev.attempts,
    delayMs: ev.delayMs,
  });
}
