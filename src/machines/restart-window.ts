/**
 * Supervision as data (OTP `supervisor.erl`): a child spec and the pure rules of restart intensity
 * and backoff. At most `intensity` restarts within `periodMs`; one more and the child has failed.
 */
export interface ChildSpec {
  restart: 'transient';
  /** Restarts allowed within `periodMs` (default 3 in 60 s). */
  intensity: number;
  periodMs: number;
  /** Grace between ending stdin, SIGTERM and SIGKILL. */
  shutdownMs: number;
  /** First backoff; doubles with each restart in the window, up to `backoffMaxMs`. */
  backoffMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_CHILD_SPEC: ChildSpec = {
  restart: 'transient',
  intensity: 3,
  periodMs: 60_000,
  shutdownMs: 5_000,
  backoffMs: 100,
  backoffMaxMs: 5_000,
};

/** Restarts that still count at `now`. */
export function recentRestarts(restarts: readonly number[], now: number, spec: Pick<ChildSpec, 'periodMs'>): number[] {
  return restarts.filter((t) => now - t < spec.periodMs);
}

/** Whether one more restart at `now` stays within the intensity. */
export function allowsRestart(restarts: readonly number[], now: number, spec: Pick<ChildSpec, 'intensity' | 'periodMs'>): boolean {
  return recentRestarts(restarts, now, spec).length < spec.intensity;
}

/** Exponential backoff before the n-th restart of the window (n ≥ 1). */
export function backoffDelay(n: number, spec: Pick<ChildSpec, 'backoffMs' | 'backoffMaxMs'>): number {
  return Math.min(spec.backoffMaxMs, spec.backoffMs * 2 ** Math.max(0, n - 1));
}
