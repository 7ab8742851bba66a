/**
 * What `troupe acp` and `troupe serve` print for a person: `--help`, `--version` and (acp)
 * `--check`. It lives with the CLI because it is text on stdout, where a running `troupe acp` puts
 * nothing but the protocol and a running `troupe serve` nothing at all; src/main.ts sends these
 * invocations here before either face is loaded.
 */
import { VERSION } from '../core/version.js';
import { acpCheck } from './acp-check.js';

const ACP_USAGE = `Usage: troupe acp [--check | --version]

Runs an ACP agent on stdio (JSON-RPC, one message per line). Editors spawn it; see docs/editors.md.
  --check     print the providers, keys and default model this agent would use; exit 1 if broken
  --version   print the version
Environment: TROUPE_HOME (state), TROUPE_MODEL, provider keys (docs/providers.md), TROUPE_LOG,
TROUPE_SESSION_IDLE_MS (unload a session unused this long, default 15 min; 0: never).
`;

const SERVE_USAGE = `Usage: troupe serve [options]

Runs the troupe daemon in the foreground: ACP over HTTP+SSE and WebSocket at /acp, the management
API at /v1, metrics at /metrics. One supervised 'troupe acp' child per live session.

Options:
  --host H                 address to bind (default 127.0.0.1; anything else is reachable by others)
  --port P                 port (default 7433; 0 picks a free one)
  --allow-origin O         also accept browser requests from origin O (repeatable)
  --tls-cert F --tls-key F serve HTTPS/WSS with these PEM files
  --pool N                 warm children kept ready (default 2)
  --max-sessions N         live sessions at once (default 1000)
  --idle-ms N              stop a session's child after N ms idle (default 600000)
  --child-memory-mb N      V8 heap budget of each child (default 512)
  --child-nice N           scheduling niceness of the children, 0-19 (default 0: as the daemon);
                           e.g. 10 keeps the daemon responsive in bursts of sessions booting
  --snapshot               start children from the V8 startup snapshot (faster cold start, ~8 MiB
                           more memory per child; see docs/daemon.md)
  --heartbeat-ms N         how often a child reports it is alive (default 1000)
  --heartbeat-timeout-ms N kill a child silent for N ms (default 10000; at least 3 heartbeats)
  --startup-timeout-ms N   kill a child that has not started N ms after its spawn (default 30000)
  --restart-intensity N    restarts allowed per period before a session fails (default 3)
  --restart-period-ms N    the period (default 60000)
  --connection-idle-ms N   reap an ACP connection whose client vanished after N ms (default 300000)
  --max-connections N      open ACP connections at once; one more is capacity_exceeded (default 256)
  --max-streams N          open management event streams (session events, inspector) at once;
                           one more is capacity_exceeded (default 256)
  --feed-queue-mb N        events all event streams' slow readers may have waiting in memory
                           together (default 64); beyond, the furthest behind reads on from the log
  --acp-retain-mb N        output one ACP HTTP connection keeps for Last-Event-ID resume, over all
                           its streams (default 64)
  --acp-retain-total-mb N  the same, over all connections (default 256)
  --acp-unsent-total-mb N  ACP output no client has read yet, over all connections (default 1024);
                           beyond, the connection holding most is closed (limit_exceeded)
Environment: TROUPE_HOME (state, token, logs), TROUPE_LOG (error|warn|info|debug),
TROUPE_SHUTDOWN_TIMEOUT_MS (a stop taking longer kills the children and exits 1; default 30000).
SIGTERM, Ctrl-C or SIGHUP (its terminal closing) stops it cleanly; 'troupe daemon start' runs it
in the background, past its terminal.
`;

/** Answers an informational invocation of `troupe acp` or `troupe serve`; returns the exit code. */
export function faceInfo(face: 'acp' | 'serve', args: string[], env: NodeJS.ProcessEnv): number {
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write(face === 'acp' ? ACP_USAGE : SERVE_USAGE), 0;
  if (args.includes('--version')) return void process.stdout.write(`troupe ${VERSION}\n`), 0;
  if (face === 'acp') return acpCheck(env, (line) => process.stdout.write(line + '\n'));
  process.stderr.write(`troupe serve: unknown option --check (try --help)\n`);
  return 2;
}
