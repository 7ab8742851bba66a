// Runs the real `troupe` binary as child processes against real daemons, each test file with its own
// temporary TROUPE_HOME on 127.0.0.1, and stops every daemon it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../daemon.js';

/** bin/troupe.js (this file compiles to dist/test/support/cli). */
export const BIN = fileURLToPath(new URL('../../../../bin/troupe.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Home {
  dir: string;
  /** A work directory for sessions, with a package.json in it. */
  work: string;
  env: NodeJS.ProcessEnv;
  /** Runs `troupe ...args` to completion. */
  run(args: string[], opts?: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string }): Promise<CliResult>;
  /**
   * Starts `troupe ...args` in the background; `output()` is what it printed so far. `group`: in a
   * process group of its own (pgid = its pid), as a shell runs a foreground job, so that
   * `process.kill(-pid, signal)` signals it the way a terminal's Ctrl-C does.
   */
  start(args: string[], opts?: { env?: NodeJS.ProcessEnv; cwd?: string; group?: boolean }): Background;
  daemonState(): { pid: number; url: string; version: string } | undefined;
  token(): string;
  close(): Promise<void>;
}

export interface Background {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes (a daemon, its spawner, session children) whose TROUPE_HOME is `home` (Linux: /proc). */
export function processesOfHome(home: string): string[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/environ`, 'utf8').includes(`TROUPE_HOME=${home}\0`);
    } catch {
      return false;
    }
  });
}

/**
 * The budget of one CLI suite, a guard against a hang: the whole suite, not each test (node:test's
 * describe timeout). The longest suites take 25–45 s alone and up to 65 s beside the rest of the
 * run on this 2-core machine; a 60 s budget cancelled passing tests there.
 */
export const SUITE_TIMEOUT_MS = 180_000;

/** `waitFor` with the check first, as the CLI tests call it. */
export const until = <T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> => waitFor(what, check, timeoutMs);

/**
 * A fresh home; `env` is given to every command (and so to the daemons they start). `replies` makes
 * the model scripted/replay with that script (spec/scripted-model.md).
 */
export function makeHome(opts: { env?: NodeJS.ProcessEnv; replies?: unknown[] } = {}): Home {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-test-'));
  const extraEnv: NodeJS.ProcessEnv = { ...opts.env };
  if (opts.replies) {
    const path = join(dir, 'script.json');
    writeFileSync(path, JSON.stringify({ chunkDelayMs: 0, replies: opts.replies }));
    Object.assign(extraEnv, { TROUPE_MODEL: 'scripted/replay', TROUPE_SCRIPT: path });
  }
  const work = mkdtempSync(join(tmpdir(), 'troupe-cli-work-'));
  writeFileSync(join(work, 'package.json'), '{\n  "name": "cli-fixture",\n  "private": true\n}\n');
  const base: NodeJS.ProcessEnv = { ...process.env, TROUPE_HOME: dir, TROUPE_DEMO_DELAY_MS: '0', NO_COLOR: '1', ...extraEnv };
  for (const k of ['TROUPE_URL', 'TROUPE_TOKEN', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'OPENAI_BASE_URL']) if (!(k in extraEnv)) delete base[k];
  const started: ChildProcess[] = [];

  const start = (args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; group?: boolean } = {}): Background => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? work, env: { ...base, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: opts.group ?? false });
    started.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout: out, stderr: err })));
    return { child, stdout: () => out, stderr: () => err, done };
  };

  const home: Home = {
    dir,
    work,
    env: base,
    start,
    run(args, opts = {}) {
      const b = start(args, opts);
      b.child.stdin!.end(opts.input ?? '');
      return b.done;
    },
    daemonState() {
      const p = join(dir, 'daemon.json');
      return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : undefined;
    },
    token: () => readFileSync(join(dir, 'token'), 'utf8').trim(),
    async close() {
      for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      // The daemon its state file names, and the one holding the lock (a test may have removed or
      // damaged the state file, and failed before the daemon wrote it again).
      const pids = new Set<number>();
      const state = (() => {
        try {
          return home.daemonState();
        } catch {
          return undefined;
        }
      })();
      if (state) pids.add(state.pid);
      const lock = join(dir, 'daemon.lock');
      const holder = existsSync(lock) ? Number(readFileSync(lock, 'utf8').split(' ')[0]) : NaN;
      if (Number.isInteger(holder) && holder > 0) pids.add(holder);
      for (const pid of pids) {
        if (pid === process.pid || !pidAlive(pid)) continue;
        process.kill(pid, 'SIGTERM');
        await until(() => !pidAlive(pid), 'the daemon to stop', 35_000).catch(() => process.kill(pid, 'SIGKILL'));
      }
      rmSync(dir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    },
  };
  return home;
}

/** Lines of JSON output, each parsed. */
export function jsonLines(text: string): Record<string, any>[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`line ${i + 1} is not JSON: ${l.slice(0, 200)}`);
      }
    });
}

/**
 * `run(item)` for each item, at most `limit` at a time: each item with its result, in the items'
 * order (checked in a loop as if run one after another). For the many independent commands of one
 * test: most of a command's time is its process starting and its round trips, so a few at once take
 * a fraction of the time of one after another.
 */
export async function runEach<T, R>(items: readonly T[], run: (item: T) => Promise<R>, limit = 4): Promise<[T, R][]> {
  const results: [T, R][] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = [items[i]!, await run(items[i]!)];
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
