// An ACP client's terminals (`terminal/*`), run as real processes: what an editor that offers
// `terminal: true` does with a command the agent runs there. Shared by the stdio test client
// (acp-child.ts) and the daemon's HTTP/WebSocket test clients (daemon.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import type * as acp from '@agentclientprotocol/sdk';
import { HeldRequests } from './held-requests.js';

interface Terminal {
  proc: ChildProcess;
  output: string;
  limit?: number;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
}

export class ClientTerminals {
  /** `create <id>`, `kill <id>`, `release <id>`, in the order asked. */
  readonly calls: string[] = [];
  /** Terminals whose `terminal/wait_for_exit` the agent asked, in the order asked. */
  readonly waitsAsked: string[] = [];
  /** Terminals whose `terminal/wait_for_exit` the agent withdrew (`$/cancel_request`), in the order withdrawn. */
  readonly waitsWithdrawn: string[] = [];
  /** Terminal methods this client fails (`terminal/wait_for_exit`, `terminal/output`), with the error its handler throws. */
  readonly failures = new Map<string, string>();
  /** Whether this client never answers `terminal/release` (it still kills the command). */
  neverAnswersRelease = false;
  /** Whether this client never answers `terminal/kill` (nor kills the command: its release does). */
  neverAnswersKill = false;
  /** What this client answers `terminal/create` with instead of a terminal of its own (an editor's malformed answer). */
  createAnswer?: unknown;
  /** How long this client takes to answer `terminal/output` (a busy editor), in ms. */
  outputHeldMs = 0;
  /** Requests this client answers only when the test says (`terminal/create`, `terminal/output`). */
  readonly held = new HeldRequests();
  private readonly terminals = new Map<string, Terminal>();
  /** Terminals the agent released, kept to tell whether their command ended. */
  private readonly released = new Map<string, Terminal>();
  private made = 0;

  /** `prefix`: how this client's terminal ids start (two clients of one daemon tell theirs apart). */
  constructor(private readonly prefix = 'term_') {}

  /** `app` answering the terminal requests. */
  serve(app: acp.ClientApp): acp.ClientApp {
    return app
      .onRequest('terminal/create', ({ params, signal }) => this.held.serve('terminal/create', signal, () => this.create(params)))
      .onRequest('terminal/output', ({ params, signal }) => this.held.serve('terminal/output', signal, () => this.output(params)))
      .onRequest('terminal/wait_for_exit', async ({ params, signal }) => {
        this.waitsAsked.push(params.terminalId);
        signal.addEventListener('abort', () => this.waitsWithdrawn.push(params.terminalId), { once: true });
        // Failed once the command has ended: its whole output is there to be read.
        const exit = await this.terminals.get(params.terminalId)!.exit;
        this.failIfAsked('terminal/wait_for_exit');
        return exit;
      })
      .onRequest('terminal/kill', ({ params }) => {
        this.calls.push(`kill ${params.terminalId}`);
        if (this.neverAnswersKill) return new Promise<never>(() => undefined);
        this.terminals.get(params.terminalId)!.proc.kill('SIGKILL');
        return {};
      })
      .onRequest('terminal/release', ({ params }) => {
        this.calls.push(`release ${params.terminalId}`);
        const t = this.terminals.get(params.terminalId);
        t?.proc.kill('SIGKILL');
        if (t) this.released.set(params.terminalId, t);
        this.terminals.delete(params.terminalId);
        return this.neverAnswersRelease ? new Promise<never>(() => undefined) : {};
      });
  }

  private create(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    if (this.createAnswer !== undefined) return this.createAnswer as acp.CreateTerminalResponse;
    const id = `${this.prefix}${++this.made}`;
    this.calls.push(`create ${id}`);
    const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, stdio: ['ignore', 'pipe', 'pipe'] });
    const t: Terminal = { proc, output: '', limit: params.outputByteLimit ?? undefined, exit: new Promise((r) => proc.on('close', (exitCode, signal) => r({ exitCode, signal }))) };
    proc.stdout!.on('data', (d) => (t.output += d));
    proc.stderr!.on('data', (d) => (t.output += d));
    this.terminals.set(id, t);
    return { terminalId: id };
  }

  private async output(params: acp.TerminalOutputRequest): Promise<acp.TerminalOutputResponse> {
    this.failIfAsked('terminal/output');
    if (this.outputHeldMs > 0) await new Promise((r) => setTimeout(r, this.outputHeldMs));
    const t = this.terminals.get(params.terminalId)!;
    const done = t.proc.exitCode !== null || t.proc.signalCode !== null ? await t.exit : undefined;
    // As ACP has a client do it: over outputByteLimit, the start is dropped and the end kept.
    const bytes = Buffer.from(t.output);
    const truncated = t.limit !== undefined && bytes.length > t.limit;
    const output = truncated ? bytes.subarray(bytes.length - t.limit!).toString('utf8') : t.output;
    return { output, truncated, ...(done ? { exitStatus: done } : {}) };
  }

  /** Whether the command of terminal `id` (one this client made) has ended. */
  ended(id: string): boolean {
    const t = this.terminals.get(id) ?? this.released.get(id);
    return t !== undefined && (t.proc.exitCode !== null || t.proc.signalCode !== null);
  }

  private failIfAsked(method: string): void {
    const why = this.failures.get(method);
    if (why !== undefined) throw new Error(why);
  }

  /** Kills every command still running (the client goes). */
  killAll(): void {
    for (const t of this.terminals.values()) t.proc.kill('SIGKILL');
  }
}
