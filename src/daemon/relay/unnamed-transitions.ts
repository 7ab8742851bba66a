/**
 * The machine transitions a session's process reports while the session has no id in the daemon
 * yet (its session/new not yet answered): the child machine's (the child started and became ready
 * for it) and those its process reports of the new session, whose first states come before the
 * answer. Told once the session has its id, so that the daemon has its states from the start;
 * dropped if the session/new fails (its log could not be made durable, the process died in it):
 * told, they named a session nobody was given, and the daemon kept them for its lifetime, one more
 * per failed request.
 */
import type { ControlMessage } from '../../wire/control-messages.js';

type Report = Extract<ControlMessage, { t: 'transition' }>;
export type TellTransition = (sessionId: string, machine: Report['machine'] | 'child', state: string, event: string, at: number) => void;

export class UnnamedTransitions {
  /** The child machine's latest: its state is what the daemon needs, not how it got there. */
  private child?: { state: string; event: string; at: number };
  private reports: Report[] = [];
  private abandoned = false;

  holdChild(state: string, event: string, at: number): void {
    this.child = { state, event, at };
  }

  /** A report of the process (of the session it names); none once the session/new failed. */
  hold(report: Report): void {
    if (!this.abandoned) this.reports.push(report);
  }

  /** The session has its id: what was held is told, the child's first. */
  named(sessionId: string, tell: TellTransition): void {
    const [child, reports] = [this.child, this.reports];
    [this.child, this.reports] = [undefined, []];
    if (child) tell(sessionId, 'child', child.state, child.event, child.at);
    for (const c of reports) tell(c.sessionId, c.machine, c.state, c.event, c.at);
  }

  /** The session/new failed: nothing held is told, nor anything reported from now on. */
  abandon(): void {
    this.abandoned = true;
    [this.child, this.reports] = [undefined, []];
  }
}
