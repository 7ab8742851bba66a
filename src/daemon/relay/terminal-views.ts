/**
 * Which attached client owns which of a session's client terminals, and what each connection is sent
 * of an update that shows one (src/acp/terminal-content.ts). A terminal is the client's that answered
 * the process's `terminal/create` with its id: that connection is sent the update as the process
 * wrote it; every other one is sent it without the terminal (the output as text once the command
 * ended), as a `session/load` replays it. Until 2026-12-07 every attached client was sent the
 * terminal's id, and one that never had it (Zed: "Terminal with id … not found") failed the update.
 *
 * A terminal's entry goes as its command ends: with the final update (`completed` or `failed`) of the
 * tool call whose updates showed it, whatever that update shows, or, if no update ever showed it, as
 * the process releases it (`terminal/release`, which it sends for every terminal it made:
 * clientTerminalBackend, src/acp/client-bridges.ts). Until 2026-12-07 only a final update that still
 * showed the terminal dropped it, and two ends of a command send none: a cancel that came while
 * `terminal/create` was in flight (the process shows the terminal in no update: runTool,
 * src/actors/tool.effects.ts), and the process's crash (the next one fails the call without knowing
 * its terminal). Each left an entry for the session's life. The process's exit ends every entry
 * (processGone), its terminals released by the relay. (A result too large for the log would
 * be a third, its final update a note, src/actors/tool-result-fit.ts; a client terminal's output is
 * cut to commandOutputBytes, far below the log's limit.)
 */
import { terminalIdsOf, updateWithoutTerminals } from '../../acp/terminal-content.js';
import type { RelayConnection } from './relay-connection.js';
import type { JsonRpcMessage } from './rpc.js';
import { updateStart, type UpdateLine } from '../../wire/update-line.js';

/** What `conn` is sent of one update that shows a terminal. */
export type TerminalView<T> = (conn: RelayConnection) => T;

/**
 * The cheap test that passes over every other line of a child unparsed: only a tool call's update
 * shows a terminal, and the child writes its kind first (update.projection.ts), then the terminal as
 * `toolContent` makes it (JSON.stringify). A text holding these characters has its quotes escaped;
 * a tool's input holding such an object is parsed and let through. The kind's first letter rules out
 * nearly every line (no other kind starts with `t`): about 5 ns a line, where the search for the
 * terminal took ~110 ns for a 288-character model delta, and a startsWith of the kind ~50 ns.
 */
const KIND = '"sessionUpdate":"';
const TOOL_CALL = `${KIND}tool_call`;
const T = 't'.charCodeAt(0);
const TERMINAL_TEXT = '{"type":"terminal","terminalId":';

const FINAL = new Set(['completed', 'failed']);
const COMPLETED_TEXT = '"status":"completed"';
const FAILED_TEXT = '"status":"failed"';

export class TerminalViews {
  /** Terminal id → the connection whose client created it; null once that one has left the session. */
  private readonly owners = new Map<string, RelayConnection | null>();
  /** Tool call id → the terminals with an owner entry its updates have shown, until its final update. */
  private readonly calls = new Map<string, Set<string>>();

  /** `conn` answered the process's `terminal/create` with `terminalId`. */
  created(terminalId: string, conn: RelayConnection): void {
    this.owners.set(terminalId, conn);
  }

  /**
   * The connection to ask the process's request `msg` of, when it acts on a terminal (`terminal/output`,
   * `wait_for_exit`, `kill`, `release`): the one whose client created it; null once that one has left
   * the session (no other client has that terminal); undefined for any other request. Asked of
   * whichever client came first in the usual order, it went to one that never had that terminal (an
   * editor that loaded the session while the command ran) and failed, and the command with it; and a
   * client with a terminal of its own under the same id would have had that one read, killed or released.
   */
  ownerFor(msg: JsonRpcMessage): RelayConnection | null | undefined {
    if (typeof msg.method !== 'string' || !msg.method.startsWith('terminal/')) return undefined;
    const id = (msg.params as { terminalId?: unknown } | undefined)?.terminalId;
    return typeof id === 'string' ? this.owners.get(id) : undefined;
  }

  /**
   * The process's request `msg` to a client has been routed (`ownerFor`): a `terminal/release` of a
   * terminal no update has shown ends its entry; one that an update showed goes with its call's final
   * update, which comes after the release and is still sent to its owner as it is.
   */
  asked(msg: JsonRpcMessage): void {
    if (msg.method !== 'terminal/release') return;
    const id = (msg.params as { terminalId?: unknown } | undefined)?.terminalId;
    if (typeof id !== 'string') return;
    for (const shown of this.calls.values()) if (shown.has(id)) return;
    this.owners.delete(id);
  }

  /** `conn` was detached from the session: its terminals are no client's (shown to none as terminals, asked of none). */
  forget(conn: RelayConnection): void {
    for (const [id, owner] of this.owners) if (owner === conn) this.owners.set(id, null);
  }

  /**
   * The session's process is gone: the terminals it had at clients still attached, each with its
   * owner, for the relay to release (the process cannot, and the next one knows nothing of them: it
   * fails the call with text only); every entry ends.
   */
  processGone(): [string, RelayConnection][] {
    const live = [...this.owners].filter((e): e is [string, RelayConnection] => e[1] !== null);
    this.owners.clear();
    this.calls.clear();
    return live;
  }

  /** For a child's update line: undefined when it shows no terminal, else each connection's text of it. */
  line(u: UpdateLine): TerminalView<string> | undefined {
    const start = updateStart(u);
    const json = u.json;
    if (json.charCodeAt(start + KIND.length) !== T || !json.startsWith(TOOL_CALL, start)) return undefined;
    // A call that showed a terminal ends with a final update that may not show it (see the module comment).
    if (!json.includes(TERMINAL_TEXT) && !(this.calls.size > 0 && (json.includes(COMPLETED_TEXT) || json.includes(FAILED_TEXT)))) return undefined;
    // The rare line in a function of its own: what its views capture is not allocated for every line.
    return this.lineViews(json);
  }

  private lineViews(json: string): TerminalView<string> | undefined {
    let msg: JsonRpcMessage;
    try {
      msg = JSON.parse(json) as JsonRpcMessage;
    } catch {
      return undefined; // not JSON after all: relayed as it came, as every line is
    }
    const view = this.message(msg);
    if (!view) return undefined;
    const texts = new Map<JsonRpcMessage, string>();
    return (conn) => {
      const shown = view(conn);
      if (shown === msg) return json;
      let text = texts.get(shown);
      if (text === undefined) texts.set(shown, (text = JSON.stringify(shown)));
      return text;
    };
  }

  /** For a parsed `session/update`: undefined when it shows no terminal, else each connection's message (`msg` itself for the owner). */
  message(msg: JsonRpcMessage): TerminalView<JsonRpcMessage> | undefined {
    if (msg.method !== 'session/update') return undefined;
    const params = msg.params as { update?: Record<string, unknown> } | undefined;
    const update = params?.update;
    const ids = terminalIdsOf(update);
    const owners = ids.map((id) => this.owners.get(id));
    if (update && typeof update.toolCallId === 'string') this.track(update.toolCallId, ids, FINAL.has(update.status as string));
    if (!update || ids.length === 0) return undefined;
    let others: JsonRpcMessage | undefined;
    return (conn) => {
      if (owners.every((o) => o === conn)) return msg;
      const keep = (id: string) => owners[ids.indexOf(id)] === conn;
      if (owners.some((o) => o === conn)) return { ...msg, params: { ...params, update: updateWithoutTerminals(update, keep) } };
      return (others ??= { ...msg, params: { ...params, update: updateWithoutTerminals(update) } });
    };
  }

  /**
   * Records the terminals call `callId` shows; at its final update, ends the entries of those it
   * shows and has shown: no update shows them again (a crash's catch-up sends each client only what
   * it lacks), so they are not held for the session's life.
   */
  private track(callId: string, ids: string[], final: boolean): void {
    const shown = this.calls.get(callId);
    if (final) {
      for (const id of ids) this.owners.delete(id);
      if (shown) for (const id of shown) this.owners.delete(id);
      this.calls.delete(callId);
      return;
    }
    // Only terminals a client created here: a replayed or unknown one has no entry to end.
    const owned = ids.filter((id) => this.owners.has(id));
    if (owned.length === 0) return;
    if (shown) for (const id of owned) shown.add(id);
    else this.calls.set(callId, new Set(owned));
  }
}
