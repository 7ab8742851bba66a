/**
 * What the relay tells the process that replaces a session's crashed one, so that its clients get
 * what the dead process's stdout never brought them (src/acp/troupe-meta.ts SENT_SEQ, PROMPTERS):
 * where the history they came with ends, and the prompts the dead process never answered, whose
 * echoes in the catch-up go, as live echoes do, to every client but the sender.
 */
import { logSeqAnswer } from './child-wire.js';
import { PROMPTERS, SENT_SEQ } from '../../acp/troupe-meta.js';
import type { RelayConnection } from './relay-connection.js';

export class CrashCatchUp {
  /**
   * The seq through which the session's history came before this relay session: 0 for a session
   * its session/new made, the seq its log held when a process of it first opened it for a resume or
   * a load (the child says: LOG_SEQ, REPLAY_STARTED). The earliest counts: while the relay has sent
   * no update of the session, what any process appended since is unsent.
   */
  private historyThrough?: number;
  /**
   * Prompts a crashed process had and never answered (child-side id → sender, turn id), until the
   * process that replaces it has caught up: its catch-up may echo them (their echoes may have died
   * in the dead process's stdout buffer), named by their prompter as live echoes are.
   */
  private readonly lostPrompts = new Map<number, { conn: RelayConnection; turnId: string }>();

  /** The session's history through `seq` came to its clients some other way (its creation: 0; a replay). */
  historySent(seq: number): void {
    this.historyThrough = Math.min(this.historyThrough ?? seq, seq);
  }

  /** A resume's answer: where the session's log stood (LOG_SEQ) noted, and taken out (it is the daemon's). */
  opened(answer: unknown): unknown {
    const { logSeq, result } = logSeqAnswer(answer);
    if (logSeq !== undefined) this.historySent(logSeq);
    return result;
  }

  /** A prompt the dead process had (child-side id `id`, its turn `turnId`) was never answered. */
  lost(id: number, conn: RelayConnection, turnId: string): void {
    this.lostPrompts.set(id, { conn, turnId });
  }

  /** The connection that sent the lost prompt of child-side id `prompter`. */
  senderOf(prompter: number): RelayConnection | undefined {
    return this.lostPrompts.get(prompter)?.conn;
  }

  /**
   * The `_meta.troupe` fields of the resume of a process replacing a crashed one, given the highest
   * seq its clients were sent (`sentSeq`, 0 for none): the new process sends what its log holds
   * beyond it. A session the relay has sent no update of yet is not sent the history it came with
   * (a daemon restarted), but is sent what its log holds beyond that: the dead process may have put
   * its first updates in its log and died with them in its stdout buffer. Until 2026-12-06 it was
   * sent nothing then, and a turn that had ended in the log never reached them.
   */
  resumeFields(sentSeq: number): Record<string, unknown> {
    const from = sentSeq > 0 ? sentSeq : this.historyThrough !== undefined ? this.historyThrough + 1 : undefined;
    if (from === undefined) return {};
    const prompters = this.lostPrompts.size ? { [PROMPTERS]: Object.fromEntries([...this.lostPrompts].map(([id, { turnId }]) => [turnId, id])) } : {};
    return { [SENT_SEQ]: from, ...prompters };
  }

  /** The new process answered its resume (its catch-up came before), or the session failed: the lost prompts are settled. */
  caughtUp(): void {
    this.lostPrompts.clear();
  }
}
