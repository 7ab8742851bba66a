/**
 * Timers whose verdicts wait for the loop turn's reads. Node runs expired timers before it polls
 * for I/O, so in a turn that came late (the process kept from its loop by its own work, or by a busy
 * machine) a timer runs while what arrived in time still waits unread in a socket or a pipe. "Nothing
 * came" said there is wrong; said in the same turn's check phase, after the reads, it is not. Used
 * wherever silence is judged: the heartbeat watchdog, the model stream's idle limit, the transport's
 * liveness sweep.
 */

/** A pending verdict; `cancel` also withdraws one whose timer has fired and that waits for the reads. */
export interface AfterReads {
  cancel(): void;
}

/** `judge` once, `ms` from now, after that turn's reads. `unref`: it does not keep the process alive. */
export function timeoutAfterReads(ms: number, judge: () => void, opts: { unref?: boolean } = {}): AfterReads {
  let pending: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => (pending = setImmediate(judge)), ms);
  if (opts.unref) timer.unref();
  return {
    cancel: () => {
      clearTimeout(timer);
      if (pending) clearImmediate(pending);
    },
  };
}

/** `judge` every `ms`, each time after that turn's reads. */
export function intervalAfterReads(ms: number, judge: () => void, opts: { unref?: boolean } = {}): AfterReads {
  let pending: NodeJS.Immediate | undefined;
  const timer = setInterval(() => {
    if (!pending) pending = setImmediate(() => ((pending = undefined), judge()));
  }, ms);
  if (opts.unref) timer.unref();
  return {
    cancel: () => {
      clearInterval(timer);
      if (pending) clearImmediate(pending);
    },
  };
}
