/**
 * `scripted/replay` scripts: JSON files (named by TROUPE_SCRIPT) that say exactly what the model
 * answers, so that every path of the session machines can be driven deterministically.
 * Format and examples: spec/scripted-model.md.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { TroupeError } from '../../core/errors.js';
import type { ScriptItem } from './script-items.js';
import { headOf } from '../../core/text-cut.js';

const Item = z.union([
  z.object({ text: z.string() }).strict(),
  z.object({ thought: z.string() }).strict(),
  z.object({ tool_call: z.object({ name: z.string(), input: z.record(z.string(), z.unknown()), id: z.string().optional() }) }).strict(),
  z.object({
    usage: z.object({ input: z.number().int().min(0), output: z.number().int().min(0), cache_read: z.number().int().min(0).optional(), cache_write: z.number().int().min(0).optional() }),
  }).strict(),
  z.object({ delay_ms: z.number().min(0) }).strict(),
  z.object({ hang: z.literal(true) }).strict(),
  z.object({ hold_mb: z.number().int().positive().max(65_536) }).strict(),
  z.object({ context_overflow: z.string() }).strict(),
  z.object({
    error: z.object({
      kind: z.enum(['auth', 'rate_limited', 'quota_exceeded', 'overloaded', 'context_overflow', 'invalid_request', 'model_not_found', 'network', 'aborted']),
      message: z.string(),
      retry_after_ms: z.number().int().min(0).optional(),
    }),
  }).strict(),
  z.object({ stop: z.enum(['end_turn', 'max_tokens', 'refusal']) }).strict(),
]);

const ITEM_KINDS = 'text, thought, tool_call, usage, delay_ms, hang, hold_mb, context_overflow, error, stop (see spec/scripted-model.md)';

const Reply = z.union([
  z.array(Item),
  // A keyed reply answers whenever the latest user text contains `when`, and is never used up.
  z.object({ when: z.string().min(1), items: z.array(Item) }).strict(),
]);

export const ReplayScript = z.object({
  capabilities: z
    .object({
      contextWindow: z.number().int().positive().optional(),
      maxOutputTokens: z.number().int().positive().optional(),
      images: z.boolean().optional(),
      thinking: z.boolean().optional(),
    })
    .strict()
    .optional(),
  /** Text chunks stream word by word with this pause (0: one chunk per text item). */
  chunkDelayMs: z.number().min(0).optional(),
  /** Played before the summary of every compaction request: a pause, a hang or an error, to test compaction's failures. */
  compaction: z.array(Item).optional(),
  replies: z.array(Reply),
});
export type ReplayScript = z.infer<typeof ReplayScript>;

/** Validates a script object; the error names the offending path. */
export function parseReplayScript(value: unknown, origin = 'script'): ReplayScript {
  const parsed = ReplayScript.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // Union failures say only "Invalid input": show the offending value and what was expected.
    let at: unknown = value;
    for (const key of issue.path) at = (at as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey];
    const hint = issue.code === 'invalid_union' ? `expected one item kind of ${ITEM_KINDS}` : issue.message;
    throw new TroupeError('invalid_params', `${origin}: invalid replay script at ${issue.path.join('.') || '(root)'}: ${hint}; got ${headOf(JSON.stringify(at) ?? 'undefined', 200)}`);
  }
  return parsed.data;
}

export function loadReplayScript(path: string): ReplayScript {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TroupeError('invalid_params', `cannot read TROUPE_SCRIPT ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new TroupeError('invalid_params', `TROUPE_SCRIPT ${path} is not JSON: ${(err as Error).message}`);
  }
  return parseReplayScript(json, path);
}

/** Picks replies in order, except that keyed replies answer the user messages that contain their key. */
export class ReplyCursor {
  private next = 0;
  constructor(private readonly script: ReplayScript) {}

  /** `userText`: the user message this call answers (undefined when it answers tool results). */
  take(userText: string | undefined): ScriptItem[] | undefined {
    for (const reply of this.script.replies) {
      if (!Array.isArray(reply) && userText !== undefined && userText.includes(reply.when)) return reply.items as ScriptItem[];
    }
    while (this.next < this.script.replies.length) {
      const reply = this.script.replies[this.next++]!;
      if (Array.isArray(reply)) return reply as ScriptItem[];
    }
    return undefined;
  }

  get used(): number {
    return this.next;
  }
}
