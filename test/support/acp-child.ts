// A real `troupe acp` child process driven by the SDK's own client over ndJsonStream. Every line
// the agent writes is checked against the ACP schema (./acp-schema.ts) on its way to the client. The client
// side implements permission prompts, editor buffers (fs) and terminals with real processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { acpOutgoingError } from './acp-schema.js';
import { ClientTerminals } from './client-terminals.js';

const BIN = resolve('bin/troupe.js');

export type PermissionAnswer = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' | 'cancelled' | 'hold';

export interface AcpChildOptions {
  /** A scripted/replay script: written to a file and named by TROUPE_SCRIPT (model scripted/replay). */
  script?: unknown;
  home?: string;
  env?: Record<string, string>;
  capabilities?: acp.ClientCapabilities;
  /** How the "person" answers permission prompts, in order (default: allow_once). */
  answers?: PermissionAnswer[];
  /** A command that runs the agent (exec'ing it, so the pid is the agent's), e.g. `['prlimit', '--fsize=65536']`. */
  under?: string[];
  /** Node's own options for the agent, e.g. `['--max-old-space-size=128']` (a daemon child's heap budget). */
  nodeOptions?: string[];
  /**
   * `troupe acp --supervised`, as a daemon runs it: with a control channel on fd 3 (read and
   * dropped here), and taking `_meta.troupe.clientCapabilities` from the request that opens a session.
   */
  supervised?: boolean;
}

export class AcpChild {
  readonly updates: acp.SessionNotification[] = [];
  readonly schemaErrors: string[] = [];
  readonly permissions: acp.RequestPermissionRequest[] = [];
  readonly fsCalls: { method: string; path: string }[] = [];
  /** The terminals this client runs commands in (`calls`: what the agent asked of them). */
  private readonly terminalsServed = new ClientTerminals();
  readonly terminalCalls = this.terminalsServed.calls;
  /** Terminals whose `terminal/wait_for_exit` the agent withdrew (`$/cancel_request`). */
  readonly terminalWaitsWithdrawn = this.terminalsServed.waitsWithdrawn;
  /** Terminal methods the editor fails, with the error its handler throws. */
  readonly terminalFailures = this.terminalsServed.failures;
  /** An editor that never answers `terminal/release`. */
  set terminalReleaseUnanswered(never: boolean) {
    this.terminalsServed.neverAnswersRelease = never;
  }
  /** An editor that never answers `terminal/kill` (nor kills: its release does). */
  set terminalKillUnanswered(never: boolean) {
    this.terminalsServed.neverAnswersKill = never;
  }
  /** How long the editor takes to answer `terminal/output`, in ms (a busy editor). */
  set terminalOutputHeldMs(ms: number) {
    this.terminalsServed.outputHeldMs = ms;
  }
  /** What the editor answers `terminal/create` with, if not a terminal (a malformed answer). */
  set terminalCreateAnswer(answer: unknown) {
    this.terminalsServed.createAnswer = answer;
  }
  /**
   * Requests this editor answers only when the test says (an editor that never answers them, or late):
   * `fs/read_text_file`, `fs/write_text_file`, `terminal/create`, `terminal/output`.
   */
  readonly unanswered = this.terminalsServed.held;
  /** Whether the command of this editor's terminal `id` has ended (killed by a release, or exited). */
  terminalEnded(id: string): boolean {
    return this.terminalsServed.ended(id);
  }
  /** Editor buffers: reads see these before the disk. */
  readonly buffers = new Map<string, string>();
  /** Paths whose fs requests the editor fails, with the error its handler throws. */
  readonly fsFailures = new Map<string, string>();
  /** Paths whose reads the editor answers with this instead of `{content}` (a malformed answer). */
  readonly readAnswers = new Map<string, unknown>();
  stderr = '';
  /** A held permission prompt, answered by the test. */
  held?: (answer: acp.RequestPermissionResponse) => void;
  private readonly methods = new Map<unknown, string>();
  private connection!: acp.ClientConnection;

  private constructor(
    readonly proc: ChildProcess,
    readonly home: string,
    private readonly answers: PermissionAnswer[],
  ) {}

  static start(options: AcpChildOptions = {}): AcpChild {
    const home = options.home ?? mkdtempSync(join(tmpdir(), 'troupe-home-'));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_DEMO_DELAY_MS: '0', ...options.env };
    if (options.script) {
      const path = join(home, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify(options.script));
      env.TROUPE_SCRIPT = path;
      env.TROUPE_MODEL ??= 'scripted/replay';
    }
    const [command, ...args] = [...(options.under ?? []), process.execPath, ...(options.nodeOptions ?? []), BIN, 'acp', ...(options.supervised ? ['--supervised'] : [])];
    const proc = spawn(command!, args, { env, stdio: ['pipe', 'pipe', 'pipe', ...(options.supervised ? ['pipe' as const] : [])] });
    (proc.stdio[3] as Readable | undefined)?.resume();
    const child = new AcpChild(proc, home, [...(options.answers ?? [])]);
    proc.stderr!.on('data', (d) => (child.stderr += d));
    child.connect();
    return child;
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  private connect(): void {
    // Client → agent: remember request methods so responses can be checked against their schema.
    const toChild = new PassThrough();
    // EPIPE once the agent is dead (after crash(), the SDK may still write a cancel): not the test's error.
    this.proc.stdin!.on('error', () => undefined);
    let outBuf = '';
    toChild.on('data', (chunk: Buffer) => {
      outBuf += chunk.toString();
      let nl;
      while ((nl = outBuf.indexOf('\n')) >= 0) {
        const line = outBuf.slice(0, nl);
        outBuf = outBuf.slice(nl + 1);
        const msg = JSON.parse(line);
        if (msg.method && msg.id !== undefined) this.methods.set(msg.id, msg.method);
      }
      this.proc.stdin!.write(chunk);
    });
    // Agent → client: validate every line, then hand it on unchanged.
    const fromChild = new PassThrough();
    let inBuf = '';
    this.proc.stdout!.on('data', (chunk: Buffer) => {
      inBuf += chunk.toString();
      let nl;
      while ((nl = inBuf.indexOf('\n')) >= 0) {
        const line = inBuf.slice(0, nl);
        inBuf = inBuf.slice(nl + 1);
        this.checkLine(line);
      }
      fromChild.write(chunk);
    });
    this.proc.stdout!.on('end', () => fromChild.end());
    const stream = acp.ndJsonStream(Writable.toWeb(toChild) as WritableStream<Uint8Array>, Readable.toWeb(fromChild) as ReadableStream<Uint8Array>);
    this.connection = this.clientApp().connect(stream);
  }

  private checkLine(line: string): void {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.schemaErrors.push(`not JSON on stdout: ${line.slice(0, 200)}`);
      return;
    }
    const err = acpOutgoingError(msg, msg.id !== undefined && !msg.method ? this.methods.get(msg.id) : undefined);
    if (err) this.schemaErrors.push(`${line.slice(0, 300)} → ${err.slice(0, 500)}`);
  }

  private clientApp() {
    const app = acp
      .client()
      .onNotification('session/update', ({ params }) => void this.updates.push(params))
      .onRequest('session/request_permission', ({ params }) => {
        this.permissions.push(params);
        const answer = this.answers.shift() ?? 'allow_once';
        if (answer === 'cancelled') return { outcome: { outcome: 'cancelled' } };
        if (answer === 'hold') return new Promise((resolve) => (this.held = resolve));
        return { outcome: { outcome: 'selected', optionId: answer } };
      })
      .onRequest('fs/read_text_file', ({ params, signal }) => {
        this.fsCalls.push({ method: 'read', path: params.path });
        return this.unanswered.serve('fs/read_text_file', signal, () => {
          if (this.fsFailures.has(params.path)) throw new Error(this.fsFailures.get(params.path));
          if (this.readAnswers.has(params.path)) return this.readAnswers.get(params.path) as acp.ReadTextFileResponse;
          const text = this.buffers.get(params.path) ?? readFileSync(params.path, 'utf8');
          const lines = text.split('\n');
          const start = (params.line ?? 1) - 1;
          return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join('\n') };
        });
      })
      .onRequest('fs/write_text_file', ({ params, signal }) => {
        this.fsCalls.push({ method: 'write', path: params.path });
        return this.unanswered.serve('fs/write_text_file', signal, () => {
          if (this.fsFailures.has(params.path)) throw new Error(this.fsFailures.get(params.path));
          this.buffers.set(params.path, params.content);
          return {};
        });
      });
    return this.terminalsServed.serve(app);
  }

  initialize(capabilities: acp.ClientCapabilities = {}): Promise<acp.InitializeResponse> {
    return this.agent.request('initialize', { protocolVersion: 1, clientCapabilities: capabilities, clientInfo: { name: 'troupe-tests', version: '1' } });
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  }

  updatesFor(sessionId: string, kind?: string): any[] {
    return this.updates.filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind)).map((u) => u.update);
  }

  /** Waits until `predicate` holds over the updates received so far. */
  async until(predicate: () => boolean, what = 'condition', timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Ends stdin and waits for the process to exit; returns its exit code. */
  async close(): Promise<number | null> {
    this.terminalsServed.killAll();
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.proc.exitCode;
    const exited = new Promise<number | null>((r) => this.proc.once('exit', (code) => r(code)));
    this.connection.close();
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  /** kill -9: the process dies mid-whatever, with no chance to flush. */
  async crash(): Promise<void> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGKILL');
    await exited;
    this.connection.close();
  }
}
