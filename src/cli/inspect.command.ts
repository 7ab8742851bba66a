/**
 * `troupe inspect`: the inspector from a terminal (docs/inspector.md).
 *
 *   troupe inspect [ID] [--url | --open]         a one-time login URL for the web inspector (on session ID)
 *   troupe inspect ID [--last N] [--mermaid [--machine M] | --json]
 *                                                the session's machines: current states, the last
 *                                                N transitions, a Mermaid stateDiagram-v2 of each
 *
 * Talks to the daemon over HTTP only; the pictures (replay of stored sessions, Mermaid) are made
 * by the daemon from the same definitions the web page draws.
 */
import { intOption, noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { CliError, EXIT, reportError, type CliIo } from './cli-io.js';
import { openInBrowser } from './browser-open.js';
import { DaemonClient, sessionPath } from './daemon.client.js';
import { connectDaemon } from './daemon-target.js';
import { printable } from './terminal-text.js';
import { INSPECT_LAST_MAX } from '../wire/inspect-last.js';

const USAGE = `Usage:
  troupe inspect [--url | --open]     print (or open in a browser) a one-time login URL for the web inspector
  troupe inspect ID --url | --open    the same, for the page showing session ID
  troupe inspect ID [options]         print a session's machines: states, last transitions, Mermaid diagrams

Options for a session:
  --last N          how many transitions to print (default 20, at most 500)
  --mermaid         print only the Mermaid stateDiagram-v2 of each machine (Markdown fenced blocks)
  --machine M       with --mermaid: only machine M (session, turn or child), unfenced, for mermaid-cli
  --json            print the whole picture as one JSON document

Examples:
  troupe inspect --open
  troupe inspect ses_0abc… --open
  troupe inspect ses_0abc… --last 50
  troupe inspect ses_0abc… --mermaid --machine turn > turn.mmd
`;

const MACHINES = ['session', 'turn', 'child'] as const;
type Machine = (typeof MACHINES)[number];

interface Picture {
  session: { id: string; title?: string; status: string; model: string; mode: string; cwd: string; additionalDirectories?: string[]; updatedAt: number; child: { state: string; pid: number | null; restarts: number } | null };
  source: 'live' | 'log';
  states: Partial<Record<Machine, string>>;
  transitions: { machine: Machine; state: string; event: string; at: number; seq?: number; cause?: string }[];
  mermaid: Record<Machine, string>;
}

export async function inspectCommand(args: string[], io: CliIo): Promise<number> {
  try {
    // Until 2026-12-06 inspect read its options with its own parseArgs: `--no-color`, which every
    // other command takes, was a usage error, its mistakes were Node's words, and `--last` took
    // what Number() reads ('1e3', '0x10'). Now it reads them as the other commands do.
    const { values: o, positionals } = parseCommandArgs('inspect', args, {
      url: { type: 'boolean' },
      open: { type: 'boolean' },
      mermaid: { type: 'boolean' },
      machine: { type: 'string' },
      json: { type: 'boolean' },
      last: { type: 'string' },
    });
    if (o.help) return void io.stdout.write(USAGE), EXIT.ok;
    noExtraPositionals('inspect', positionals, 1);
    // An empty id is a missing one (it made the path /v1/sessions//inspect: "no session inspect").
    if (positionals.length === 1) requirePositional('inspect', positionals, 0, 'the session id');
    const last = intOption('inspect', 'last', o.last, 20, 1);
    // The daemon's own bound: over it is a usage mistake here (exit 2), not the daemon's
    // invalid_params (exit 1) after a round trip, as until 2026-12-07.
    if (last > INSPECT_LAST_MAX) throw new CliError('usage', `--last must be from 1 to ${INSPECT_LAST_MAX} (the most transitions the daemon sends), got '${o.last}' (try 'troupe inspect --help')`);
    const machine = o.machine as Machine | undefined;
    const problem =
      machine !== undefined && !MACHINES.includes(machine) ? `--machine must be session, turn or child, got '${machine}'` :
      machine !== undefined && !o.mermaid ? '--machine goes with --mermaid' :
      o.mermaid && o.json ? '--mermaid and --json do not go together' :
      positionals.length === 0 && (o.mermaid || o.json) ? '--mermaid and --json need a session id' :
      // Until 2026-12-07 it was ignored: `troupe inspect --last 50` printed a login URL, exit 0.
      positionals.length === 0 && o.last !== undefined ? '--last needs a session id' :
      // The page for one session: its terminal picture's options are for the terminal.
      (o.url || o.open) && (o.mermaid || o.json || o.last !== undefined) ? '--url and --open do not go with --last, --mermaid or --json' : undefined;
    if (problem) throw new CliError('usage', `${problem} (try 'troupe inspect --help')`);
    const conn = await connectDaemon(io, { autoStart: true });
    try {
      const client = new DaemonClient(conn.target);
      if (o.url || o.open || positionals.length === 0) return await login(client, io, Boolean(o.open), positionals[0]);
      const picture = await client.request<Picture>('GET', `${sessionPath(positionals[0]!)}/inspect?last=${last}`);
      if (o.json) io.stdout.write(`${JSON.stringify(picture, null, 2)}\n`);
      else if (machine) io.stdout.write(printable(picture.mermaid[machine] ?? '', { lines: true }));
      else if (o.mermaid) io.stdout.write(fenced(picture));
      else io.stdout.write(`${summary(picture)}\n${fenced(picture)}`);
      return EXIT.ok;
    } finally {
      await conn.release();
    }
  } catch (err) {
    return reportError(io, 'inspect', err);
  }
}

/**
 * A one-time login URL, printed and with `open` opened in a browser; with `sessionId`, for the page
 * showing that session (the page reads it from the address's `#ses_…`, which the login's redirect
 * keeps: RFC 9110 §10.2.2). Until 2026-12-07 `inspect ID --open` was refused, and an opener that
 * found no browser (xdg-open on a server) left the URL printed with nothing said, exit 0.
 */
async function login(client: DaemonClient, io: CliIo, open: boolean, sessionId?: string): Promise<number> {
  // An unknown session is said here (session_not_found), not by a page opened on it.
  if (sessionId !== undefined) await client.request('GET', sessionPath(sessionId));
  const { url: login } = await client.request<{ code: string; url: string }>('POST', '/v1/login-codes');
  const url = sessionId === undefined ? String(login) : `${String(login)}#${encodeURIComponent(sessionId)}`;
  io.stdout.write(`${printable(url)}\n`);
  if (!open) {
    io.stderr.write('troupe inspect: open this URL in a browser within 60 s; it works once (then a cookie keeps you in)\n');
    return 0;
  }
  await openInBrowser(url, io.env);
  return 0;
}

const time = (at: number) => new Date(at).toISOString().replace('T', ' ').replace('Z', '');


/** The daemon's words in one line, spelled out (until 2026-12-06 states, transitions and statuses were printed raw). */
const one = (v: unknown) => printable(String(v ?? ''));

function summary(p: Picture): string {
  const s = p.session;
  const lines = [
    `session  ${printable(s.id)}${s.title ? `  "${printable(s.title)}"` : ''}`,
    `status   ${one(s.status)}${s.child ? one(`, child pid ${s.child.pid ?? '-'} (${s.child.state}), ${s.child.restarts} restart(s)`) : ', no live child'}`,
    `model    ${printable(s.model)}  mode ${printable(s.mode)}`,
    `cwd      ${printable(s.cwd)}`,
    ...(s.additionalDirectories?.length ? [`also     ${s.additionalDirectories.map((d) => printable(d)).join('  ')}`] : []),
    `activity ${time(s.updatedAt)}`,
    '',
    `states (${p.source === 'live' ? 'live' : 'rebuilt from the log'}):`,
    ...MACHINES.map((m) => `  ${m.padEnd(8)}${one(p.states[m] ?? '-')}`),
    '',
    `last ${p.transitions.length} transition(s):`,
  ];
  for (const t of p.transitions) {
    lines.push(`  ${time(t.at)}  ${one(t.machine).padEnd(7)} → ${one(t.state).padEnd(26)} on ${one(t.event)}${t.cause ? one(`  (log #${t.seq} ${t.cause})`) : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

function fenced(p: Picture): string {
  return MACHINES.map((m) => `${m} machine${p.states[m] ? ` (active: ${one(p.states[m])})` : ''}:\n\`\`\`mermaid\n${printable(p.mermaid[m] ?? '', { lines: true })}\`\`\`\n`).join('\n');
}
