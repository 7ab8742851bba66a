/**
 * The ACP client's own capabilities, behind troupe's ports: file reads and writes through the
 * editor (its buffers are the truth), commands in the editor's terminals, and permission prompts.
 * Each is used only while the client offers it (client-offer.ts), as of each call.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { isTroupeError } from '../core/errors.js';
import type { PermissionOutcome } from '../core/events.js';
import type { PermissionAsker, ToolRunContext } from '../core/ports.js';
import { FileTooLargeError, type CommandBackend, type CommandOutcome, type CommandRequest, type FileBackend } from '../tools/index.js';
import { toolContent } from './update.projection.js';
import { fitPreview } from '../actors/tool-result-fit.js';
import { fitJson, LINE_PAYLOAD_BYTES } from '../wire/ndjson-limits.js';
import type { ClientOffer } from './client-offer.js';
import { askClient } from './client-answer.js';

type Client = acp.AgentContext;

/** A signal that never aborts. */
const NEVER = new AbortController().signal;

/**
 * A JSON-RPC error the client answered with, carrying the reason it gave: the SDK answers a handler's
 * thrown error as -32603 "Internal error" with the error's message in `data.details`, which the
 * model and the person should see rather than "Internal error".
 */
function withClientReason(err: unknown): unknown {
  if (!(err instanceof Error) || typeof (err as { code?: unknown }).code !== 'number') return err;
  const data = (err as { data?: { details?: unknown; message?: unknown } | null }).data;
  const why = typeof data?.details === 'string' ? data.details : typeof data?.message === 'string' ? data.message : undefined;
  return why && !err.message.includes(why) ? new Error(`${err.message}: ${why}`) : err;
}

/**
 * An answer of the client's that ACP's schema refuses (the SDK checks none of them): failed here, naming
 * what was missing, before any of it reaches a tool call, the session's log or its updates. Until
 * 2026-12-07 a terminal/create answered without a string terminalId was embedded as is, an update
 * the client's SDK drops whole and an event outside spec/events.schema.json in the log, and an
 * answer without its text failed the call with a TypeError's words.
 */
function malformedAnswer(method: string, wanted: string): Error {
  return new Error(`the client answered ${method} without ${wanted}`);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reason a client request failed, as withClientReason words it. */
function reasonOf(err: unknown): string {
  const e = withClientReason(err);
  return e instanceof Error ? e.message : String(e);
}

/**
 * The last `limit` bytes of `text` (from a character's start), or undefined when it has no more: what
 * a client terminal keeps of a command's output (ACP cuts it from the beginning at outputByteLimit),
 * for a client that kept more. Until 2026-12-07 such a client's output went to the model whole, up to
 * the 32 MiB of a message, where the local backend keeps commandOutputBytes (64 KiB).
 */
function lastBytes(text: string, limit: number): string | undefined {
  // A UTF-16 unit is at most 3 bytes in UTF-8: most outputs need no counting.
  if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) return undefined;
  const bytes = Buffer.from(text);
  let start = bytes.length - limit;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString('utf8');
}

/**
 * Reads and writes through the client's buffers while `offered()` says it takes them, else `local`.
 * Each request waits at most `waitMs` for the client's answer (client-answer.ts).
 */
export function clientFileBackend(client: Client, sessionId: string, local: FileBackend, offered: () => Pick<ClientOffer, 'readTextFile' | 'writeTextFile'>, waitMs: number): FileBackend {
  return {
    editorBuffers: () => ({ reads: offered().readTextFile, writes: offered().writeTextFile }),
    async readText(path, window, signal) {
      if (!offered().readTextFile) return local.readText(path, window, signal);
      const params = { sessionId, path, ...(window.line ? { line: window.line } : {}), ...(window.limit ? { limit: window.limit } : {}) };
      const res = await askClient<acp.ReadTextFileResponse>(client, 'fs/read_text_file', params, signal, { waitMs }).catch((err: unknown) => {
        throw withClientReason(err);
      });
      // The SDK does not check what a client answers: one without its text is the read's failure, said
      // so, not a TypeError of troupe's ("Cannot read properties of undefined").
      if (typeof res?.content !== 'string') throw malformedAnswer('fs/read_text_file', 'the file\'s content as a string');
      // The window's maxBytes and maxChars are troupe's, not ACP's: applied to what the client sent.
      if (window.maxBytes !== undefined && Buffer.byteLength(res.content) > window.maxBytes) throw new FileTooLargeError(window.maxBytes);
      return window.maxChars === undefined ? res.content : res.content.slice(0, window.maxChars);
    },
    async writeText(path, content, signal) {
      if (!offered().writeTextFile) return local.writeText(path, content, signal);
      await askClient(client, 'fs/write_text_file', { sessionId, path, content }, signal, { waitMs, after: '; the editor may still make the write' }).catch((err: unknown) => {
        throw withClientReason(err);
      });
    },
  };
}

/**
 * Commands in a client terminal: embedded in the tool call as soon as the terminal exists, killed on
 * timeout or cancel, and always released (the release is not waited for). Its creation and its output
 * are waited for at most `waitMs` each (client-answer.ts); its end, for the command's timeout.
 */
export function clientTerminalBackend(client: Client, sessionId: string, waitMs: number): CommandBackend {
  const sent = (method: string, terminalId: string) => void client.request(method, { sessionId, terminalId }).catch(() => undefined);
  return {
    async run(req: CommandRequest, ctx: ToolRunContext): Promise<CommandOutcome> {
      const params: acp.CreateTerminalRequest = {
        sessionId,
        command: '/bin/sh',
        args: ['-c', req.command],
        cwd: req.cwd,
        env: Object.entries(req.env ?? {}).map(([name, value]) => ({ name, value })),
        outputByteLimit: req.outputByteLimit,
      };
      // A terminal the client makes after troupe stopped waiting (the wait ran out, or a cancel: the
      // create is withdrawn, but an editor may make it all the same) runs the command nobody waits for:
      // released as soon as its id is known (ACP: a release kills a command still running, so no
      // terminal/kill first). Under troupe serve the relay does it (relay-connection.ts).
      const late = (answer: unknown) => {
        const id = isRecord(answer) ? answer.terminalId : undefined;
        if (typeof id === 'string' && id !== '') sent('terminal/release', id);
      };
      const created = await askClient<unknown>(client, 'terminal/create', params, ctx.signal, { waitMs, late, after: '; a terminal it makes later is released' }).catch((err: unknown) => {
        throw withClientReason(err);
      });
      const id = isRecord(created) ? created.terminalId : undefined;
      // Nothing to wait for, kill or release under another id: the command may run on in the client.
      if (typeof id !== 'string' || id === '') throw malformedAnswer('terminal/create', 'a terminalId string');
      const terminal = { sessionId, terminalId: id };
      ctx.update([{ type: 'terminal', terminalId: id }]);
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      try {
        const stop = new Promise<'stopped'>((resolve) => {
          timer = setTimeout(() => ((timedOut = true), resolve('stopped')), req.timeoutMs);
          // A cancel may have come while terminal/create was in flight: no abort event follows it.
          if (ctx.signal.aborted) resolve('stopped');
          else ctx.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
        });
        // The command has started: a failure of the client's terminal from here on is not "could not
        // start" (a rejection, which would drop the terminal from the call) but this command's outcome,
        // the terminal kept in the call and what output there is given to the model with the reason.
        // Until 2026-12-07 a failed terminal/wait_for_exit or terminal/output ended the call as
        // "Could not start the command: Internal error", the client's reason and the terminal gone.
        let failure: string | undefined;
        // Aborted to withdraw the wait (below).
        const waiting = new AbortController();
        const exitStatus = client.request('terminal/wait_for_exit', terminal, { cancellationSignal: waiting.signal });
        const exited = await Promise.race([exitStatus.then(exitStatusOf), stop]).catch((err: unknown) => {
          failure = `the client's terminal failed while the command ran (terminal/wait_for_exit: ${reasonOf(err)}); the command was stopped`;
          return 'failed' as const;
        });
        // The command's end is known (or it was stopped): the timeout has no more say. Until
        // 2026-12-07 it ran on while the output was asked for, and an editor slow to give it made a
        // command that had exited 0, or a terminal that had failed, a timeout "killed".
        clearTimeout(timer);
        // Sent ahead of the output's request, not waited for: the command is over for this call, and a
        // client that never answered terminal/kill held a timed-out call, and its turn, for good
        // (until 2026-12-07; a cancel's turn does not wait for its tool).
        // A stopped command's wait is withdrawn first: troupe waits for it no more, and ACP's way to tell
        // the editor is `$/cancel_request` (the daemon's relay passes it on). Until 2026-12-07 it stayed
        // pending in the editor after the call had ended.
        if (exited === 'stopped') waiting.abort();
        if (exited === 'stopped' || exited === 'failed') sent('terminal/kill', id);
        // Bounded by time only: the output is asked for after a cancel too, for what the call shows.
        let failureCode: CommandOutcome['failureCode'];
        const out = await askClient<acp.TerminalOutputResponse>(client, 'terminal/output', terminal, NEVER, { waitMs }).then(outputOf).catch((err: unknown) => {
          const ended = typeof exited === 'object' ? `the command ended (${exited.exitCode === null || exited.exitCode === undefined ? `signal ${exited.signal ?? 'unknown'}` : `exit code ${exited.exitCode}`}), but ` : '';
          if (failure === undefined) {
            failure = `${ended}the client's terminal did not give its output (terminal/output: ${reasonOf(err)})`;
            if (isTroupeError(err, 'tool_timeout')) failureCode = 'tool_timeout';
          }
          return { output: '', truncated: false, exitStatus: undefined };
        });
        const status = typeof exited === 'object' ? exited : out.exitStatus;
        const kept = lastBytes(out.output, req.outputByteLimit);
        const truncated = out.truncated || kept !== undefined;
        return {
          // A client terminal keeps the end of the output (ACP): the model must know the start is gone,
          // as the local backend's marker tells it.
          output: truncated ? `[... earlier output omitted: the client terminal kept the last ${req.outputByteLimit} bytes ...]\n${kept ?? out.output}` : out.output,
          truncated,
          exitCode: status?.exitCode ?? null,
          signal: status?.signal ?? null,
          timedOut,
          ...(failure ? { failure, ...(failureCode ? { failureCode } : {}) } : {}),
          terminalId: id,
        };
      } finally {
        clearTimeout(timer);
        // Sent now, ahead of the call's final update, but not waited for: the command's outcome is
        // known, and a client that never answers a release held the turn for good (until 2026-12-07).
        sent('terminal/release', id);
      }
    },
  };
}

/**
 * A terminal's exit status as ACP has it: an object whose `exitCode` (an integer) and `signal` (a
 * string) are each null when malformed, as ACP's schema defaults them (`x-deserialize-default-on-error`).
 */
function exitStatusOf(answer: unknown): acp.TerminalExitStatus {
  if (!isRecord(answer)) throw malformedAnswer('terminal/wait_for_exit', 'an exit status');
  const { exitCode, signal } = answer;
  return { exitCode: Number.isSafeInteger(exitCode) ? (exitCode as number) : null, signal: typeof signal === 'string' ? signal : null };
}

/**
 * A terminal's output as ACP has it: `output` a string; `exitStatus` once it exited, left out when
 * malformed. A `truncated` that is not `true` is taken as false (ACP requires it; a client that
 * leaves it out was served before, and nothing of it can break).
 */
function outputOf(answer: acp.TerminalOutputResponse): acp.TerminalOutputResponse {
  if (!isRecord(answer) || typeof answer.output !== 'string') throw malformedAnswer('terminal/output', 'its output as a string');
  return { output: answer.output, truncated: answer.truncated === true, ...(isRecord(answer.exitStatus) ? { exitStatus: exitStatusOf(answer.exitStatus) } : {}) };
}

const OPTION_NAMES: Record<string, (tool: string) => string> = {
  allow_once: () => 'Allow once',
  allow_always: (tool) => `Always allow ${tool}`,
  reject_once: () => 'Reject',
  reject_always: (tool) => `Always reject ${tool}`,
};

/** `session/request_permission`; an unanswered request is withdrawn when `signal` aborts. */
export function clientPermissionAsker(client: Client, sessionId: string): PermissionAsker {
  return {
    async ask(request, signal) {
      const tool = request.toolName;
      // Within the line an ACP client reads (over it, its connection ends): the call's input first
      // (its longest strings as notes when too large), the preview in what is left.
      const { value: rawInput, bytes } = fitJson(request.input, LINE_PAYLOAD_BYTES);
      const content = request.content && fitPreview(request.content, LINE_PAYLOAD_BYTES - bytes);
      try {
        const res: acp.RequestPermissionResponse = await client.request<acp.RequestPermissionResponse, acp.RequestPermissionRequest>(
          'session/request_permission',
          {
            sessionId,
            toolCall: {
              toolCallId: request.toolCallId,
              title: request.title,
              kind: request.kind,
              status: 'pending',
              rawInput,
              // An edit's diff, so that the editor shows what it would change before the answer.
              ...(content ? { content: content.map(toolContent) } : {}),
            },
            options: request.options
              .filter((o) => o in OPTION_NAMES)
              .map((o) => ({ optionId: o, name: OPTION_NAMES[o]!(tool), kind: o as acp.PermissionOptionKind })),
          },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        );
        // The SDK checks no answer of the client's: `{}`, `null` or a `selected` with no optionId is
        // no answer (cancelled, by the caller), said as such rather than as the TypeError reading it
        // would throw (or, for the last, as option "undefined", not offered).
        const outcome: unknown = isRecord(res) ? res.outcome : undefined;
        if (!isRecord(outcome) || !(outcome.outcome === 'cancelled' || (outcome.outcome === 'selected' && typeof outcome.optionId === 'string'))) {
          throw malformedAnswer('session/request_permission', 'an outcome ({"outcome": "selected", "optionId"} or {"outcome": "cancelled"})');
        }
        if (res.outcome.outcome !== 'selected') return 'cancelled';
        // Only what was offered counts: any other id (a typo, an option of another request, or
        // `constructor`, which `in` found on every object) is no answer the person gave.
        const chosen = res.outcome.optionId as PermissionOutcome;
        return request.options.includes(chosen) && Object.hasOwn(OPTION_NAMES, chosen) ? chosen : { unoffered: String(res.outcome.optionId) };
      } catch (err) {
        if (signal.aborted) return 'cancelled';
        throw err;
      }
    },
  };
}
