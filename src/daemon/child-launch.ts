/**
 * How the daemon starts a session's child (spec/daemon.md §Child launch): through bin/troupe.js from
 * the bundle, or with `--snapshot` from the V8 startup snapshot that `npm run build` makes
 * (dist/acp-snapshot/acp.blob) when it fits. A snapshot child skips loading and evaluating its code
 * (a cold start takes about half as long), but Node keeps the whole blob in each child's private
 * memory (about 8 MiB more per idle child), which is why it is not the default. V8
 * accepts a blob only from the Node binary, and with the heap flags, that built it, so the blob is
 * used only when its note says so and it is no older than the compiled code, and not under
 * NODE_OPTIONS (which may add V8 flags). A snapshot child that still dies before saying hello turns
 * the snapshot off for good.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/ports.js';
import { ChildProcessHandle, type ChildLaunch } from '../actors/child-process.actor.js';
import type { ChildSpawner } from '../actors/child-spawner.js';
import { tailOf } from '../core/text-cut.js';

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

interface BlobNote {
  node: string;
  execPath: string;
  arch: string;
  v8Flags: string[];
}

export class ChildLauncher {
  private snapshot: string | undefined;

  constructor(
    private readonly spawner: ChildSpawner,
    private readonly env: NodeJS.ProcessEnv,
    private readonly memoryMb: number,
    private readonly logger: Logger,
    useSnapshot = false,
  ) {
    this.snapshot = useSnapshot ? this.usableSnapshot() : undefined;
    logger.info('children start from', { from: this.snapshot ? 'startup snapshot' : 'bundle', ...(this.snapshot ? { blob: this.snapshot } : {}) });
  }

  /** Whether new children start from the startup snapshot. */
  get fromSnapshot(): boolean {
    return this.snapshot !== undefined;
  }

  /** Rejects with a SpawnError (child-spawner.ts) when no process started. */
  async launch(): Promise<ChildProcessHandle> {
    const blob = this.snapshot;
    const entry = blob ? ['--snapshot-blob', blob, 'acp', '--supervised'] : [root('bin/troupe.js'), 'acp', '--supervised'];
    const spec: ChildLaunch = { command: process.execPath, args: entry, env: this.env, maxOldSpaceMb: this.memoryMb };
    const child = await ChildProcessHandle.start(this.spawner, spec, this.logger);
    if (blob) {
      void child.started.then(async () => {
        if (child.alive) return;
        const exit = await child.whenExited();
        if (exit.signal !== null || exit.code === 0 || this.snapshot !== blob) return;
        this.snapshot = undefined;
        this.logger.warn('a child could not start from the startup snapshot; children start from the bundle from now on', { code: exit.code, stderr: tailOf(exit.stderrTail, 500) });
      });
    }
    return child;
  }

  private usableSnapshot(): string | undefined {
    const blob = root('dist/acp-snapshot/acp.blob');
    if (this.env.NODE_OPTIONS?.trim()) {
      this.logger.info('NODE_OPTIONS is set (it may hold V8 flags the startup snapshot was not built with); using the bundle');
      return undefined;
    }
    try {
      const note = JSON.parse(readFileSync(`${blob}.json`, 'utf8')) as BlobNote;
      const flags = [`--max-old-space-size=${this.memoryMb}`];
      const fits =
        note.node === process.version &&
        note.execPath === process.execPath &&
        note.arch === process.arch &&
        JSON.stringify(note.v8Flags) === JSON.stringify(flags) &&
        statSync(blob).mtimeMs >= statSync(root('dist/src/acp/acp.command.js')).mtimeMs;
      if (!fits) this.logger.info('the startup snapshot does not fit this daemon (Node binary, --child-memory-mb or build); using the bundle', { note, flags });
      return fits ? blob : undefined;
    } catch {
      return undefined;
    }
  }
}
