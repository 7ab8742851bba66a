/**
 * `session/load` replays: a session's history as `session/update` notifications, in log order,
 * before the load response. A session not open in this process is replayed straight from its log
 * file (read and decoded once, folded into a Conversation for the response's mode and model), so
 * the response never waits for the session machinery (engine, tools, index): the engine opens after
 * it. Logs that need the engine first (an interrupted turn to repair, a torn tail to truncate, a
 * tombstone, anything unexpected) are left to the engine path.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { AgentEvent } from '../core/events.js';
import { Conversation } from '../actors/conversation.js';
import { readLogFile } from '../store/log-file.reader.js';
import { projectEvent, type ProjectionCaps } from './update.projection.js';
import { cwdMismatch } from './session-options.js';

/** Queues ready-made NDJSON lines behind everything sent so far (the batched stdout writer). */
export type LineWriter = (text: string) => Promise<void>;

/** Sends the updates of a page of events; pages are sent in order, each awaited. */
export type ReplaySink = (events: readonly AgentEvent[]) => Promise<void>;

/**
 * A sink for one replay. With a line writer, updates are serialized here and queued as one text
 * per page: the SDK's write path (a promise chain, a stream writer and a lock per message) costs
 * several times the serialization itself. The first update still goes through the SDK and is
 * awaited, so that every message the SDK accepted earlier is queued before the replay's lines.
 */
export function replaySink(client: acp.AgentContext, caps: ProjectionCaps, writeLines?: LineWriter): ReplaySink {
  let ordered = false;
  return async (events) => {
    const updates: acp.SessionNotification[] = [];
    for (const event of events) for (const n of projectEvent(event, caps)) updates.push(n);
    if (!writeLines) {
      // Notifications leave in call order; one wait per page keeps backpressure.
      await Promise.all(updates.map((n) => client.notify('session/update', n)));
      return;
    }
    let i = 0;
    if (!ordered && updates.length > 0) {
      ordered = true;
      await client.notify('session/update', updates[i++]!);
    }
    let text = '';
    for (; i < updates.length; i++) text += JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: updates[i] }) + '\n';
    if (text) await writeLines(text);
  };
}

/** Events per write when replaying from a file: bounds the text held at once. */
const PAGE = 1024;

/**
 * Replays the log at `path` if it can be shown as it is, and returns what it folds to; `undefined`
 * (nothing sent) when the engine must open the session first. A session whose cwd is not `cwd` is
 * refused with `invalid_params`, as on the engine path.
 */
export async function replayLogFile(path: string, sessionId: string, cwd: string, sink: ReplaySink): Promise<Conversation | undefined> {
  let contents;
  try {
    contents = await readLogFile(path);
  } catch {
    return undefined;
  }
  const { scan, events } = contents;
  if (scan.warnings.length > 0 || !scan.header || scan.header.tombstone || scan.header.sessionId !== sessionId || scan.header.baseSeq !== 0) return undefined;
  if (events[0]?.type !== 'session_created') return undefined;
  const conv = new Conversation();
  for (const event of events) conv.apply(event);
  // An interrupted turn is ended by crash repair, which appends events: the engine does that.
  if (conv.openTurn || conv.closed) return undefined;
  if (conv.cwd !== cwd) throw cwdMismatch(sessionId, conv.cwd);
  for (let at = 0; at < events.length; at += PAGE) await sink(events.slice(at, at + PAGE));
  return conv;
}
