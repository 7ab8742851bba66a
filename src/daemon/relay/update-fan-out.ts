/**
 * Which of a session's attached connections is sent which `session/update` of its child
 * (spec/daemon.md §Relay: "Each update once", "Several updates of one seq", "Several connections per
 * session"). Every connection has a mark, the furthest update it has been sent, and is sent only
 * updates past it; a connection loading the session has a second mark for its replay.
 *
 * Updates are compared by *place*: the seq, plus the update's index among the consecutive updates of
 * that seq as a fraction. One event can make several updates (a prompt of several blocks, a title
 * and a mode set together), all with its seq, always together and in the same order, live and
 * replayed. Compared by seq alone, every update of an event after its first was dropped.
 */
import type { Logger } from '../../core/ports.js';
import type { UpdateLine } from '../../wire/update-line.js';
import type { RelayConnection } from './relay-connection.js';
import type { JsonRpcMessage } from './rpc.js';
import type { TerminalView, TerminalViews } from './terminal-views.js';

/**
 * More updates than a place tells apart within one seq. The event with the most is a prompt, one
 * update per block, and a prompt has at most 10,000 blocks (src/acp/prompt-content.ts). Places stay
 * exact doubles for seqs below 2^33.
 */
const UPDATES_PER_SEQ = 2 ** 20;

/**
 * The mark of a connection that joins at `place`: past every update of that seq, so that it is sent
 * the next event's updates, not the rest of an event whose first ones it never had (it joined
 * between two updates of a prompt: it would show the prompt's later blocks alone).
 */
const lastPlaceOf = (place: number): number => Math.floor(place) + 1 - 1 / UPDATES_PER_SEQ;

export class UpdateFanOut {
  /** Connection → the furthest update (its place) it has been sent. */
  readonly attached = new Map<RelayConnection, number>();
  /**
   * The connection whose session/load is in flight. Until the child says its replay starts
   * (`replayStarted`, src/acp/troupe-meta.ts MARKS_REPLAY) it is sent nothing of the session: what
   * the child sends before that (a turn streaming, a restarted child's catch-up) is in the log up to
   * where the replay reads, so the replay brings it. Sent live as well, it came twice, and ahead of
   * the history it belongs after. From then on it is sent the replay (seqs up to `through`, for it
   * alone) and what the session made meanwhile (the child holds that behind the replay), each line
   * past `replayed`. Loads go to the child one at a time (RelaySession).
   */
  private replay?: { conn: RelayConnection; through?: number; replayed: number };
  /**
   * Connection → the seq of the latest echo of a prompt it sent: none of that event's updates is sent
   * to it live (after a crash the rest of an echo may come again, untagged: see `resent`); a load of
   * its own ends this.
   */
  private readonly ownEcho = new Map<RelayConnection, number>();
  /**
   * Connection → the mark `liveFromNow` gave it, and the furthest update it had been sent then: while
   * its mark is still that one, it has been sent nothing since (for `_troupe/updates_lost`, which
   * says what a client was sent; the mark says what it is not to be sent).
   */
  private readonly joined = new Map<RelayConnection, { mark: number; sent: number }>();
  /** The furthest update the child has sent. */
  private lastPlace = 0;
  /**
   * After a restart, the seq the new child sends again: its event may have reached the clients in
   * part (a crash between two of its updates), so the child's catch-up starts with it whole, and
   * each connection is sent only the updates of it that it lacks. Not a sign that seqs went back.
   */
  private resent?: number;
  /** The seq of the child's latest update line of this session, and how many came before it with that seq. */
  private lineSeq = -1;
  private lineIndex = 0;

  /** `terminals`: what each connection is sent of an update that shows a client terminal (terminal-views.ts). */
  constructor(
    private readonly sessionId: () => string | undefined,
    private readonly logger: Logger,
    private readonly terminals?: TerminalViews,
  ) {}

  /** With `replay` (session/load) `conn` is sent every update again; otherwise only those to come. */
  attach(conn: RelayConnection, replay: boolean): void {
    if (replay) this.attached.set(conn, 0);
    else if (!this.attached.has(conn)) this.liveFromNow(conn);
  }

  /** `conn` is sent the updates that follow the session's latest, not the rest of its event. */
  private liveFromNow(conn: RelayConnection): void {
    const mark = lastPlaceOf(this.lastPlace);
    this.joined.set(conn, { mark, sent: this.sentTo(conn) });
    this.attached.set(conn, mark);
  }

  /**
   * The furthest update `conn` has been sent, or more (a held connection's is not known): a client
   * is told of lost updates it may have seen, never not told of ones it saw.
   */
  private sentTo(conn: RelayConnection): number {
    const mark = this.attached.get(conn);
    if (mark === undefined) return 0;
    const joined = this.joined.get(conn);
    return joined?.mark === mark ? joined.sent : mark;
  }

  detach(conn: RelayConnection): void {
    this.attached.delete(conn);
    this.ownEcho.delete(conn);
    this.joined.delete(conn);
  }

  /** `conn` waits for a load of its own to be sent: it is sent nothing of the session until then. */
  hold(conn: RelayConnection): void {
    this.attached.set(conn, Number.POSITIVE_INFINITY);
  }

  /** `conn` waits for no load any more (it withdrew its own): it is sent the updates that follow from now. */
  unhold(conn: RelayConnection): void {
    if (this.attached.get(conn) === Number.POSITIVE_INFINITY) this.liveFromNow(conn);
  }

  /** `conn`'s load is sent to the child (or queued for its next process). */
  startReplay(conn: RelayConnection): void {
    this.replay = { conn, replayed: 0 };
    // Its replay shows it every prompt, its own too.
    this.ownEcho.delete(conn);
  }

  /** Whether the load in flight is `conn`'s. */
  replayingFor(conn: RelayConnection): boolean {
    return this.replay?.conn === conn;
  }

  /** The child's replay for the load in flight starts with the next update; it covers seqs up to `through`. */
  replayStarted(through: number): void {
    if (this.replay) [this.replay.through, this.replay.replayed] = [through, 0];
  }

  /**
   * The load was answered: its connection goes on from what its replay sent, or from now if it had
   * none (an error). `failed`: it died with its process (or was refused), and nothing of its replay counts.
   */
  endReplay(failed = false): void {
    const replay = this.replay;
    this.replay = undefined;
    if (!replay || !this.attached.has(replay.conn)) return;
    if (failed || replay.through === undefined) this.liveFromNow(replay.conn);
    else this.attached.set(replay.conn, replay.replayed);
  }

  /** The load failed with its process (or was refused): its connection takes live updates from now. */
  dropReplay(): void {
    this.endReplay(true);
  }

  /** A new process: its lines start afresh, and a load still queued for it replays from the start. */
  newProcess(): void {
    if (this.replay) [this.replay.through, this.replay.replayed] = [undefined, 0];
    this.lineSeq = -1;
    this.resent = this.lastPlace > 0 ? Math.floor(this.lastPlace) : undefined;
  }

  /**
   * The highest seq some update of which has been sent (0: none): a restarted child sends its log
   * from there on (src/acp/troupe-meta.ts).
   */
  get sentSeq(): number {
    return Math.floor(this.lastPlace);
  }

  /**
   * A parsed notification from the child: to every attached connection that has not had it, but
   * `passOver` (the sender of the prompt this echoes), which counts it as had without being sent it.
   */
  notification(msg: JsonRpcMessage, passOver?: RelayConnection): void {
    const sessionId = (msg.params as { sessionId?: unknown })?.sessionId;
    const seq = (msg.params as any)?.update?._meta?.troupe?.seq;
    const place = typeof seq === 'number' ? this.place(String(sessionId), seq) : undefined;
    const replayed = place !== undefined && this.isReplayed(sessionId, seq);
    if (place !== undefined && !replayed) this.seqsWentBack(sessionId, place);
    if (passOver) this.echoed(passOver, sessionId, seq);
    const view = this.terminals?.message(msg);
    for (const [conn, mark] of this.attached) {
      if (conn.isClosed) continue;
      if (place !== undefined && !this.takes(conn, mark, place, replayed)) continue;
      if (!this.isOwnEcho(conn, sessionId, seq)) void conn.send(view ? view(conn) : msg);
    }
    if (place !== undefined && place > this.lastPlace) this.lastPlace = place;
  }

  /**
   * The hot path: `session/update` lines relayed as the child wrote them (never parsed), with the
   * same per-connection filter as `notification`, one hand-over per connection per batch. A line that
   * echoes a prompt is not sent to the prompt's sender (`senderOf` its prompter), which counts it as had.
   */
  updates(batch: UpdateLine[], senderOf: (prompter: number) => RelayConnection | undefined = () => undefined): void {
    const sessionId = batch[0]!.sessionId;
    const places = batch.map((u) => this.place(u.sessionId, u.seq));
    let ordered = true;
    for (let i = 1; i < batch.length; i++) {
      if (places[i]! <= places[i - 1]! || batch[i]!.sessionId !== sessionId) ordered = false;
    }
    // Lines of the replay in flight (none but while one runs): they are not seqs going back.
    const replayed = this.replay?.through === undefined ? undefined : batch.map((u) => this.isReplayed(u.sessionId, u.seq));
    const anyReplayed = replayed?.includes(true) ?? false;
    let lowest = ordered && !anyReplayed ? places[0]! : Number.POSITIVE_INFINITY;
    if (!ordered || anyReplayed) for (const [i, u] of batch.entries()) if (u.sessionId === sessionId && !replayed?.[i] && places[i]! < lowest) lowest = places[i]!;
    if (lowest !== Number.POSITIVE_INFINITY) this.seqsWentBack(sessionId, lowest);
    let all: string[] | undefined;
    // Rare (a prompt's blocks): who sent the prompt a line echoes.
    for (const u of batch) {
      const sender = u.prompter === undefined ? undefined : senderOf(u.prompter);
      if (sender) this.echoed(sender, u.sessionId, u.seq);
    }
    // Rare too (a command in a client terminal): lines that show a terminal, which only its client is sent as it is.
    let viewed: (TerminalView<string> | undefined)[] | undefined;
    if (this.terminals) {
      // Indexed: it runs for every streamed line, and `entries()` costs an iterator and a pair per line.
      for (let i = 0; i < batch.length; i++) {
        const view = this.terminals.line(batch[i]!);
        if (view) (viewed ??= new Array(batch.length))[i] = view;
      }
    }
    const first = batch[0]!.seq;
    const last = batch[batch.length - 1]!.seq;
    for (const [conn, mark] of this.attached) {
      if (conn.isClosed) continue;
      const replay = this.replay?.conn === conn ? this.replay : undefined;
      // Waiting for its replay to start: all of this is in the log it reads.
      if (replay && replay.through === undefined) continue;
      const own = this.ownEcho.get(conn);
      const floor = replay ? replay.replayed : mark;
      if (ordered && places[0]! > floor && (replay || !anyReplayed) && !(own !== undefined && own >= first && own <= last)) {
        // The common case: all new to this connection, one session, in order.
        if (replay) replay.replayed = places[places.length - 1]!;
        else this.attached.set(conn, places[places.length - 1]!);
        conn.sendNotifications(sessionId, viewed ? batch.map((u, i) => viewed[i]?.(conn) ?? u.json) : (all ??= batch.map((u) => u.json)));
        continue;
      }
      for (const [i, u] of batch.entries()) {
        if (this.takes(conn, this.attached.get(conn)!, places[i]!, replayed?.[i] ?? false) && !this.isOwnEcho(conn, u.sessionId, u.seq)) conn.sendNotifications(u.sessionId, [viewed?.[i]?.(conn) ?? u.json]);
      }
    }
    for (const place of places) if (place > this.lastPlace) this.lastPlace = place;
  }

  /** `sender` sent the prompt whose echo has `seq`: none of that event's updates goes to it live. */
  private echoed(sender: RelayConnection, sessionId: unknown, seq: unknown): void {
    if (typeof seq === 'number' && sessionId === this.sessionId()) this.ownEcho.set(sender, seq);
  }

  /** Whether an update of `seq` echoes a prompt `conn` sent (see `ownEcho`). */
  private isOwnEcho(conn: RelayConnection, sessionId: unknown, seq: unknown): boolean {
    return seq !== undefined && this.ownEcho.get(conn) === seq && sessionId === this.sessionId();
  }

  /** Where an update of `seq` stands (see the module comment). Called once per line, in the order the child wrote them. */
  private place(sessionId: string, seq: number): number {
    if (sessionId !== this.sessionId()) return seq;
    if (seq === this.lineSeq) this.lineIndex++;
    else [this.lineSeq, this.lineIndex] = [seq, 0];
    return seq + this.lineIndex / UPDATES_PER_SEQ;
  }

  /** Whether an update of `seq` is one of the replay in flight (the child marked its start: `replayStarted`). */
  private isReplayed(sessionId: unknown, seq: number): boolean {
    const through = this.replay?.through;
    return through !== undefined && seq <= through && sessionId === this.sessionId();
  }

  /**
   * Whether `conn` (last sent `mark`) is to be sent an update at `place`, which is `replayed` when it
   * is one of the replay in flight (for its connection only); advances the marks it uses.
   */
  private takes(conn: RelayConnection, mark: number, place: number, replayed: boolean): boolean {
    const replay = this.replay?.conn === conn ? this.replay : undefined;
    if (replay) {
      if (replay.through === undefined || place <= replay.replayed) return false;
      replay.replayed = place;
      return true;
    }
    if (replayed || place <= mark) return false;
    this.attached.set(conn, place);
    return true;
  }

  /**
   * At an update at `place` (the lowest of a batch, a replay's aside): whether the child's seqs went
   * back, i.e. an update of this session, not replayed, at or before the furthest place it had sent. Its log
   * lost events that had been sent (a write that failed: the session was then opened again from what
   * its file holds), and new events take their seqs. The marks go back to before it, so that the new
   * events reach every client, and each client that was sent the lost ones is told
   * (`_troupe/updates_lost`): what it saw after `keptSeq` is not in the history, which a
   * `session/load` shows as it is. Without this the relay dropped the new events as already sent.
   */
  private seqsWentBack(sessionId: unknown, place: number): void {
    const own = this.sessionId();
    if (sessionId !== own) return;
    if (this.resent !== undefined && Math.floor(place) !== this.resent) this.resent = undefined;
    if (place > this.lastPlace || Math.floor(place) === this.resent) return;
    const kept = Math.floor(place) - 1;
    const sent = Math.floor(this.lastPlace);
    this.lastPlace = kept;
    // The seqs after `kept` are other events' from here on.
    for (const [conn, seq] of this.ownEcho) if (seq > kept) this.ownEcho.delete(conn);
    for (const [conn, mark] of this.attached) {
      if (mark <= kept || mark === Number.POSITIVE_INFINITY) continue; // is to be sent all of it, or waits for its own load
      const top = this.sentTo(conn);
      this.attached.set(conn, kept);
      if (top > kept) void conn.send({ jsonrpc: '2.0', method: '_troupe/updates_lost', params: { sessionId: own, keptSeq: kept, sentSeq: Math.min(Math.floor(top), sent) } });
    }
    this.logger.warn('a session log lost events its clients were sent; they are told', { sessionId: own, keptSeq: kept, sentSeq: sent });
  }
}
