// Loaded into every process of a daemon under test with NODE_OPTIONS=--import (the daemon's
// children inherit its env). In a `troupe acp` child, while the file TROUPE_HOLD_EMPTY_ANSWERS names
// exists, an answer `{}` the child writes on stdout (a session/close's, a session/set_mode's) is held
// back, and everything written after it with it, until the file is removed: the daemon sees that
// child answer late, as from a busy machine, for as long as the test wants.
import { existsSync } from 'node:fs';

const hold = process.env.TROUPE_HOLD_EMPTY_ANSWERS;
const EMPTY_ANSWER = /^\{"jsonrpc":"2\.0","id":\d+,"result":\{\}\}$/m;

if (hold && process.argv.includes('acp')) {
  const write = process.stdout.write.bind(process.stdout) as (chunk: string | Uint8Array) => boolean;
  let held: string | undefined;
  (process.stdout as { write: unknown }).write = (chunk: string | Uint8Array): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (held !== undefined) return void (held += text), true;
    if (!EMPTY_ANSWER.test(text) || !existsSync(hold)) return write(chunk);
    held = text;
    const timer = setInterval(() => {
      if (existsSync(hold)) return;
      clearInterval(timer);
      const out = held!;
      held = undefined;
      write(out);
    }, 10);
    return true;
  };
}
