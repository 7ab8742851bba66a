/**
 * The interactive loop of `troupe chat` and `troupe attach --interactive`: node:readline on one
 * session. A line typed while a turn runs steers it (`_troupe/steer` with the running turnId from
 * `_troupe/session_state`), or is queued as the next prompt with `/queue`. `/cancel`, `/mode`,
 * `/model`, `/quit`; Ctrl-C cancels a running turn (a second one quits at once), and quits when idle. History persists in
 * $TROUPE_HOME/chat_history. Piped (non-TTY) input is played one turn after another.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type * as acp from '@agentclientprotocol/sdk';
import { makeDirs } from '../store/paths.js';
import { rpcToError, type AcpLink } from './acp-link.js';
import { beforeHastyExit, cancelOnTermination, CliError } from './cli-io.js';
import type { DaemonTarget } from './daemon.client.js';
import type { Ask } from './permission-prompt.js';
import type { Style } from './style.js';
import { printable } from './terminal-text.js';
import { padEndColumns } from './display-width.js';
import type { UpdateRenderer } from './update.renderer.js';

const HELP = `/cancel        cancel the running turn (also: Ctrl-C)
/mode M        switch mode: default, accept-edits, plan, bypass
/model M       switch model (e.g. scripted/demo)
/queue TEXT    send TEXT as the next prompt instead of steering the running turn
/quit          leave (also: Ctrl-D); the session stays on the daemon
Anything else is a prompt; typed while a turn runs, it steers that turn.`;

/** The chat's commands. */
const OWN_COMMANDS = ['cancel', 'help', 'mode', 'model', 'queue', 'quit'];

/** The chat's own commands, then the agent's that the chat does not handle itself (e.g. MCP prompts). */
export function helpText(agentCommands: readonly acp.AvailableCommand[]): string {
  const own = new Set(OWN_COMMANDS);
  const others = agentCommands.filter((c) => !own.has(c.name));
  if (others.length === 0) return HELP;
  const lines = others.map((c) => {
    const usage = `/${c.name}${c.input && 'hint' in c.input ? ` ${c.input.hint}` : ''}`;
    // Names, hints and descriptions are the agent's and its MCP servers' text.
    return printable(`${padEndColumns(usage, 14)} ${c.description}`);
  });
  return `${HELP}\nThe agent's commands (sent as the prompt):\n${lines.join('\n')}`;
}

/**
 * Tab completion of a line that is a command being typed: the chat's and the agent's (e.g. MCP
 * prompts). readline prints the candidates, or writes the one that matches into the line: the
 * agent's names are its (and its MCP servers') text, spelled out as /help shows them (until
 * 2026-12-06 they reached the terminal raw).
 */
export function completeCommand(line: string, agentCommands: readonly acp.AvailableCommand[]): [string[], string] {
  if (!/^\/\S*$/.test(line)) return [[], line];
  const names = [...new Set([...OWN_COMMANDS, ...agentCommands.map((c) => printable(c.name))])].map((n) => `/${n}`);
  return [names.filter((n) => n.startsWith(line)).sort(), line];
}

/** A line of the loop that failed: a prompt's turn, or a slash command (the chat's or the agent's). */
export interface FailedLine {
  what: 'turn' | 'command';
  error: Error;
}

/** A line that is a slash command: `/name` first, with no other slash in it (`/etc/hosts …` is a prompt). */
const isCommandLine = (text: string) => /^\/[^\s/]+(\s|$)/.test(text);

/**
 * What failed, for the chat's last line on stderr: `a turn failed, the first: …`, `2 turns and a
 * command failed, …`. Undefined when nothing failed.
 */
export function failureSummary(failures: readonly FailedLine[]): string | undefined {
  const first = failures[0];
  if (!first) return undefined;
  const count = (what: FailedLine['what']) => {
    const n = failures.filter((f) => f.what === what).length;
    return n === 0 ? undefined : n === 1 ? `a ${what}` : `${n} ${what}s`;
  };
  const code = (first.error as { code?: string }).code;
  const counted = [count('turn'), count('command')].filter(Boolean).join(' and ');
  return `${counted} failed, the first: ${printable(first.error.message.split('\n')[0]!)}${code ? ` (${code})` : ''}`;
}

/**
 * Why a chat loop fed by piped input (a script) failed, if a line of it did; nothing for a person at a
 * terminal, who saw each error and left by choice. `troupe chat` and `troupe attach -i` exit 1 on it.
 */
export function scriptFailure(stdin: { isTTY?: boolean }, failures: readonly FailedLine[]): string | undefined {
  return stdin.isTTY ? undefined : failureSummary(failures);
}

export interface ReplSettings {
  link: AcpLink;
  target: DaemonTarget;
  sessionId: string;
  renderer: UpdateRenderer;
  style: Style;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  historyPath: string;
  /** The readline prompt shown when idle. */
  prompt: string;
}

const HISTORY_MAX = 1000;

function loadHistory(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_MAX).reverse();
  } catch {
    return [];
  }
}

export class Repl {
  private rl!: Interface;
  private running = 0;
  private pendingAnswer: ((line: string | undefined) => void) | undefined;
  private interrupts = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly tty: boolean;
  /** The readline prompt is on screen with nothing printed after it. */
  private promptVisible = false;
  /** Set when the connection to the daemon ended under the loop (the daemon stopped or went away). */
  lost = false;
  /**
   * Set when a second Ctrl-C during a turn left the loop at once, without waiting for the turn
   * (cancelled by the first) to end: as `troupe run`, the command then exits 130.
   */
  interrupted = false;
  /**
   * The lines of this loop that failed (their `error:` notes were printed), in order: a turn, or a
   * command (`/mode nonsense`, a `/model` no provider serves, `/mode` without its argument).
   */
  readonly failures: FailedLine[] = [];

  constructor(private readonly s: ReplSettings) {
    this.tty = Boolean((s.stdin as { isTTY?: boolean }).isTTY);
  }

  /** The line reader has closed (Ctrl-D, /quit, the end of piped input): it reads no answer any more. */
  private closed = false;

  /** Ends the loop (`run()` resolves) and removes its signal and exit handlers; once. */
  private finish: () => void = () => undefined;

  /**
   * Where a permission question is answered: the loop's own line reader on a terminal; none with
   * piped input (its lines are prompts, all read before a turn asks), so the request is rejected.
   */
  get ask(): Ask | undefined {
    return this.tty ? this.askLine : undefined;
  }

  /** Asks a question on the loop's line reader; abandoned (undefined) once the reader has closed. */
  private askLine = (question: string): Promise<string | undefined> =>
    new Promise((resolve) => {
      if (this.closed) return resolve(undefined);
      this.pendingAnswer = resolve;
      this.rl.setPrompt(question);
      this.rl.prompt();
      this.promptVisible = true;
    });

  /**
   * Runs until /quit, Ctrl-D or the end of piped input (after its turns finished), or until the
   * connection to the daemon ends (then `lost` is set): every line after that could only fail.
   */
  run(): Promise<void> {
    // Output that arrives while the prompt is shown (another client's turn) replaces the prompt line.
    this.s.renderer.beforeOutput = () => {
      if (!this.promptVisible) return;
      this.promptVisible = false;
      this.s.stdout.write('\r\x1b[K');
    };
    this.rl = createInterface({
      input: this.s.stdin,
      output: this.s.stdout,
      terminal: this.tty,
      history: this.tty ? loadHistory(this.s.historyPath) : [],
      historySize: HISTORY_MAX,
      completer: (line: string) => completeCommand(line, this.s.renderer.commands),
    });
    return new Promise((resolve) => {
      this.rl.on('line', (line) => {
        this.promptVisible = false;
        if (this.pendingAnswer) {
          const answer = this.pendingAnswer;
          this.pendingAnswer = undefined;
          this.rl.setPrompt(this.s.prompt);
          return answer(line);
        }
        if (line.trim() && this.tty) this.remember(line);
        // Piped input plays one turn after another; a person's typing is handled at once.
        if (this.tty) void this.handle(line);
        else this.chain = this.chain.then(() => this.handle(line, true));
      });
      this.rl.on('SIGINT', () => this.interrupt());
      // On a terminal readline reads Ctrl-C as a key (above); with piped input it is a signal, which
      // would otherwise kill the process and leave the turn running on the daemon.
      const onSignal = () => this.interrupt();
      process.on('SIGINT', onSignal);
      // Terminated, or no one reads stdout any more (EPIPE, its pipe's reader gone): the running turn
      // is cancelled, and the connection ended rather than left to the daemon's --connection-idle-ms
      // (5 min), where it held one of --max-connections (until 2026-12-07 a closed stdout did neither).
      const leaveInHaste = () => Promise.resolve(this.running > 0 ? this.cancel() : undefined).finally(() => this.s.link.close());
      const stopCancellingOnTermination = cancelOnTermination(leaveInHaste);
      beforeHastyExit.add(leaveInHaste);
      // These hold until the loop ends, not until its input does: piped input ends while its last
      // turn may still run, which Ctrl-C, SIGTERM and a closed stdout must still cancel (until
      // 2026-12-07 the process then died of the signal, its turn left running on the daemon).
      this.finish = () => {
        process.removeListener('SIGINT', onSignal);
        stopCancellingOnTermination();
        beforeHastyExit.delete(leaveInHaste);
        resolve();
      };
      this.rl.on('close', () => {
        this.closed = true;
        this.pendingAnswer?.(undefined);
        // Left by a second Ctrl-C: at once, not once the turn the first one cancelled has ended
        // (its cancel may take long: a command that ignores SIGTERM, a daemon slow to answer).
        if (this.interrupted) return this.finish();
        void this.chain.then(() => this.idle()).then(() => this.finish());
      });
      void this.s.link.closed.then(() => this.loseConnection());
      this.showPrompt();
    });
  }

  /** Resolves once no turn of ours is running. */
  private async idle(): Promise<void> {
    while (this.running > 0) await new Promise((r) => setTimeout(r, 50));
  }

  private remember(line: string): void {
    try {
      makeDirs(dirname(this.s.historyPath), 0o700);
      appendFileSync(this.s.historyPath, `${line.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
    } catch {
      // History is a convenience; never fail the chat over it.
    }
  }

  private showPrompt(): void {
    if (this.running === 0 && this.tty) {
      this.rl.setPrompt(this.s.prompt);
      this.rl.prompt();
      this.promptVisible = true;
    }
  }

  private interrupt(): void {
    if (this.pendingAnswer) {
      const answer = this.pendingAnswer;
      this.pendingAnswer = undefined;
      answer(undefined);
    }
    if (this.running === 0) return void this.rl.close();
    this.interrupts++;
    if (this.interrupts > 1) {
      this.interrupted = true;
      // Its input has ended already: the loop only waits for the turn, which it leaves now.
      return void (this.closed ? this.finish() : this.rl.close());
    }
    this.s.renderer.note(this.s.style.yellow('[cancelling… Ctrl-C again to leave]'));
    void this.cancel();
  }

  private cancel(): Promise<void> {
    return this.s.link.agent.notify('session/cancel', { sessionId: this.s.sessionId }).catch(() => undefined);
  }

  private async handle(line: string, wait = false): Promise<void> {
    const text = line.trim();
    if (this.lost) return;
    if (!text) return this.showPrompt();
    const [cmd, ...rest] = text.split(/\s+/);
    const arg = rest.join(' ');
    try {
      if (cmd === '/quit' || cmd === '/exit') return void this.rl.close();
      if (cmd === '/help') return this.s.renderer.note(helpText(this.s.renderer.commands));
      if (cmd === '/cancel') {
        const state = await this.s.link.agent.request<{ turnId?: string }>('_troupe/session_state', { sessionId: this.s.sessionId });
        if (!state.turnId && this.running === 0) return this.s.renderer.note(this.s.style.dim('[no turn is running]'));
        return void (await this.cancel());
      }
      if (cmd === '/mode' || cmd === '/model') {
        // A failure like the others (until 2026-12-06 a note that a script piping it could not tell from success).
        if (!arg) throw new CliError('usage', `usage: ${cmd} ${cmd === '/mode' ? 'default|accept-edits|plan|bypass' : 'provider/model'}`);
        if (cmd === '/mode') await this.s.link.agent.request('session/set_mode', { sessionId: this.s.sessionId, modeId: arg });
        else await this.s.link.agent.request('session/set_config_option', { sessionId: this.s.sessionId, configId: 'model', value: arg });
        // A mode change comes back as a current_mode_update, which the renderer shows.
        if (cmd === '/model') this.s.renderer.note(this.s.style.dim(`[model: ${arg}]`));
        return;
      }
      if (cmd === '/queue') {
        if (!arg) throw new CliError('usage', 'usage: /queue TEXT');
        return await this.promptTurn(arg, wait);
      }
      // Steer whenever the session runs a turn, ours or another client's (attach --interactive).
      if (await this.steer(text)) return;
      await this.promptTurn(text, wait);
    } catch (err) {
      // Until 2026-12-06 a failed command (`/mode nonsense`) was only this note: piped chat exited 0.
      this.fail(isCommandLine(text) ? 'command' : 'turn', err);
    } finally {
      this.showPrompt();
    }
  }

  /**
   * Notes a failed line, on the terminal and in `failures`; a request the transport failed (the daemon
   * went away) ends the loop instead (`lost`), for the command to say once, on stderr.
   */
  private fail(what: FailedLine['what'], err: unknown): void {
    const error = rpcToError(err, this.s.target);
    // Until 2026-12-07 a turn the daemon's going away cut short was this note, on stdout, with the
    // transport's words (`error: lost the connection … (terminated: UND_ERR_SOCKET)`), then counted
    // as a failed turn when the input had ended: the chat's own daemon_unreachable line never came.
    if (error instanceof CliError && error.code === 'daemon_unreachable') return this.loseConnection();
    this.failures.push({ what, error });
    this.s.renderer.note(this.s.style.red(`error: ${printable(error.message)}`));
  }

  /** The connection to the daemon is gone: every line after this could only fail. */
  private loseConnection(): void {
    // Once the loop has ended by itself (/quit, the input's end), the turns it waits for still end
    // under a closed connection, which is as much a loss.
    if (this.lost || this.interrupted) return;
    this.lost = true;
    if (!this.closed) this.rl.close();
  }

  /** Steers the running turn; false when there is none any more (the text then becomes a prompt). */
  private async steer(text: string): Promise<boolean> {
    const state = await this.s.link.agent.request<{ turnId?: string }>('_troupe/session_state', { sessionId: this.s.sessionId });
    const turnId = state.turnId;
    if (!turnId) return false;
    try {
      await this.s.link.agent.request('_troupe/steer', { sessionId: this.s.sessionId, expectedTurnId: turnId, prompt: [{ type: 'text', text }] });
      this.s.renderer.note(this.s.style.dim('[steering the running turn; /queue TEXT sends a new prompt instead]'));
      return true;
    } catch (err) {
      const code = (rpcToError(err, this.s.target) as { code?: string }).code;
      if (code === 'no_active_turn' || code === 'turn_mismatch') return false;
      throw err;
    }
  }

  private async promptTurn(text: string, wait: boolean): Promise<void> {
    if (!text) return;
    this.running++;
    this.interrupts = 0;
    this.s.renderer.waiting();
    const turn = this.s.link.agent
      .request('session/prompt', { sessionId: this.s.sessionId, prompt: [{ type: 'text', text }] })
      .then((r: acp.PromptResponse) => {
        this.s.renderer.done();
        if (r.stopReason !== 'end_turn') this.s.renderer.note(this.s.style.dim(`[${printable(r.stopReason)}]`));
      })
      .catch((err: unknown) => {
        // Left in haste: the turn ends under a closed connection, which is no failure to report.
        if (this.interrupted) return;
        this.s.renderer.done();
        // An agent's command (`/compact`, `/mcp__server__prompt`) is answered as a prompt.
        this.fail(isCommandLine(text) ? 'command' : 'turn', err);
      })
      .finally(() => {
        this.running--;
        this.showPrompt();
      });
    if (wait) await turn;
  }
}
