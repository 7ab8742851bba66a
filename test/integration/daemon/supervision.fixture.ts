// What the supervision tests share (daemon-crash-recovery, daemon-child-lifecycle, daemon-start-stop):
// the agent's script, whose long replies stream for a while, and the daemon's view of a session's child.
import type { Daemon } from '../../support/daemon.js';

const streaming = (label: string, n: number, ms: number) => Array.from({ length: n }, (_, i) => [{ delay_ms: ms }, { text: `${label}${i} ` }]).flat();
export const script = {
  replies: [
    { when: 'long', items: streaming('a', 40, 25) },
    { when: 'steady', items: streaming('b', 30, 15) },
    { when: 'ping', items: [{ text: 'pong' }] },
  ],
};

export async function childOf(d: Daemon, sessionId: string): Promise<{ pid: number; state: string; restarts: number; wakes: number }> {
  return (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
}
