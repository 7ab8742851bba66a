// A real `troupe serve` process in a temporary TROUPE_HOME, and clients for it: the SDK's own HTTP
// and WebSocket ACP clients (unchanged) and a fetch helper for the management API.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import WebSocket from 'ws';
import { procStatFields } from '../../src/core/proc-stat.js';
import { SPAWNER_SCRIPT } from '../../src/actors/child-spawner.js';
import { FEED_ID } from '../../src/daemon/event-mark.js';
import type { ClientTerminals } from './client-terminals.js';

const BIN = resolve('bin/troupe.js');

export interface DaemonOptions {
  args?: string[];
  env?: Record<string, string>;
  /** A scripted/replay script (TROUPE_MODEL=scripted/replay). */
  script?: unknown;
  /** An existing `$TROUPE_HOME` (a daemon started again on another's home); a fresh one by default. */
  home?: string;
  /**
   * Its own process group, as a shell gives a foreground job (a terminal's Ctrl-C and close signal the
   * whole group: `process.kill(-d.proc.pid, …)`). The group is not the test's: kill what is left
   * after the test by `processesOfHome`.
   */
  detached?: boolean;
}

export class Daemon {
  url = '';
  token = '';
  stderr = '';
  private constructor(
    readonly proc: ChildProcess,
    readonly home: string,
  ) {}

  static async start(options: DaemonOptions = {}): Promise<Daemon> {
    const home = options.home ?? mkdtempSync(join(tmpdir(), 'troupe-daemon-'));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_DEMO_DELAY_MS: '0', ...options.env };
    if (options.script) {
      writeFileSync(join(home, 'script.json'), JSON.stringify(options.script));
      env.TROUPE_SCRIPT = join(home, 'script.json');
      env.TROUPE_MODEL ??= 'scripted/replay';
    }
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--pool', '1', ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
    const d = new Daemon(proc, home);
    proc.stderr!.on('data', (x) => (d.stderr += x));
    const deadline = Date.now() + 20_000;
    try {
      for (;;) {
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start: ${d.stderr}`);
        // Its own state file: a daemon killed on this home before left one with its pid and URL.
        const state = existsSync(join(home, 'daemon.json')) ? JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) : undefined;
        if (state?.pid === proc.pid) {
          d.url = state.url;
          d.token = readFileSync(join(home, 'token'), 'utf8').trim();
          return d;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    } catch (err) {
      // A daemon that failed to come up must not outlive the test (it would hold the test process open).
      proc.kill('SIGKILL');
      throw err;
    }
  }

  get headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.token}` };
  }

  /** One gauge or counter of /metrics (without labels). */
  async metric(name: string): Promise<number> {
    const text = await (await fetch(`${this.url}/metrics`, { headers: this.headers })).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`${name} is not in /metrics`);
    return Number(m[1]);
  }

  /** A management API call; returns status and parsed JSON. */
  async api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(this.url + path, {
      method,
      headers: { ...this.headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  }

  /**
   * Waits until the daemon knows every event of the session through `seq` is durable (its children
   * report events once they are). A client sees updates before the log has them, and a crash keeps
   * only what was durable (spec/event-log.md §3): a test that kills a child and then expects the
   * interrupted turn in the history waits for this first.
   */
  async untilDurable(sessionId: string, seq: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.api('GET', `/v1/sessions/${sessionId}`)).json.lastSeq < seq) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for seq ${seq} of ${sessionId} to be durable`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** An ACP client over the SDK's HTTP or WebSocket transport, recording updates. */
  connect(transport: 'http' | 'ws', handlers: ClientHandlers = {}): AcpClient {
    const stream =
      transport === 'http'
        ? createHttpStream(this.url + '/acp', { headers: this.headers })
        : createWebSocketStream(this.url.replace(/^http/, 'ws') + '/acp', { WebSocket: WebSocket as never, headers: this.headers });
    return new AcpClient(stream, handlers);
  }

  /** Pids of this daemon's session children (from the process table): its spawner's children. */
  childPids(): number[] {
    const spawner = this.spawnerPid();
    return spawner === undefined ? [] : childPidsOf(spawner);
  }

  /** The daemon's spawner process (src/actors/spawner.process.ts), once it runs. */
  spawnerPid(): number | undefined {
    return childPidsOf(this.proc.pid!).find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(SPAWNER_SCRIPT);
      } catch {
        return false;
      }
    });
  }

  async stop(): Promise<number | null> {
    if (this.proc.exitCode !== null) return this.proc.exitCode;
    const exited = new Promise<number | null>((r) => this.proc.once('exit', (code) => r(code)));
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
}

export interface ClientHandlers {
  /** `signal` aborts when the agent withdraws the request (`$/cancel_request`). */
  permission?: (req: acp.RequestPermissionRequest, signal: AbortSignal) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  /** Answers `fs/read_text_file` (advertise it with `init({ fs: { readTextFile: true } })`). */
  readTextFile?: (req: acp.ReadTextFileRequest) => acp.ReadTextFileResponse;
  /** Runs `terminal/*` (advertise it with `init({ terminal: true })`). */
  terminals?: ClientTerminals;
}

export class AcpClient {
  readonly updates: acp.SessionNotification[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly permissions: acp.RequestPermissionRequest[] = [];
  readonly connection: acp.ClientConnection;

  constructor(stream: acp.Stream, handlers: ClientHandlers) {
    const app = acp
      .client()
      .onNotification('session/update', ({ params }) => void this.updates.push(params))
      .onNotification('*', ({ method, params }) => void this.notifications.push({ method, params }))
      .onRequest('fs/read_text_file', ({ params }) => {
        if (!handlers.readTextFile) throw new Error('this client does not read files');
        return handlers.readTextFile(params);
      })
      .onRequest('session/request_permission', ({ params, signal }) => {
        this.permissions.push(params);
        return handlers.permission ? handlers.permission(params, signal) : { outcome: { outcome: 'selected', optionId: 'allow_once' } };
      });
    this.connection = (handlers.terminals ? handlers.terminals.serve(app) : app).connect(stream);
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  async init(clientCapabilities: acp.ClientCapabilities = {}): Promise<void> {
    await this.agent.request('initialize', { protocolVersion: 1, clientCapabilities });
  }

  updatesFor(sessionId: string, kind?: string): any[] {
    return this.updates.filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind)).map((u) => u.update);
  }

  /** Seqs of the updates received for a session, in arrival order. */
  seqs(sessionId: string): number[] {
    return this.updatesFor(sessionId).map((u) => u._meta?.troupe?.seq).filter((s): s is number => typeof s === 'number');
  }

  async until(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.connection.close();
  }
}

/** What the helpers below need of a test's context (node:test's `TestContext`). */
export interface TestHooks {
  after(f: () => unknown): void;
  /** False once the test failed, its timeout included (read in an after hook). */
  readonly passed?: boolean;
}

/**
 * After a test that failed (an assertion, or its --test-timeout: a hang), prints on the test's
 * stderr what the daemon logged (its stderr) and its /metrics then (unsent and queued bytes, the
 * loop's stalls): a failure seen once under load, and not reproduced, is then diagnosable from the
 * run's output. Register it before the daemon's stop, so that it still answers /metrics.
 */
export function printDaemonIfFailed(t: TestHooks, d: Daemon): void {
  t.after(async () => {
    if (t.passed !== false) return;
    let metrics: string;
    try {
      const text = await (await fetch(`${d.url}/metrics`, { headers: d.headers, signal: AbortSignal.timeout(5_000) })).text();
      metrics = text.split('\n').filter((line) => line && !line.startsWith('#')).join('\n');
    } catch (err) {
      metrics = `(no answer: ${String(err)})`;
    }
    const log = d.stderr.length > 64 * 1024 ? `…${d.stderr.slice(-64 * 1024)}` : d.stderr;
    process.stderr.write(`--- the test failed; its daemon (pid ${d.proc.pid}, home ${d.home}) logged:\n${log || '(nothing)'}\n--- and its /metrics:\n${metrics}\n---\n`);
  });
}

/** A daemon and one initialized client on `transport`; both stopped after the test, and the daemon's log printed if it failed. */
export async function daemonWithClient(t: TestHooks, transport: 'http' | 'ws', options: DaemonOptions = {}) {
  const d = await Daemon.start(options);
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  const c = d.connect(transport);
  t.after(() => c.close());
  await c.init();
  return { d, c };
}

/**
 * A daemon, one initialized client on `transport`, and a new session of it in `cwd`; all stopped
 * after the test, and the daemon's log printed if it failed.
 */
export async function daemonWithSession(t: TestHooks, transport: 'http' | 'ws', options: DaemonOptions = {}) {
  const { d, c } = await daemonWithClient(t, transport, options);
  const cwd = tempDir();
  const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  return { d, c, sessionId, cwd };
}

/**
 * A daemon and two initialized clients of it, `a` over HTTP and `b` over WebSocket (unless `over`
 * says otherwise), each answering the agent's requests with its `over.handlers` and offering its
 * `over.capabilities`; all stopped after the test, and the daemon's log printed if it failed.
 */
export async function daemonWithClients(
  t: TestHooks,
  options: DaemonOptions = {},
  over: { a?: 'http' | 'ws'; b?: 'http' | 'ws'; handlers?: { a?: ClientHandlers; b?: ClientHandlers }; capabilities?: { a?: acp.ClientCapabilities; b?: acp.ClientCapabilities } } = {},
) {
  const d = await Daemon.start(options);
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  const a = d.connect(over.a ?? 'http', over.handlers?.a);
  const b = d.connect(over.b ?? 'ws', over.handlers?.b);
  t.after(() => (a.close(), b.close()));
  await a.init(over.capabilities?.a);
  await b.init(over.capabilities?.b);
  return { d, a, b };
}

/**
 * A client of `d` on `transport` that reads files through its editor's buffers (each read answered
 * 'in the editor buffer', its path kept in `reads`), initialized saying so, and a new session of it in
 * a fresh directory holding a.txt ('on disk'); the client closed after the test.
 */
export async function editorSession(t: TestHooks, d: Daemon, transport: 'http' | 'ws') {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const reads: string[] = [];
  const editor = d.connect(transport, { readTextFile: (req) => (reads.push(req.path), { content: 'in the editor buffer\n' }) });
  t.after(() => editor.close());
  await editor.init({ fs: { readTextFile: true } });
  const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  return { editor, sessionId, cwd, reads };
}

/**
 * Every `troupe acp` a daemon started with `env` runs dies as it starts (exit 3, saying 'cannot start:
 * broken on purpose' on stderr) while the file `broken` exists: a cause an operator can fix.
 */
export function breakableStart(): { env: Record<string, string>; broken: string } {
  const dir = tempDir();
  const broken = join(dir, 'broken');
  const preload = join(dir, 'die-at-start.mjs');
  writeFileSync(preload, `import { existsSync } from 'node:fs';\nif (process.argv.includes('acp') && existsSync(${JSON.stringify(broken)})) { process.stderr.write('cannot start: broken on purpose\\n'); process.exit(3); }\n`);
  return { env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` }, broken };
}

/** Pids of a process's children, from the process table. */
export function childPidsOf(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    // (A process that ended while we looked has no fields.)
    if (Number(procStatFields(Number(name))?.[1]) === parent) out.push(Number(name));
  }
  return out;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'troupe-ws-'));
}

/** Polls `f` until it gives something truthy, and returns it; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, f: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Whether a process exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  const state = procStatFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** Live processes whose environment names this TROUPE_HOME (a daemon's children, wherever reparented). */
export function processesOfHome(home: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`TROUPE_HOME=${home}`) && processAlive(Number(name))) pids.push(Number(name));
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return pids;
}

/** The seq of an SSE id of `/v1/sessions/:id/events`: `<seq>-<mark>` (src/daemon/event-mark.ts); fails on any other form. */
export function seqOfFeedId(id: string | undefined): number {
  const m = FEED_ID.exec(id ?? '');
  if (!m || m[2] === undefined) throw new Error(`not an event id of a session's feed: ${JSON.stringify(id)}`);
  return Number(m[1]);
}

/** The seqs of the event ids in an events feed's raw SSE text. */
export function feedSeqsOfText(text: string): number[] {
  return [...text.matchAll(/^id: (.*)$/gm)].map((m) => seqOfFeedId(m[1]!));
}
