// Child process of index-catch-up.test.ts: what a daemon does, with its write delay made long enough
// to be killed in deterministically. Two sessions are created and their entries written; then one
// is given a title and a turn, the other is closed, each durable in its log, and the index's write
// of that is left waiting for the delay. It says "ready" and waits to be killed (kill -9).
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import type { AgentEvent, AgentEventInput } from '../../../src/core/events.js';

async function main(): Promise<void> {
  setTimeout(() => process.exit(3), 60_000);
  const [dir, cwd, titled, closed] = process.argv.slice(2) as [string, string, string, string];
  const index = await SessionIndex.open(dir, { writeDelayMs: 10 * 60_000 });
  const logs = new Map<string, FileEventLog>();
  const append = async (id: string, input: AgentEventInput): Promise<AgentEvent> => {
    const log = logs.get(id)!;
    const e = log.append(input);
    await log.whenDurable(e.seq);
    return e;
  };
  for (const id of [titled, closed]) {
    logs.set(id, await FileEventLog.forSession(dir, id, { create: true }));
    // Resolves with the write; flush() below makes it happen.
    void index.applyEvents([await append(id, { type: 'session_created', sessionId: id, cwd, additionalDirectories: [], model: 'scripted/demo', mode: 'default' })]);
  }
  await index.flush();
  // From here on, the index is told and its write waits: a kill -9 now is a crash in the window.
  const later: AgentEvent[] = [];
  later.push(await append(titled, { type: 'session_configured', sessionId: titled, title: 'Renamed after a while', mode: 'plan' }));
  const turn = { sessionId: titled, turnId: 'turn_1' };
  later.push(await append(titled, { type: 'user_message', ...turn, messageId: 'msg_1', content: [{ type: 'text', text: 'hi' }] }));
  later.push(await append(titled, { type: 'turn_started', ...turn, maxSteps: 10 }));
  // More events than an open used to fold (its last 8): the title is well before them.
  for (let i = 0; i < 12; i++) await append(titled, { type: 'agent_message_chunk', ...turn, messageId: 'msg_2', text: `part ${i} ` });
  later.push(await append(titled, { type: 'turn_completed', ...turn, stopReason: 'end_turn', steps: 1 }));
  later.push(await append(closed, { type: 'session_closed', sessionId: closed, reason: 'closed' }));
  void index.applyEvents(later);
  process.stdout.write('ready\n');
}

if (process.argv[1]?.endsWith('index-window-child.js')) void main();
