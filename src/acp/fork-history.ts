/**
 * What a fork (ACP session/fork) copies of its source session: its settled history. A turn still
 * running in the source is not copied, nor a compaction under way (/compact's): the fork starts
 * from a settled history. (Until 2026-12-07 a fork made during /compact copied its start, and the
 * fork's log held a compaction that never ended.)
 */
import type { AgentEvent } from '../core/events.js';
import type { SessionEngine } from '../actors/session-engine.js';
import type { FileEventLog } from '../store/index.js';

/** The source's events through `through`, the last seq of its settled history, read a page at a time. */
export async function settledHistory(source: { engine: SessionEngine; log: FileEventLog }): Promise<{ history: AgentEvent[]; through: number }> {
  const conv = source.engine.conversation;
  const unsettled = conv.openTurn ? (conv.turnEnds.at(-1) ?? 1) : conv.openCompaction ? conv.openCompaction.startedSeq - 1 : undefined;
  const through = unsettled ?? source.log.lastSeq();
  const history: AgentEvent[] = [];
  let cursor = 0;
  while (cursor < through) {
    const page = await source.log.readAfter(cursor, { limit: 4096 });
    history.push(...page.events.filter((e) => e.seq <= through));
    cursor = page.cursor;
    if (!page.hasMore) break;
  }
  return { history, through };
}
