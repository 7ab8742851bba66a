/**
 * What a session's process is told its clients offer (spec/daemon.md §Relay): the capabilities of
 * the connection that created, revived or woke the session, with files and a terminal as the
 * connections attached to it can serve them (the relay asks each such request of one that does).
 * Until 2026-12-07 a process kept the offer it started with: when the editor that made the session
 * and read files through its buffers went, its reads were asked of a client that reads none, and
 * failed; and an editor that loaded a session another client had made was never asked any.
 */
import type { RelayConnection } from './relay-connection.js';

type Child = { state: string; proc?: { alive: boolean; send(msg: Record<string, unknown>): unknown } };

export class ChildOffer {
  /** The offer the running process was told last (JSON), if any. */
  private told?: string;

  /** `caps`: the creating, reviving or waking connection's; `attached`: the session's connections; `child`: its process. */
  constructor(
    private readonly caps: () => Record<string, unknown>,
    private readonly attached: () => Iterable<RelayConnection>,
    private readonly child: () => Child,
  ) {}

  private of(): Record<string, unknown> {
    const caps = this.caps();
    const open = [...this.attached()].filter((c) => !c.isClosed);
    if (open.length === 0) return caps;
    const served = (method: string) => open.some((c) => c.serves(method));
    const fs = { ...(caps.fs as Record<string, unknown> | undefined), readTextFile: served('fs/read_text_file'), writeTextFile: served('fs/write_text_file') };
    return { ...caps, fs, terminal: served('terminal/create') };
  }

  /** The offer for a process starting now, remembered as told. */
  toStart(): Record<string, unknown> {
    const offer = this.of();
    this.told = JSON.stringify(offer);
    return offer;
  }

  /**
   * Tells the process the offer if it changed, when it serves. Not one at rest (it is told as it
   * starts), nor one starting: its boot tells it at the end (`changed`).
   */
  tell(): void {
    const child = this.child();
    if ((child.state !== 'ready' && child.state !== 'busy') || !child.proc?.alive) return;
    const msg = this.changed();
    if (msg) void child.proc.send(msg);
  }

  /** The notification that tells the process the offer, if it changed since it was told (then remembered as told). */
  changed(): Record<string, unknown> | undefined {
    const offer = this.of();
    const told = JSON.stringify(offer);
    if (told === this.told) return undefined;
    this.told = told;
    return { jsonrpc: '2.0', method: '_troupe/client_capabilities', params: { clientCapabilities: offer } };
  }
}
