/**
 * A full garbage collection now. Node offers `gc()` only under `--expose-gc`; set at run time, the
 * flag gives a function to contexts made from then on, so one is made to fetch it (the context is
 * garbage right after).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
