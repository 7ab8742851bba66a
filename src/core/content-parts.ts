/**
 * A message whose content is larger than one event (a pasted screenshot: the log's events are at
 * most 1 MiB by default), or a tool call whose input is (a model writing a large file), is logged
 * in parts (spec/event-log.md §5.1): the JSON text of its content (its input) is cut into slices,
 * each logged as a `content_part` event right before it, and the event itself has `content: []`
 * (`input: {}`) and `parts` (how many). Readers of the log that need the content (the conversation,
 * a `session/load` replay) join the parts back with a {@link ContentJoiner}.
 */
import type { AgentEvent, ContentBlock, EventOf } from './events.js';
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

/** Bytes of `s` as a JSON string in UTF-8, quotes included. */
const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));

/**
 * Cuts `text` into slices whose JSON string form is at most `budget` bytes each (16 or more). A
 * slice never ends between the two halves of a surrogate pair: each half alone would be stored as
 * U+FFFD.
 */
export function sliceText(text: string, budget: number): string[] {
  if (budget < 16) throw new RangeError(`a part budget of ${budget} bytes is too small`);
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    // Optimistic for ASCII (one byte a character); a slice that escapes or encodes wider shrinks
    // in proportion, which takes one or two tries.
    let n = Math.min(budget - 2, text.length - at);
    for (;;) {
      // A pair is kept whole (a slice of one character that starts a pair takes both: 6 bytes).
      if (at + n < text.length && isHighSurrogate(text.charCodeAt(at + n - 1)) && isLowSurrogate(text.charCodeAt(at + n))) n = n > 1 ? n - 1 : 2;
      const bytes = jsonBytes(text.slice(at, at + n));
      if (bytes <= budget) break;
      n = Math.max(1, Math.floor((n * (budget - 2)) / bytes) - 1);
    }
    out.push(text.slice(at, at + n));
    at += n;
  }
  return out;
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
    return whole ? JSON.parse(slices.join('')) : undefined;
  }

  /** `e` with its content (input) joined if it is a parted event; a `content_part` is taken and gives undefined. */
  take(e: AgentEvent): AgentEvent | undefined {
    if (e.type === 'content_part') return void this.add(e);
    if (!isParted(e)) return e;
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
