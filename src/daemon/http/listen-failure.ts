/**
 * Why the daemon cannot listen. uWebSockets.js only says that it could not, which leaves an operator
 * guessing; node:net, binding the same host and port, gets the system's reason (the port in use, a
 * privileged port, an address this machine does not have).
 */
import { createServer } from 'node:net';
import { TroupeError } from '../../core/errors.js';

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is in use (another process listens on it; pick another --port)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'this machine has no such address (check --host)',
};

/** The system's error code for binding `host:port`, or undefined if the bind now works. */
function bindError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

export async function listenFailed(host: string, port: number): Promise<TroupeError> {
  const reason = await bindError(host.replace(/^\[|\]$/g, ''), port);
  const why = reason ? `: ${REASONS[reason] ?? reason}` : '';
  return new TroupeError('listen_failed', `cannot listen on ${host}:${port}${why}`, { host, port, ...(reason ? { reason } : {}) });
}
