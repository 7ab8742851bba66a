/**
 * `session/load` replays: a session's history as `session/update` notifications, in log order,
 * before the load response. A session not open in this process is replayed straight from its log
 * file (read once, each event projected as it is decoded), so the response never waits for the
 * session machinery (engine, tools, index): the engine opens after it. Logs that need the engine
 * first (an interrupted turn to repair, a torn tail to truncate, a tombstone, a very large file,
 * anything unexpected) are left to the engine path.
 */
import { readFile, stat } from 'node:fs/promises';
import type * as acp from '@agentclientprotocol/sdk';
import { ContentJoiner } from '../core/content-parts.js';
import type { AgentEvent } from '../core/events.js';
import { visitLogBuffer } from '../store/log-file.reader.js';
import { notificationLine, projectEvent, projectEventLines, type ProjectionCaps } from './update.projection.js';
import { cwdMismatch, sameCwd } from './session-options.js';
import { REPLAY_STARTED } from './troupe-meta.js';
import { withoutTerminals } from './terminal-content.js';

/** Queues ready-made NDJSON lines behind everything sent so far (the batched stdout writer). */
export type LineWriter = (text: string) => Promise<void>;

/**
 * The updates of one replay, projected event by event and sent in order by `flush`. With a line
 * writer they are serialized here and queued as one text: the SDK's write path (a promise chain,
 * a stream writer and a lock per message) costs several times the serialization itself. The
 * replay's first update still goes through the SDK and is awaited, so that every message the SDK
 * accepted earlier is queued before the replay's lines.
 */
export class UpdateReplay {
  private viaSdk: acp.SessionNotification[] = [];
  private lines: string[] = [];
  /**
   * Lines already joined, a few hundred at a time: a replay held until its log is read whole keeps
   * a few flat strings alive, not thousands of small ones that every young-generation collection
   * would have to copy.
   */
  private texts: string[] = [];
  private ordered = false;
  /** A message logged in parts is shown whole (src/core/content-parts.ts). */
  private readonly parts = new ContentJoiner();

  /** `announce`: the load asked for its replay's start to be marked (troupe-meta.ts MARKS_REPLAY). */
  constructor(
    private readonly client: acp.AgentContext,
    private readonly caps: ProjectionCaps,
    private readonly writeLines?: LineWriter,
    private readonly announce = false,
  ) {}

  /**
   * The replay of `sessionId` through seq `through` starts here: if asked, says so now, behind
   * everything sent so far and before the replay's first update (queued at once, not at the flush: a
   * live update sent after this call would otherwise come before the mark).
   */
  begin(sessionId: string, through: number): void {
    if (!this.announce) return;
    const params = { sessionId, through };
    if (this.writeLines) void this.writeLines(`${JSON.stringify({ jsonrpc: '2.0', method: REPLAY_STARTED, params })}\n`);
    else void this.client.notify(REPLAY_STARTED, params).catch(() => undefined);
  }

  add(logged: AgentEvent): void {
    const taken = this.parts.take(logged);
    if (!taken) return;
    // A terminal was the live client's: a client loading the session has none of that id (terminal-content.ts).
    const event = withoutTerminals(taken);
    if (this.ordered && this.writeLines) return void this.push(projectEventLines(event, this.caps));
    for (const n of projectEvent(event, this.caps)) {
      if (!this.writeLines || !this.ordered) {
        this.viaSdk.push(n);
        this.ordered = true;
      } else {
        this.push(notificationLine(n) + '\n');
      }
    }
  }

  /** Sends what was added since the last flush (waits for the writer: backpressure). */
  async flush(): Promise<void> {
    if (this.lines.length) this.texts.push(this.lines.join(''));
    const { viaSdk, texts } = this;
    this.viaSdk = [];
    this.lines = [];
    this.texts = [];
    // Notifications leave in call order; one wait per batch.
    if (viaSdk.length) await Promise.all(viaSdk.map((n) => this.client.notify('session/update', n)));
    if (texts.length) await this.writeLines!(texts.join(''));
  }

  /** `text`: one or more complete lines, each ending in a newline. */
  private push(text: string): void {
    if (text === '' || this.lines.push(text) < LINES_PER_TEXT) return;
    this.texts.push(this.lines.join(''));
    this.lines = [];
  }
}

const LINES_PER_TEXT = 256;

/** Logs above this size are replayed by the engine, page by page, not held in memory at once. */
const MAX_FILE_REPLAY_BYTES = 8 * 1024 * 1024;

/** What a response needs of the history, and whether the engine must see it first. */
export interface LogSummary {
  cwd: string;
  mode: string;
  model: string;
  /**
   * A turn (or a prompt), or a compaction, started and never completed: crash repair must end it
   * (it appends events).
   */
  interrupted: boolean;
  closed: boolean;
}

/**
 * Replays the log at `path` into `replay` if it can be shown as it is, and returns its summary;
 * `undefined` (nothing sent) when the engine must open the session first. A session whose cwd is
 * not `cwd` is refused with `invalid_params`, as on the engine path.
 */
export async function replayLogFile(path: string, sessionId: string, cwd: string, replay: UpdateReplay): Promise<LogSummary | undefined> {
  let buf: Buffer;
  try {
    if ((await stat(path)).size > MAX_FILE_REPLAY_BYTES) return undefined;
    buf = await readFile(path);
  } catch {
    return undefined;
  }
  // The fold follows Conversation.apply (src/actors/conversation.ts) for the fields it needs.
  const s: LogSummary = { cwd: '', mode: '', model: '', interrupted: false, closed: false };
  let firstType: string | undefined;
  let lastSeq = 0;
  /** The compaction started and not yet completed (a process killed during it leaves one). */
  let compacting: string | undefined;
  const fold = (e: AgentEvent) => {
    firstType ??= e.type;
    lastSeq = e.seq;
    switch (e.type) {
      case 'session_created':
        [s.cwd, s.mode, s.model] = [e.cwd, e.mode, e.model];
        break;
      case 'session_configured':
        if (e.mode !== undefined) s.mode = e.mode;
        if (e.model !== undefined) s.model = e.model;
        break;
      case 'user_message': // its turn_started follows, unless the process died between the two
      case 'turn_started':
        s.interrupted = true;
        break;
      case 'turn_completed':
        s.interrupted = false;
        break;
      case 'compaction_started':
        compacting = e.compactionId;
        break;
      case 'compaction_completed':
        if (compacting === e.compactionId) compacting = undefined;
        break;
      case 'session_closed':
        s.closed = true;
        break;
      default:
        break;
    }
    replay.add(e);
  };
  let scan;
  try {
    scan = visitLogBuffer(buf, fold, path);
  } catch {
    return undefined; // a checksummed record that does not decode: the engine path reports it
  }
  const h = scan.header;
  if (scan.warnings.length > 0 || !h || h.tombstone || h.sessionId !== sessionId || h.baseSeq !== 0 || scan.firstSeq !== 1 || firstType !== 'session_created') return undefined;
  if (compacting !== undefined) s.interrupted = true;
  if (s.interrupted || s.closed) return undefined;
  if (!sameCwd(s.cwd, cwd)) throw cwdMismatch(sessionId, s.cwd);
  replay.begin(sessionId, lastSeq);
  await replay.flush();
  return s;
}
