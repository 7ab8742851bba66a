/**
 * `troupe sessions [list] [--all] [--json]`, `sessions show ID`, `sessions revive ID`, `sessions delete ID`: the daemon's
 * sessions through the management API. `list` is the listing named as the other subcommands are
 * (there since the first CLI; until 2026-12-06 in no help).
 */
import { noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { CliError, EXIT, reportError, type CliIo } from './cli-io.js';
import { DaemonClient, type SessionSummary } from './daemon.client.js';
import { connectDaemon } from './daemon-target.js';
import { makeStyle, type Style } from './style.js';
import { displayWidth, padEndColumns } from './display-width.js';
import { printable, printableStart } from './terminal-text.js';

const USAGE = `Usage: troupe sessions [list] [--all] [--json]
       troupe sessions show ID [--json]
       troupe sessions revive ID [--json]
       troupe sessions delete ID [--json]

Lists the daemon's sessions, newest first: id, status, what its process is doing, last update, title, cwd
('troupe sessions list' is the same). A session whose log does not open is marked: 'active (damaged)'.
  --all     include closed and deleted sessions
  --json    print JSON (an array for the list, an object for show, revive and delete)

'show' prints one session with the state of its machines and its latest transitions.
'revive' clears the failed status of a session whose process crashed too often (once you fixed
the cause): its next message starts it again from its history.
'delete' stops its process and tombstones it: its log is replaced by a one-event tombstone (the
history is gone; 'troupe sessions --all' still lists it as deleted).

Examples:
  troupe sessions
  troupe sessions --all --json | jq -r '.[].id'
  troupe sessions show ses_0abc…
  troupe sessions revive ses_0abc…
  troupe sessions delete ses_0abc…
`;

export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** Columns lined up by display width (until 2026-12-06 by `.length`: a CJK or emoji title pushed its row's cwd right). */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => displayWidth(r[c]!))));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : padEndColumns(cell, widths[c]!))).join('  ').trimEnd() + '\n').join('');
}

/**
 * A session's status as listed: `active (damaged)` for one whose log does not open (the daemon's
 * `damaged`, spec/event-log.md §6), which keeps its status. Until 2026-12-06 it looked like any other.
 */
function statusText(s: SessionSummary): string {
  return `${printable(String(s.status))}${s.damaged ? ' (damaged)' : ''}`;
}

/** `show`'s line for a damaged log: the daemon's code and the byte where the damage starts, spelled out. */
function damageText(s: SessionSummary): string {
  const d = s.damaged!;
  return `${printable(String(d.code))} at byte ${printable(String(d.offset))}: its log does not open (troupe log dump ${printable(s.id)} shows what is readable)`;
}

function listText(sessions: SessionSummary[], style: Style): string {
  if (!sessions.length) return 'no sessions\n';
  const rows = [['ID', 'STATUS', 'PROCESS', 'UPDATED', 'TITLE', 'CWD']];
  // Every field is the daemon's word (until 2026-12-06 id, status and process state were printed raw).
  for (const s of sessions) rows.push([printable(s.id), statusText(s), s.child ? printable(s.child.state) : '-', ago(s.updatedAt), printableStart(s.title ?? '', 40), printable(s.cwd)]);
  const text = table(rows);
  const [head, ...rest] = text.split('\n');
  return [style.bold(head!), ...rest].join('\n');
}

export async function sessionsCommand(args: string[], io: CliIo): Promise<number> {
  const sub = args[0] === 'show' || args[0] === 'revive' || args[0] === 'delete' || args[0] === 'list' ? args[0] : undefined;
  const name = `sessions${sub ? ` ${sub}` : ''}`;
  try {
    const { values, positionals } = parseCommandArgs(name, sub ? args.slice(1) : args, { all: { type: 'boolean' }, json: { type: 'boolean' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    if (!sub && positionals.length) throw new CliError('usage', `unknown subcommand '${positionals[0]}' (try 'troupe sessions --help')`);
    noExtraPositionals(name, positionals, sub === 'show' || sub === 'revive' || sub === 'delete' ? 1 : 0);
    const style = makeStyle(io.stdout, io.env, values['no-color']);
    const conn = await connectDaemon(io, { autoStart: false });
    const client = new DaemonClient(conn.target);
    if (sub === 'show') {
      const id = requirePositional(name, positionals, 0, 'the session id');
      const d = await client.session(id);
      if (values.json) return void io.stdout.write(`${JSON.stringify(d)}\n`), EXIT.ok;
      // The daemon's words, all spelled out (until 2026-12-06 only the title and the directories were).
      const p = (v: unknown) => printable(String(v));
      const lines = [
        `${style.bold(p(d.id))}  ${printable(d.title ?? '')}`,
        `  status       ${statusText(d)}`,
        ...(d.damaged ? [style.red(`  damaged      ${damageText(d)}`)] : []),
        `  cwd          ${printable(d.cwd)}`,
        ...(d.additionalDirectories?.length ? [`  also         ${d.additionalDirectories.map((x) => printable(x)).join('  ')}`] : []),
        `  model        ${p(d.model)}`,
        `  mode         ${p(d.mode)}`,
        `  created      ${new Date(d.createdAt).toISOString()} (${ago(d.createdAt)})`,
        `  updated      ${new Date(d.updatedAt).toISOString()} (${ago(d.updatedAt)})`,
        `  events       ${p(d.lastSeq)}`,
        `  process      ${d.child ? p(`${d.child.state}${d.child.pid ? ` (pid ${d.child.pid})` : ''}, ${d.child.restarts} restarts, ${d.child.wakes} wakes`) : 'not running'}`,
        `  connections  ${p(d.connections)}`,
        `  machines     ${p(Object.entries(d.machines).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')) || '-'}`,
      ];
      if (d.transitions.length) {
        lines.push('  transitions (latest last):');
        for (const t of d.transitions.slice(-10)) lines.push(style.dim(`    ${new Date(t.at).toISOString().slice(11, 23)}  ${p(`${t.machine} → ${t.state}  (${t.event})`)}`));
      }
      io.stdout.write(lines.join('\n') + '\n');
      return EXIT.ok;
    }
    if (sub === 'revive') {
      const id = requirePositional(name, positionals, 0, 'the session id');
      const revived = await client.revive(id);
      io.stdout.write(values.json ? `${JSON.stringify(revived)}\n` : `revived ${id}: its next message starts it from its history\n`);
      return EXIT.ok;
    }
    if (sub === 'delete') {
      const id = requirePositional(name, positionals, 0, 'the session id');
      await client.session(id); // an already deleted session is unknown to the CLI too (DELETE would succeed again)
      const removed = await client.remove(id);
      io.stdout.write(values.json ? `${JSON.stringify(removed)}\n` : `deleted ${id}\n`);
      return EXIT.ok;
    }
    const sessions = await client.sessions(values.all ?? false);
    io.stdout.write(values.json ? `${JSON.stringify(sessions)}\n` : listText(sessions, style));
    return EXIT.ok;
  } catch (err) {
    return reportError(io, name, err);
  }
}
