// Child process of crash.test.ts: appends to a log as fast as it can until it is SIGKILLed, and
// reports on stdout each seq that whenDurable confirmed. Event content is a function of its seq,
// so the parent can check that what survives is a prefix of what was written.
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import type { AgentEventInput } from '../../../src/core/events.js';

const [path, sessionId] = process.argv.slice(2) as [string, string];

/** The event with this seq: a turn boundary every 10th, streaming chunks otherwise. */
export function eventFor(seq: number, sid: string): AgentEventInput {
  return seq % 10 === 0
    ? { type: 'turn_completed', sessionId: sid, turnId: `turn_${Math.floor(seq / 100)}`, stopReason: 'end_turn', steps: seq }
    : { type: 'agent_message_chunk', sessionId: sid, turnId: `turn_${Math.floor(seq / 100)}`, messageId: 'm', text: `t${seq} `.repeat(1 + (seq % 7)) };
}

async function main(): Promise<void> {
  // Never outlive a parent that failed to kill us.
  setTimeout(() => process.exit(3), 10_000).unref();
  const log = await FileEventLog.forSession(path.slice(0, path.lastIndexOf('/')), sessionId, { create: true, durability: { sync: 'group', groupCommitMs: 2 } });
  process.stdout.write(`ready ${log.lastSeq()}\n`);
  const tick = (): void => {
    for (let i = 0; i < 50; i++) {
      const e = log.append(eventFor(log.lastSeq() + 1, sessionId));
      // Turn boundaries (barriers) and now and then a chunk (group commit) are awaited.
      if (e.type === 'turn_completed' || e.seq % 37 === 0) void log.whenDurable(e.seq).then(() => process.stdout.write(`durable ${e.seq}\n`));
    }
    setImmediate(tick);
  };
  tick();
}

if (process.argv[1]?.endsWith('crash-child.js')) void main();
