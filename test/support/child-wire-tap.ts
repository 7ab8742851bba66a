// Loaded into every process of a daemon under test with NODE_OPTIONS=--import (the daemon's
// children inherit its env). In a `troupe acp` child, while TROUPE_WIRE_TAP names a directory, what
// the child reads on stdin and writes on stdout is appended, unchanged, to `<pid>.in` and `<pid>.out`
// there: a test sees the child's requests to its clients and the answers the daemon gives it
// (childWithdrawals). It changes nothing of either stream: stdin is read as the child reads it (its
// 'data' events, whoever listens), stdout written as the child writes it.
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.TROUPE_WIRE_TAP;

if (dir && process.argv.includes('acp')) {
  const record = (side: 'in' | 'out', chunk: unknown) => {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) appendFileSync(join(dir, `${process.pid}.${side}`), chunk);
  };
  const emit = process.stdin.emit.bind(process.stdin) as (event: string | symbol, ...args: unknown[]) => boolean;
  (process.stdin as { emit: unknown }).emit = (event: string | symbol, ...args: unknown[]): boolean => {
    if (event === 'data') record('in', args[0]);
    return emit(event, ...args);
  };
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  (process.stdout as { write: unknown }).write = (chunk: unknown, ...rest: unknown[]): boolean => {
    record('out', chunk);
    return write(chunk, ...rest);
  };
}

/** A request a child sent its clients and withdrew (`$/cancel_request`), with the answers the child was sent to it. */
export interface Withdrawal {
  pid: number;
  id: number;
  method: string;
  /** Each answer's error code, or 'result'. */
  answers: (number | 'result')[];
}

/** The requests the tapped children in `dir` withdrew from their clients, in the order sent. */
export function childWithdrawals(dir: string): Withdrawal[] {
  const lines = (file: string): Record<string, any>[] =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l)) : [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.out'))
    .flatMap((f) => {
      const pid = Number(f.slice(0, -'.out'.length));
      const sent = lines(join(dir, f));
      const read = lines(join(dir, `${pid}.in`));
      const methods = new Map(sent.filter((m) => typeof m.method === 'string' && m.id !== undefined).map((m) => [m.id, m.method as string]));
      return sent
        .filter((m) => m.method === '$/cancel_request')
        .map((m) => {
          const id = m.params.requestId;
          const answers = read.filter((a) => a.id === id && a.method === undefined).map((a) => (a.error ? a.error.code : 'result'));
          return { pid, id, method: methods.get(id) ?? '?', answers };
        });
    });
}

/** The env of a daemon whose children are tapped into `dir` (its files read by childWithdrawals). */
export function wireTapEnv(dir: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${new URL('./child-wire-tap.js', import.meta.url).href}`, TROUPE_WIRE_TAP: dir };
}
