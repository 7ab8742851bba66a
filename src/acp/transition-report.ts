/**
 * What reports a session's machine transitions to the daemon (supervised children only), handed to
 * the engine as it is made: so the daemon is told the machines' first state too. Added once the
 * engine had started, it missed the session machine's `init`, and a session reopened after its
 * process crashed mid-turn still showed there as running that turn. `stop` ends the reports.
 */
import type { EngineOptions } from '../actors/session-engine.js';
import type { SessionReporter } from './control-channel.js';

export function transitionReport(reporter: SessionReporter | undefined, sessionId: string): EngineOptions & { stop(): void } {
  if (!reporter) return { stop: () => undefined };
  let reporting = true;
  return { inspect: (ev) => reporting && reporter.transition(sessionId, ev), stop: () => void (reporting = false) };
}
