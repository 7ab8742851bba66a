/**
 * A message whose content is larger than one event (a pasted screenshot: the log's events are at
 * most 1 MiB by default), or a tool call whose input is (a model writing a large file), is logged
 * in parts (spec/event-log.md §5.1): the JSON text of its content (its input) is cut into slices,
 * each logged as a `content_part` event right before it, and the event itself has `content: []`
 * (`input: {}`) and `parts` (how many). Readers of the log that need the content (the conversation,
 * a `session/load` replay) join the parts back with a {@link ContentJoiner}.
 */
import type { AgentEvent, ContentBlock, EventOf } from './events.js';
import { jsonStringBytes } from './json-bytes.js';
import { parseJsonSlices, writeJsonPieces } from './json-slices.js';
import { isHighSurrogate, isLowSurrogate } from './text-cut.js';

/** A message that may have been logged in parts. */
export type PartedMessage = EventOf<'user_message'> | EventOf<'steer_received'>;
/** An event that may have been logged in parts: a message, or a tool call (its input). */
export type PartedEvent = PartedMessage | EventOf<'tool_call_started'>;

/** An event whose content (a tool call's input) may have been logged in parts before it. */
export const isParted = (e: AgentEvent): e is PartedEvent => e.type === 'user_message' || e.type === 'steer_received' || e.type === 'tool_call_started';

/** The id the parts of `m` name it by (`partOf`): a prompt's message id, a steer's id, a tool call's id. */
export const partsId = (m: Pick<PartedEvent, 'type'> & { messageId?: string; steerId?: string; toolCallId?: string }): string =>
  (m.type === 'user_message' ? m.messageId : m.type === 'steer_received' ? m.steerId : m.toolCallId)!;

/**
 * Cuts `text` into slices whose JSON string form is at most `budget` bytes each (16 or more). A
 * slice never ends between the two halves of a surrogate pair: each half alone would be stored as
 * U+FFFD.
 */
export function sliceText(text: string, budget: number): string[] {
  if (budget < 16) throw new RangeError(`a part budget of ${budget} bytes is too small`);
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const n = sliceLength(text, at, budget);
    out.push(text.slice(at, at + n));
    at += n;
  }
  return out;
}

/** How many characters of `text` from `at` make the slice {@link sliceText} would cut there. */
function sliceLength(text: string, at: number, budget: number): number {
  // Optimistic for ASCII (one byte a character); a slice that escapes or encodes wider shrinks
  // in proportion, which takes one or two tries.
  let n = Math.min(budget - 2, text.length - at);
  for (;;) {
    // A pair is kept whole (a slice of one character that starts a pair takes both: 6 bytes).
    if (at + n < text.length && isHighSurrogate(text.charCodeAt(at + n - 1)) && isLowSurrogate(text.charCodeAt(at + n))) n = n > 1 ? n - 1 : 2;
    const bytes = jsonStringBytes(text.slice(at, at + n));
    if (bytes <= budget) return n;
    n = Math.max(1, Math.floor((n * (budget - 2)) / bytes) - 1);
  }
}

/**
 * Gives `slice` the JSON text of `value` (`JSON.stringify(value)` exactly) cut as {@link sliceText}
 * cuts it, and returns how many slices it gave. The text is made a piece at a time, never whole: a
 * value's JSON may be longer than V8's longest string (json-slices.ts).
 */
export function sliceJson(value: unknown, budget: number, slice: (data: string) => void): number {
  // As sliceText: under 16 bytes a slice may not hold one escaped character, and this would give
  // empty slices for ever.
  if (budget < 16) throw new RangeError(`a part budget of ${budget} bytes is too small`);
  let count = 0;
  let pieces: string[] = [];
  // The slice's bytes as a JSON string so far, quotes included: pieces never part a surrogate pair,
  // so the slice's bytes are the sum of its pieces'.
  let bytes = 2;
  const flush = () => {
    slice(pieces.join(''));
    count++;
    pieces = [];
    bytes = 2;
  };
  writeJsonPieces(value, (piece) => {
    let more = jsonStringBytes(piece) - 2;
    while (bytes + more > budget) {
      // What of the piece fits ends this slice; the rest starts the next.
      const room = budget - bytes + 2;
      const head = room >= 16 ? piece.slice(0, sliceLength(piece, 0, room)) : '';
      pieces.push(head);
      flush();
      more -= jsonStringBytes(head) - 2;
      piece = piece.slice(head.length);
    }
    pieces.push(piece);
    bytes += more;
  });
  if (pieces.some((p) => p.length > 0)) flush();
  return count;
}

/** Joins parts back into the content of the messages that follow them, in log order. */
export class ContentJoiner {
  /** Parts seen since the last message: only one message's are ever pending (they precede it). */
  private pending?: { id: string; slices: string[] };

  /** Takes a `content_part`. */
  add(part: EventOf<'content_part'>): void {
    if (this.pending?.id !== part.partOf) this.pending = { id: part.partOf, slices: [] };
    this.pending.slices[part.index] = part.data;
  }

  /** How many parts it holds now (they wait for their message). */
  get heldParts(): number {
    // Counted, not the length: a joiner that took a message's parts from the middle has holes before them.
    return this.pending ? Object.keys(this.pending.slices).length : 0;
  }

  /**
   * Lets go of the parts taken so far. Parts come right before their message, with nothing between
   * (spec/event-log.md §5.1), so any other event after parts says a crash left them with no message:
   * they would otherwise be held, a large input's worth, until the next message in parts.
   */
  release(): void {
    this.pending = undefined;
  }

  /**
   * The content of `m`: its own, or its parts joined. Parts that were never logged (a log read from
   * a cursor between them and their message) give a text block that says so.
   */
  contentOf(m: PartedMessage): ContentBlock[] {
    const joined = this.joined(m);
    if (m.parts === undefined) return m.content;
    return (joined as ContentBlock[] | undefined) ?? [{ type: 'text', text: missing(m, m.parts) }];
  }

  /** The input of tool call `e`: its own, or its parts joined (or, parts not read, an object that says so). */
  inputOf(e: EventOf<'tool_call_started'>): Record<string, unknown> {
    const joined = this.joined(e);
    if (e.parts === undefined) return e.input;
    return (joined as Record<string, unknown> | undefined) ?? { unavailable: missing(e, e.parts) };
  }

  /** The parsed JSON of `e`'s parts, if it has parts and they were all read; the pending parts are taken either way. */
  private joined(e: PartedEvent): unknown {
    const pending = this.pending;
    this.pending = undefined;
    if (e.parts === undefined) return undefined;
    const slices = pending?.id === partsId(e) ? pending.slices : [];
    let whole = slices.length === e.parts;
    for (let i = 0; whole && i < e.parts; i++) whole = typeof slices[i] === 'string';
    // Not joined when the text is longer than a string can be (an input of 90M control characters).
    return whole ? parseJsonSlices(slices) : undefined;
  }

  /** `e` goes by: a `content_part` is taken; any other event but a parted one lets go of the parts (release). */
  see(e: AgentEvent): void {
    if (e.type === 'content_part') this.add(e);
    else if (!isParted(e)) this.release();
  }

  /** `e` with its content (input) joined if it is a parted event; a `content_part` is taken and gives undefined. */
  take(e: AgentEvent): AgentEvent | undefined {
    if (!isParted(e)) {
      this.see(e);
      return e.type === 'content_part' ? undefined : e;
    }
    // Taken whatever its parts: the pending parts go either way.
    const whole = e.type === 'tool_call_started' ? { input: this.inputOf(e) } : { content: this.contentOf(e) };
    if (e.parts === undefined) return e;
    const { parts: _parts, ...rest } = e;
    return { ...rest, ...whole } as AgentEvent;
  }
}

/** What stands for content whose parts were not all read. */
const missing = (e: PartedEvent, parts: number) =>
  `[${e.type === 'tool_call_started' ? 'input' : 'content'} of ${parts} parts not available: seqs ${e.seq - parts} to ${e.seq - 1} were not read]`;
