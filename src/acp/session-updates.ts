/**
 * A host's sessions as its client sees them: what a session emits, projected to `session/update`s
 * live; held back while a replay of that session goes out; and what opening a session appended,
 * sent once.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { ContentJoiner, isParted } from '../core/content-parts.js';
import type { AgentEvent } from '../core/events.js';
import { HISTORY_PAGE_BYTES } from '../core/ports.js';
import { notificationLine, projectEvent, projectEventLines, type ProjectionCaps } from './update.projection.js';
import { PROMPTER } from './troupe-meta.js';
import type { UpdateReplay } from './session-replay.js';
import type { LiveSession } from './session-host.js';

/** The client to send to (none before `initialize`), and what it advertised. */
export interface UpdateTarget {
  client(): acp.AgentContext | undefined;
  caps(): ProjectionCaps;
  /** Where live updates go as NDJSON text (HostOptions.updateLines), else one SDK `notify` each. */
  lines?: (text: string) => void;
}

/** Who sent a prompt: the daemon's prompter, null for the client itself, undefined when not the client. */
type Prompter = number | null | undefined;

export class SessionUpdates {
  /**
   * Events of sessions being replayed (session/load of a live session), held back from the client
   * until the replay has gone out: an update the session makes meanwhile (a turn streaming) must
   * follow the history, not land in the middle of it (a daemon drops replayed updates older than the
   * last seq it relayed to that connection).
   */
  private readonly held = new Map<string, { events: { event: AgentEvent; prompter: Prompter }[]; replays: number }>();

  /**
   * Prompts of the client whose turns have not started yet: turn id → the prompter the daemon named
   * (troupe-meta.ts), or null when the client is the one that sent it. A client is not sent its own
   * prompt back: it shows what it typed already, and editors that also show the echo (Zed, unless the
   * blocks come back exactly as sent) show the prompt twice. The history (a load) has it for everyone.
   */
  private readonly prompted = new Map<string, Exclude<Prompter, undefined>>();

  constructor(private readonly target: UpdateTarget) {}

  /** The prompt of turn `turnId` came from the client (for the daemon: from its `prompter`); call before the prompt is queued. */
  promptedBy(turnId: string, prompter: number | undefined): void {
    this.prompted.set(turnId, prompter ?? null);
  }

  /** The prompt has its answer (its turn never started, if it was withdrawn or cancelled while queued). */
  promptAnswered(turnId: string): void {
    this.prompted.delete(turnId);
  }

  /** An event the session `sessionId` just emitted: to the client, or behind the replay going out. */
  emitted(sessionId: string, event: AgentEvent): void {
    const turnId = event.type === 'user_message' ? event.turnId : '';
    const prompter = this.prompted.get(turnId);
    if (prompter !== undefined) this.prompted.delete(turnId);
    const held = this.held.get(sessionId);
    if (held) held.events.push({ event, prompter });
    else this.project(event, prompter);
  }

  /**
   * Replays the history page by page (each page sent and awaited: backpressure), through the last
   * event appended so far; what the session emits meanwhile is sent after it (events are observed
   * as they are appended, so those are exactly the ones after `through`).
   */
  async replay(session: LiveSession, replay: UpdateReplay): Promise<void> {
    const sessionId = session.engine.sessionId;
    const hold = this.held.get(sessionId) ?? { events: [], replays: 0 };
    hold.replays++;
    this.held.set(sessionId, hold);
    try {
      const through = session.log.lastSeq();
      // Now, before any await: what the session emits from here on is held, what it emitted before has gone ahead.
      replay.begin(sessionId, through);
      let cursor = 0;
      while (cursor < through) {
        const page = await session.log.readAfter(cursor, { limit: 1024, maxBytes: HISTORY_PAGE_BYTES });
        for (const event of page.events) if (event.seq <= through) replay.add(event);
        await replay.flush();
        const last = page.events.at(-1);
        if (!last || last.seq >= through) return;
        cursor = page.cursor;
        if (!page.hasMore) break;
      }
    } finally {
      if (--hold.replays === 0) {
        this.held.delete(sessionId);
        for (const { event, prompter } of hold.events) this.project(event, prompter);
      }
    }
  }

  /**
   * Sends the client what opening the session appended (see LiveSession.repaired), once: a request
   * that does not replay the history (a resume, a prompt) would otherwise never show the client the
   * end of the turn the crash interrupted. `sentSeq`: the daemon's resume says what its clients saw,
   * and everything the log holds after it is sent, the open's repair or not. `prompters`: the daemon's
   * prompts the dead process had, by turn id, whose echoes are sent as the live ones would have been.
   */
  async sendCatchUp(live: LiveSession, sentSeq?: number, prompters?: ReadonlyMap<string, number>): Promise<void> {
    const repaired = live.repaired;
    live.repaired = undefined;
    // After a crash the log may hold events the dead process never wrote out (its stdout buffer),
    // whether or not the open appended anything: a turn that had ended in the log needs no repair.
    if (!repaired && sentSeq === undefined) return;
    const through = repaired?.through ?? live.log.lastSeq();
    // Where the log stood before the open appended anything.
    const opened = repaired?.after ?? through;
    const after = sentSeq === undefined ? opened : await this.resendFrom(live, Math.min(opened + 1, sentSeq));
    if (through <= after) return;
    const parts = new ContentJoiner();
    for (const e of (await live.log.readAfter(after, { limit: through - after })).events) {
      const shown = e.seq <= through ? parts.take(e) : undefined;
      if (shown) this.project(shown, shown.type === 'user_message' ? prompters?.get(shown.turnId) : undefined);
    }
  }

  /**
   * Where the catch-up after the daemon's `sentSeq` starts (troupe-meta.ts): before that seq's event,
   * which its clients may have had in part, and before its content parts if it is a parted message (or tool call).
   * After it come what the old process logged and never sent, and what the open appended.
   */
  private async resendFrom(live: LiveSession, seq: number): Promise<number> {
    if (seq <= 1) return 0;
    const [e] = (await live.log.readAfter(seq - 1, { limit: 1 })).events;
    const parts = e && isParted(e) ? (e.parts ?? 0) : 0;
    return Math.max(0, seq - 1 - parts);
  }

  /** One event's `session/update`s to the client, live; a prompt's with who sent it (see `prompted`). */
  private project(event: AgentEvent, prompter?: Prompter): void {
    const client = this.target.client();
    if (!client || prompter === null) return;
    const caps = this.target.caps();
    const lines = this.target.lines;
    if (prompter === undefined && lines) return lines(projectEventLines(event, caps));
    const updates = projectEvent(event, caps).map((n) => (prompter === undefined ? n : withPrompter(n, prompter)));
    if (lines) lines(updates.map((n) => `${notificationLine(n)}\n`).join(''));
    else for (const n of updates) void client.notify('session/update', n).catch(() => undefined);
  }
}

/** An echo of a prompt the daemon forwarded: `_meta.troupe` names its prompter (the daemon takes it out). */
function withPrompter(n: acp.SessionNotification, prompter: number): acp.SessionNotification {
  const troupe = (n.update._meta as { troupe?: object } | undefined)?.troupe;
  return { ...n, update: { ...n.update, _meta: { troupe: { ...troupe, [PROMPTER]: prompter } } } };
}
