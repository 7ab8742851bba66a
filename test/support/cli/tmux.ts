// A real pseudo-terminal for CLI tests: tmux on its own socket, one detached session per command.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, until } from './cli-harness.js';

export class Tmux {
  private readonly socket = `troupe-cli-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private n = 0;

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /**
   * Runs `troupe ...args` in a 200×50 terminal, in `cwd` with `env`; the pane stays after it exits
   * and shows `EXIT=<code>`. Returns the session name.
   */
  start(dir: string, cwd: string, env: NodeJS.ProcessEnv, args: string[]): string {
    const name = `t${++this.n}`;
    const script = join(dir, `${name}.sh`);
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const exports = Object.entries(env)
      .filter(([k, v]) => v !== undefined && /^[A-Z_][A-Z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${q(v!)}`);
    // The shell must outlive a Ctrl-C meant for troupe (a caught trap is reset to default in children).
    writeFileSync(script, ["trap ':' INT", ...exports, `cd ${q(cwd)}`, `${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')}`, 'echo "EXIT=$?"', 'sleep 600', ''].join('\n'));
    this.tmux('new-session', '-d', '-x', '200', '-y', '50', '-s', name, `sh ${q(script)}`);
    return name;
  }

  /** The pane's text; with `escapes`, its colour sequences too. */
  screen(name: string, escapes = false): string {
    return execFileSync('tmux', ['-L', this.socket, 'capture-pane', '-p', '-J', ...(escapes ? ['-e'] : []), '-S', '-200', '-t', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  keys(name: string, ...keys: string[]): void {
    this.tmux('send-keys', '-t', name, ...keys);
  }

  /** Waits until the screen matches `pattern`; returns the screen. */
  waitFor(name: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    return until(() => {
      let s = '';
      try {
        s = this.screen(name);
      } catch {
        // Not there (yet, or any more): the timeout reports it.
      }
      return pattern.test(s) ? s : undefined;
    }, `${pattern} on the terminal`, timeoutMs).catch((err: Error) => {
      let screen: string;
      try {
        screen = this.screen(name);
      } catch (e) {
        screen = `(no screen: ${(e as Error).message}; sessions: ${this.list()})`;
      }
      throw new Error(`${err.message}\n--- screen ---\n${screen}`);
    });
  }

  private list(): string {
    try {
      return this.tmux('list-sessions').trim();
    } catch (e) {
      return (e as Error).message;
    }
  }

  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
    // tmux leaves its socket file behind.
    const dir = process.env.TMUX_TMPDIR || (process.platform === 'linux' ? '/tmp' : tmpdir());
    rmSync(join(dir, `tmux-${process.getuid?.() ?? 0}`, this.socket), { force: true });
  }
}

/** True when tmux can be run here. */
export function haveTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
