/**
 * AgentEvent → ACP `session/update` payloads. Live updates and `session/load` replays use this one
 * function, so a replay shows what a live client saw (but for the live client's own terminals:
 * terminal-content.ts). Every update carries
 * `_meta.troupe = { seq, turnId }`. Updates a client did not ask for (notices, compaction) are
 * degraded to ones every client understands.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { AgentEvent, ContentBlock, EventOf, ToolContent } from '../core/events.js';
import { jsonBytes } from '../core/json-bytes.js';
import { fitJson, LINE_PAYLOAD_BYTES } from '../wire/ndjson-limits.js';

/** What the client advertised, reduced to what the projection needs. */
export interface ProjectionCaps {
  notices: boolean;
  compaction: boolean;
}

type Update = acp.SessionUpdate;

/** A tool call's content as ACP shows it (in updates, and in a permission request's tool call). */
export function toolContent(c: ToolContent): acp.ToolCallContent {
  switch (c.type) {
    case 'text':
      return { type: 'content', content: { type: 'text', text: c.text } };
    case 'diff':
      return { type: 'diff', path: c.path, oldText: c.oldText, newText: c.newText };
    case 'terminal':
      return { type: 'terminal', terminalId: c.terminalId };
  }
}

function text(t: string): acp.ContentBlock {
  return { type: 'text', text: t };
}

/**
 * A note about event `e`; for clients without notice support, a thought, which every client renders,
 * as a message of its own (`messageId`: the event's): without one, two notes in a row (a compaction's
 * start and end) were one thought to a client that joins chunks, `[Compacting …][Compaction
 * completed]` on one line (until 2026-12-06), and a note after the model's thinking ran on from it.
 */
function note(e: AgentEvent, caps: ProjectionCaps, severity: 'info' | 'warning' | 'error', title: string, description?: string): Update {
  if (caps.notices) return { sessionUpdate: 'notice', severity, title, ...(description ? { description } : {}) } as Update;
  return { sessionUpdate: 'agent_thought_chunk', content: text(`[${title}${description ? `: ${description}` : ''}]`), messageId: `note_${e.seq}` };
}

/** What failed, by the code the failure would have ended the turn with. */
function retryCause(e: EventOf<'model_retry'>): string {
  const status = e.status === undefined ? '' : ` (${e.status})`;
  switch (e.errorCode) {
    case 'provider_rate_limited':
      return `Rate limited by ${e.provider}${status}`;
    case 'provider_overloaded':
      return `${e.provider} is overloaded or failing${status}`;
    case 'provider_network':
      return `The connection to ${e.provider} failed${status}`;
    default:
      // A failure retried only because the vendor said so (OpenAI's `x-should-retry: true` on a 400,
      // say): not a broken connection, as it read until 2026-12-07.
      return `${e.provider} answered an error${status} it says to send again`;
  }
}

/** A wait as a person reads it: `450 ms`, `2.5 s`, `8 s`. */
function waitText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
}

/**
 * One line for a model call being made again: "Rate limited by anthropic (429), retrying in 8 s
 * (attempt 2 of 3)". The vendor's words stay in the log (`message`), for the inspector.
 */
export function retryStatus(e: EventOf<'model_retry'>): string {
  return `${retryCause(e)}, retrying in ${waitText(e.delayMs)} (attempt ${e.attempt} of ${e.attempts})`;
}

/**
 * A prompt's block as a `user_message_chunk` shows it: as it is, or, when its JSON alone is over what
 * a line may give its payload, a text block saying what it was. A prompt is read on a line of at
 * most 32 MiB, but its block is shown on a line of its own with a longer envelope: a block of a
 * prompt within a few hundred bytes of the limit made a line over it, which ended the editor's
 * connection on every `session/load` of the session (and, under `troupe serve`, for every other
 * client following it), until 2026-12-07. The model, and the log, have it whole.
 */
function shownBlock(block: ContentBlock): acp.ContentBlock {
  // Counted, not made (a pass over the block's strings, small beside the log's write of it).
  const bytes = jsonBytes(block);
  if (bytes <= LINE_PAYLOAD_BYTES) return block as acp.ContentBlock;
  const what = block.type === 'text' ? 'text' : block.type === 'image' ? `${block.mimeType} image` : block.type === 'resource' ? `resource ${block.resource.uri}` : block.type;
  return { type: 'text', text: `[${what}: ${bytes} bytes, too large to show here]` };
}

function updatesOf(e: AgentEvent, caps: ProjectionCaps): Update[] {
  switch (e.type) {
    case 'session_configured': {
      const out: Update[] = [];
      if (e.title !== undefined) out.push({ sessionUpdate: 'session_info_update', title: e.title, updatedAt: new Date(e.ts).toISOString() });
      if (e.mode !== undefined) out.push({ sessionUpdate: 'current_mode_update', currentModeId: e.mode });
      return out;
    }
    case 'user_message':
      return e.content.map((content) => ({ sessionUpdate: 'user_message_chunk', content: shownBlock(content), messageId: e.messageId }));
    case 'steer_received':
      // Guidance shows where the person typed it; whether it was applied is in the log.
      return e.content.map((content) => ({ sessionUpdate: 'user_message_chunk', content: shownBlock(content), messageId: e.steerId }));
    case 'steer_rejected':
      // Guidance shown as accepted whose turn ended before delivering it: without a word the person
      // would believe the model read it. (A steer refused at once is the request's error instead.)
      return e.code === 'turn_ended' ? [note(e, caps, 'warning', 'Guidance not delivered', 'the turn ended before its next step, so the model did not read it')] : [];
    case 'agent_message_chunk':
      return [{ sessionUpdate: 'agent_message_chunk', content: text(e.text), messageId: e.messageId }];
    case 'agent_thought_chunk':
      return [{ sessionUpdate: 'agent_thought_chunk', content: text(e.text), messageId: e.messageId }];
    case 'tool_call_started':
      return [
        {
          sessionUpdate: 'tool_call',
          toolCallId: e.toolCallId,
          title: e.title,
          kind: e.kind,
          status: e.status,
          // A model may write a file of any size: shown whole, its input made a line over what
          // the client reads, and the client's connection ended.
          rawInput: fitJson(e.input, LINE_PAYLOAD_BYTES).value,
          locations: e.locations,
        },
      ];
    case 'tool_call_updated':
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: e.toolCallId,
          ...(e.status ? { status: e.status } : {}),
          ...(e.title ? { title: e.title } : {}),
          ...(e.content ? { content: e.content.map(toolContent) } : {}),
          ...(e.locations ? { locations: e.locations } : {}),
          ...(e.output !== undefined ? { rawOutput: { output: e.output, ...(e.errorCode ? { errorCode: e.errorCode } : {}) } } : {}),
        },
      ];
    case 'plan_updated':
      return [{ sessionUpdate: 'plan', entries: e.entries }];
    case 'usage':
      return [{ sessionUpdate: 'usage_update', used: e.used, size: e.size, ...(e.cost ? { cost: e.cost } : {}) }];
    case 'compaction_started':
      if (caps.compaction) return [{ sessionUpdate: 'compaction_update', compactionId: e.compactionId, status: 'in_progress' } as Update];
      return [note(e, caps, 'info', 'Compacting the conversation', `${e.reason}, about ${e.tokensBefore} tokens`)];
    case 'compaction_completed':
      if (caps.compaction) {
        return [
          {
            sessionUpdate: 'compaction_update',
            compactionId: e.compactionId,
            status: e.status,
            // ACP's summary is content blocks (a complete replacement), not a string.
            ...(e.summary ? { summary: [text(e.summary)] } : {}),
            ...(e.errorCode ? { error: e.errorCode } : {}),
          } as Update,
        ];
      }
      return [note(e, caps, e.status === 'completed' ? 'info' : 'warning', `Compaction ${e.status}`, e.errorCode)];
    case 'model_retry':
      return [note(e, caps, 'warning', retryStatus(e))];
    case 'turn_completed':
      // The prompt response carries the outcome live; this keeps failed turns visible in replays.
      return e.stopReason === 'error' ? [note(e, caps, 'error', `Turn ended: ${e.errorCode ?? 'error'}`, e.message)] : [];
    default:
      // session_created, turn_started, reasoning_part, permission_*, steer_applied,
      // session_closed: internal, or carried by a JSON-RPC request/response instead.
      return [];
  }
}

/** The `session/update` params for one event (none for internal events). */
export function projectEvent(e: AgentEvent, caps: ProjectionCaps): acp.SessionNotification[] {
  const meta = { troupe: { seq: e.seq, ...('turnId' in e && e.turnId ? { turnId: e.turnId } : {}) } };
  return updatesOf(e, caps).map((update) => ({ sessionId: e.sessionId, update: { ...update, _meta: meta } as Update }));
}

const js = JSON.stringify;

/** The JSON-RPC envelope of one `session/update`, as the SDK's `notify` writes it. */
export function notificationLine(n: acp.SessionNotification): string {
  return js({ jsonrpc: '2.0', method: 'session/update', params: n });
}

/**
 * The text around a chunk's `text` and `seq`, cached for the latest (session, kind, message, turn):
 * a reply streams thousands of chunks that differ only in those two fields.
 */
const chunk = { sessionId: '', type: '', messageId: '' as string | undefined, turnId: '' as string | undefined, head: '', mid: '', tail: '' };

/**
 * The `session/update` notifications of one event as NDJSON text, byte for byte what
 * `JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params })` gives for each of
 * `projectEvent(e, caps)` (one line each, '' for an internal event). Text chunks, nearly every event
 * of a streamed reply, are written from a cached template instead of being built as objects first.
 */
export function projectEventLines(e: AgentEvent, caps: ProjectionCaps): string {
  if ((e.type === 'agent_message_chunk' || e.type === 'agent_thought_chunk') && typeof e.text === 'string') {
    const c = chunk;
    if (c.sessionId !== e.sessionId || c.type !== e.type || c.messageId !== e.messageId || c.turnId !== e.turnId || c.head === '') {
      c.sessionId = e.sessionId;
      c.type = e.type;
      c.messageId = e.messageId;
      c.turnId = e.turnId;
      c.head = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${js(e.sessionId)},"update":{"sessionUpdate":"${e.type}","content":{"type":"text","text":`;
      c.mid = `},${e.messageId === undefined ? '' : `"messageId":${js(e.messageId)},`}"_meta":{"troupe":{"seq":`;
      c.tail = `${e.turnId ? `,"turnId":${js(e.turnId)}` : ''}}}}}}\n`;
    }
    return c.head + js(e.text) + c.mid + e.seq + c.tail;
  }
  let out = '';
  for (const n of projectEvent(e, caps)) out += notificationLine(n) + '\n';
  return out;
}
