/**
 * What the relay adds to the messages it sends a session's child, and takes out of what the child
 * answers, in `_meta.troupe` (src/acp/troupe-meta.ts): fields between the daemon and its children
 * that no client sends or is sent.
 */
import { newTurnId } from '../../core/ids.js';
import { ASKS_LOG_SEQ, INDEXED_SEQ, LOG_SEQ, logSeqOf, MARKS_REPLAY, PROMPTER, prompterOf, troupeMeta, TURN_ID } from '../../acp/troupe-meta.js';
import { KEEP_DIRECTORIES } from '../../acp/session-directories.js';

/** The `initialize` the daemon sends a child: as the client `caps`, under the daemon's name. */
export function childInitializeParams(caps: Record<string, unknown>, version: string): Record<string, unknown> {
  return { protocolVersion: 1, clientCapabilities: caps, clientInfo: { name: 'troupe-daemon', version } };
}

/** The requests that open a session in a child; the first one a pooled child gets carries the client's capabilities. */
/**
 * The `session/resume` a fresh process of an existing session is booted with: from its log, without
 * replay, with the directories its log holds (no client asked to change them), its MCP servers,
 * answering the seq its log reached and reporting what the index (at `indexedSeq`) has not seen;
 * `sent`: after a crash, where its clients stand (crash-catch-up.ts).
 */
export function childResumeParams(sessionId: string, cwd: string, mcpServers: unknown[], indexedSeq: number | undefined, sent: Record<string, unknown>): Record<string, unknown> {
  const troupe = { [KEEP_DIRECTORIES]: true, [ASKS_LOG_SEQ]: true, ...(indexedSeq === undefined ? {} : { [INDEXED_SEQ]: indexedSeq }), ...sent };
  return { sessionId, cwd, mcpServers, _meta: { troupe } };
}

export const OPENING = new Set(['session/new', 'session/load', 'session/resume']);

/** `params` with `fields` set in `_meta.troupe`. */
export function withTroupeMeta(params: unknown, fields: Record<string, unknown>): Record<string, unknown> {
  const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
  const meta = (p._meta && typeof p._meta === 'object' ? p._meta : {}) as Record<string, unknown>;
  const troupe = (meta.troupe && typeof meta.troupe === 'object' ? meta.troupe : {}) as Record<string, unknown>;
  return { ...p, _meta: { ...meta, troupe: { ...troupe, ...fields } } };
}

/** `params` with `_meta.troupe.clientCapabilities` set (spec/daemon.md §Warm pool). */
export const withClientCaps = (params: unknown, caps: Record<string, unknown>) => withTroupeMeta(params, { clientCapabilities: caps });

/**
 * `value` without `_meta.troupe[key]`; a `troupe` (then a `_meta`) left empty goes too, so that a
 * client is sent the object as the child would have made it without the daemon's field.
 */
function withoutTroupeField<T extends { _meta?: unknown }>(value: T, key: string): T {
  const { [key]: _, ...troupe } = troupeMeta(value) ?? {};
  const { troupe: __, ...meta } = value._meta as Record<string, unknown>;
  const _meta = Object.keys(troupe).length ? { ...meta, troupe } : meta;
  const { _meta: ___, ...rest } = value;
  return (Object.keys(_meta).length ? { ...rest, _meta } : rest) as T;
}

/**
 * What the relay adds to a client request for the child: a prompt names its sender, so that the
 * echo of its content goes to the session's other clients only, and its turn (`turnId`, returned
 * too), so that a crash's catch-up can name the sender as well (crash-catch-up.ts); a load asks the child to mark where
 * its replay starts, so that the loading client is sent each update once and in order (UpdateFanOut);
 * a resume asks where the session's log stands (crash-catch-up.ts); both say where the session's
 * index entry stands (`indexedSeq`, asked only for those two: every prompt comes through here), for
 * the child to report what its log holds beyond.
 */
export function tagged(method: string, params: unknown, id: number, indexedSeq: () => number | undefined = () => undefined): { params?: Record<string, unknown>; turnId?: string } {
  if (method === 'session/prompt') {
    const turnId = newTurnId();
    return { params: withTroupeMeta(params, { [PROMPTER]: id, [TURN_ID]: turnId }), turnId };
  }
  if (method !== 'session/load' && method !== 'session/resume') return {};
  const seq = indexedSeq();
  const indexed = seq === undefined ? {} : { [INDEXED_SEQ]: seq };
  if (method === 'session/load') return { params: withTroupeMeta(params, { [MARKS_REPLAY]: true, ...indexed }) };
  return { params: withTroupeMeta(params, { [ASKS_LOG_SEQ]: true, ...indexed }) };
}

/** A resume's answer: the seq its log stood at (LOG_SEQ), if it says, and the answer without it (for the client). */
export function logSeqAnswer(result: unknown): { logSeq?: number; result: unknown } {
  const r = result as { _meta?: unknown } | undefined;
  const logSeq = r ? logSeqOf(r) : undefined;
  return logSeq === undefined ? { result } : { logSeq, result: withoutTroupeField(r!, LOG_SEQ) };
}

/** An update without its PROMPTER field (the daemon's, cut out before other clients are sent it). */
export const withoutPrompter = <T extends { _meta?: unknown }>(update: T): T => withoutTroupeField(update, PROMPTER);

/**
 * The echo of a prompt's content (a `user_message_chunk` whose `_meta.troupe` names the prompt's
 * `prompter`, src/acp/troupe-meta.ts) as a parsed message: without that field, and the prompter,
 * whose connection is not sent it (it shows what it sent already). The child's echo lines are
 * relayed unparsed (update-line.ts cuts the field out); this is for one that reaches the parser.
 */
export function untaggedEcho<M extends { params?: unknown }>(msg: M): { msg: M; prompter: number } | undefined {
  const params = msg.params as { update?: { _meta?: unknown } } | undefined;
  const update = params?.update;
  const prompter = update ? prompterOf(update) : undefined;
  if (!update || prompter === undefined) return undefined;
  return { msg: { ...msg, params: { ...params, update: withoutPrompter(update) } }, prompter };
}
