/**
 * `troupe cancel ID` and `troupe steer ID "<text>"`: act on a session's running turn from any
 * process, through the management API.
 */
import { isTroupeError, TroupeError } from '../core/errors.js';
import { noExtraPositionals, parseCommandArgs, requirePositional } from './args.js';
import { CliError, EXIT, reportError, type CliIo } from './cli-io.js';
import { DaemonClient } from './daemon.client.js';
import { connectDaemon } from './daemon-target.js';
import { printable } from './terminal-text.js';

const CANCEL_USAGE = `Usage: troupe cancel ID [--json]

Cancels the running turn of session ID (like Ctrl-C in the client that drives it). Succeeds, saying
so, when nothing is running. A failed session (crashed past the restart intensity) is refused with
session_failed until revived ('troupe sessions revive ID').

Examples:
  troupe cancel ses_0abc…
`;

const STEER_USAGE = `Usage: troupe steer ID "<text>" [--turn TURN_ID] [--json]

Sends guidance to the running turn of session ID: the agent reads it at its next step, without
stopping the turn. The daemon names the running turn unless --turn does.
Fails with no_active_turn when nothing runs, turn_mismatch when the turn has just ended,
session_failed for a failed session until it is revived ('troupe sessions revive ID').

Examples:
  troupe steer ses_0abc… "use the v2 API instead"
`;

export async function cancelCommand(args: string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parseCommandArgs('cancel', args, { json: { type: 'boolean' } });
    if (values.help) return void io.stdout.write(CANCEL_USAGE), EXIT.ok;
    const id = requirePositional('cancel', positionals, 0, 'the session id');
    noExtraPositionals('cancel', positionals, 1);
    const client = new DaemonClient((await connectDaemon(io, { autoStart: false })).target);
    // The daemon says whether a turn was running when the cancel reached it (its session machine):
    // asking first, then cancelling, would misreport a turn that started in between.
    const { cancelled } = await client.cancel(id);
    io.stdout.write(values.json ? `${JSON.stringify({ sessionId: id, cancelled })}\n` : cancelled ? `cancelled the running turn of ${id}\n` : `${id} has no running turn\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(io, 'cancel', err);
  }
}

export async function steerCommand(args: string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parseCommandArgs('steer', args, { json: { type: 'boolean' }, turn: { type: 'string' } }, 'a text');
    if (values.help) return void io.stdout.write(STEER_USAGE), EXIT.ok;
    const id = requirePositional('steer', positionals, 0, 'the session id');
    const text = positionals.slice(1).join(' ').trim();
    if (!text) throw new CliError('usage', `missing the text to steer with (try 'troupe steer --help')`);
    const client = new DaemonClient((await connectDaemon(io, { autoStart: false })).target);
    // The daemon names the running turn in the session's detail, and none when the session is idle:
    // it sees every turn start and end (spec/daemon.md §Management API), so the log is not read here.
    const detail = values.turn === undefined ? await client.session(id) : undefined;
    // A failed session runs nothing until revived, and names no turn: its status says so here, as
    // the daemon's steer does (session_failed) when --turn names one. Until 2026-12-07 steer said
    // no_active_turn and to start a turn with `troupe run --session`, which fails with session_failed.
    if (detail?.status === 'failed') throw new TroupeError('session_failed', `session ${id} crashed too often and is no longer restarted`, { sessionId: id });
    const turnId = values.turn ?? detail?.turnId;
    if (!turnId) {
      throw new TroupeError('no_active_turn', `session ${id} has no running turn to steer (use 'troupe run --session ${id} …' to start one)`, { sessionId: id });
    }
    const r = await client.steer(id, turnId, text);
    // The ids are the daemon's (until 2026-12-06 printed raw).
    io.stdout.write(values.json ? `${JSON.stringify(r)}\n` : `steered turn ${printable(String(r.turnId))} of ${id} (${printable(String(r.steerId))})\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(io, 'steer', err);
  }
}
