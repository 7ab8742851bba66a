/**
 * Ports: the small interfaces the session engine is written against. Composition roots (src/acp,
 * src/daemon) plug real implementations in; tests plug in deterministic ones.
 */
import type { AgentEvent, AgentEventInput, PermissionOutcome, PlanEntry, ToolContent, ToolKind, ToolLocation } from './events.js';
import type { ToolSpec } from './provider.js';
import type { TroupeError } from './errors.js';

/** Wall-clock time and timers, injected so that tests can run on simulated time. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

// ── Tools ────────────────────────────────────────────────────────────────────────────────────────

export interface ToolCallRequest {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** How a call looks before it runs: enough to ask permission and to show it. */
export interface ToolDescription {
  kind: ToolKind;
  title: string;
  locations: ToolLocation[];
  /** `read` tools never need permission; `edit` and `execute` depend on the mode. */
  access: 'read' | 'edit' | 'execute';
}

export interface ToolResult {
  /** What the model sees. */
  output: string;
  isError: boolean;
  errorCode?: string;
  /** What a client shows (diffs, terminals); defaults to the output as text. */
  content?: ToolContent[];
  locations?: ToolLocation[];
  /** A tool that publishes the model's plan (update_plan) returns the complete new plan here. */
  plan?: PlanEntry[];
}

export interface ToolRunContext {
  signal: AbortSignal;
  /** Report progress while running (e.g. an embedded terminal as soon as it exists). */
  update(content: ToolContent[]): void;
}

export interface ToolHost {
  specs(): ToolSpec[];
  /** Throws TroupeError('unknown_tool') for a name it does not serve. */
  describe(call: ToolCallRequest): ToolDescription;
  /** Runs the call. Failures the model should see are returned with `isError`, not thrown. */
  run(call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolResult>;
  /**
   * What the call would change, shown to a person asked to allow it (an edit's diff), without
   * changing anything; undefined when the tool shows nothing ahead. Throws as the run would fail
   * (a TroupeError), when it can already tell: the engine then asks nobody to allow the call.
   */
  preview?(call: ToolCallRequest, signal: AbortSignal): Promise<ToolContent[] | undefined>;
}

// ── Permissions ──────────────────────────────────────────────────────────────────────────────────

export type PermissionDecision =
  | { kind: 'allow'; by: 'policy' | 'remembered' }
  | { kind: 'ask' }
  | { kind: 'deny'; by: 'policy' | 'remembered'; reason: string };

/** The mode policy plus the session's remembered "always" answers (keyed by tool name). */
export interface PermissionPolicy {
  decide(call: ToolCallRequest, description: ToolDescription, mode: string, remembered: ReadonlyMap<string, 'allow' | 'reject'>): PermissionDecision;
}

export interface PermissionRequest {
  requestId: string;
  toolCallId: string;
  /** The tool's name: "always" answers apply to every later call of it. */
  toolName: string;
  title: string;
  kind: ToolKind;
  input: Record<string, unknown>;
  options: PermissionOutcome[];
  /** What allowing it would do (an edit's diff), when the tool can tell ahead. */
  content?: ToolContent[];
}

/**
 * A client's answer naming an option it was not offered (`optionId`, as it sent it): the call does not
 * run, and the failure says so rather than that the person rejected it.
 */
export interface UnofferedAnswer {
  unoffered: string;
}

/** Asks a person. Resolves `cancelled` if `signal` aborts first. */
export interface PermissionAsker {
  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionOutcome | UnofferedAnswer>;
}

// ── Event log ────────────────────────────────────────────────────────────────────────────────────

export interface ReadOptions {
  /** At most this many events in the page. */
  limit?: number;
  /** At most this many events examined (filtered-out events count), so a sparse filter cannot scan forever. */
  scanLimit?: number;
  /**
   * At most about this many bytes of events (compact JSON, as the log counts them), and at least one
   * event. A page of thousands of events is otherwise as large as they are: the parts of large
   * contents (spec/event-log.md §5.1) are a megabyte each.
   */
  maxBytes?: number;
  filter?: (event: AgentEvent) => boolean;
}

/**
 * The `maxBytes` of each page when a whole history is read through (a session opened, a history
 * replayed to a client): until 2026-12-07 a page of 4096 events held every content part in it at
 * once, besides the contents the reader joins from them (an open needed twice the heap of its history).
 */
export const HISTORY_PAGE_BYTES = 4 * 1024 * 1024;

export interface EventPage {
  events: AgentEvent[];
  /** Pass this as the next cursor. */
  cursor: number;
  hasMore: boolean;
}

/** Live events after a cursor. Iteration ends when the log closes; it throws TroupeError `replay_gap` or `event_overflow`. */
export interface EventWatcher extends AsyncIterable<AgentEvent> {
  close(): void;
}

/**
 * A session's append-only event log. `append` stamps `seq` (from 1, no holes) and `ts`
 * synchronously, so that seq order is call order.
 */
export interface EventLog {
  readonly sessionId: string;
  /** The largest event it takes, in bytes of compact JSON (spec/event-log.md §5). */
  readonly maxEventBytes: number;
  lastSeq(): number;
  append(input: AgentEventInput): AgentEvent;
  /**
   * Throws what `append` would throw for this input's content (`invalid_event_payload`,
   * `event_too_large`), appending nothing: a request whose event cannot be stored is refused before
   * it starts anything, instead of failing inside a machine's action.
   */
  check(input: AgentEventInput): void;
  /**
   * The write or sync error that ended the log (`log_write_failed`), if one did: the log then takes
   * no more events (spec/event-log.md §3).
   */
  failure(): TroupeError | undefined;
  /** Calls `listener` once, when a write or sync fails (listeners in the order they were added). */
  onFailure(listener: (err: TroupeError) => void): void;
  /**
   * Writes what was appended to the file now, not synced (a log in memory has nothing to write). For
   * a long synchronous run of appends, such as a large content's parts: the writer would otherwise
   * hold every one of them until the next turn of the event loop, and then encode them all at once.
   */
  writePending(): void;
  /** Resolves once every event through `seq` is durable. */
  whenDurable(seq: number): Promise<void>;
  /** Every event after `cursor`, a page at a time. Throws `invalid_cursor` beyond the end, `replay_gap` if unservable. */
  readAfter(cursor: number, options?: ReadOptions): Promise<EventPage>;
  /** Replay after `cursor`, then live events, with no duplicate and no hole at the seam. Throws `invalid_cursor` at once for a cursor beyond the end; a gap surfaces from the iteration. See spec/event-log.md §4. */
  subscribe(cursor: number, options?: { queueLimit?: number }): EventWatcher;
  /** Flushes, delivers every accepted event to watchers, and ends them. */
  close(): Promise<void>;
}
