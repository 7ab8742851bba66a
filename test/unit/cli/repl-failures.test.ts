// The chat loop with piped input counts what failed, turns and slash commands alike: `troupe chat`
// exits 1 on any of them (chat.command.ts). The loop runs here on a fake ACP link whose agent
// refuses what a real one refuses (an unknown mode, a model no provider serves).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureSummary, type FailedLine } from '../../../src/cli/repl.js';
import { play, rpcError } from '../../support/cli/piped-repl.js';

const agentAnswers = (method: string, params: Record<string, unknown>) => {
  if (method === '_troupe/session_state') return {};
  if (method === 'session/set_mode') return params.modeId === 'plan' ? {} : rpcError(`unknown mode '${params.modeId}' (default, accept-edits, plan, bypass)`, 'invalid_params');
  if (method === 'session/set_config_option') return rpcError(`no provider serves '${params.value}'`, 'model_not_found');
  if (method === 'session/prompt') {
    const text = (params.prompt as { text: string }[])[0]!.text;
    return text === 'fail please' ? rpcError('the key was refused', 'provider_auth') : { stopReason: 'end_turn' };
  }
  return {};
};

test('piped chat: a slash command that fails is a failure, as a failed turn is', async () => {
  const r = await play(['/mode nonsense', 'hello', '/model nope/x', '/mode', '/queue', '/mode plan'], agentAnswers);
  // Until 2026-12-06 these were notes only: nothing recorded them, and piped chat exited 0.
  assert.deepEqual(
    r.failures.map((f) => [f.what, f.error.message, (f.error as { code?: string }).code]),
    [
      ['command', "unknown mode 'nonsense' (default, accept-edits, plan, bypass)", 'invalid_params'],
      ['command', "no provider serves 'nope/x'", 'model_not_found'],
      ['command', 'usage: /mode default|accept-edits|plan|bypass', 'usage'],
      ['command', 'usage: /queue TEXT', 'usage'],
    ],
  );
  assert.match(r.printed, /^error: unknown mode 'nonsense'/m);
  assert.match(r.printed, /^error: usage: \/mode default\|accept-edits\|plan\|bypass$/m);
  // The lines after a failed one are played; the good ones fail nothing.
  assert.equal(r.requests.filter((m) => m === 'session/prompt').length, 1);
  assert.equal(r.requests.filter((m) => m === 'session/set_mode').length, 2);
});

test("piped chat: a prompt's failed turn is a turn; an agent's command answered with an error is a command", async () => {
  const r = await play(['fail please', '/mcp__nope__x hi', '/etc/hosts: what is this?'], (method, params) => {
    if (method === 'session/prompt' && (params.prompt as { text: string }[])[0]!.text.startsWith('/mcp__')) return rpcError('There is no command /mcp__nope__x', 'invalid_params');
    return agentAnswers(method, params);
  });
  assert.deepEqual(
    r.failures.map((f) => f.what),
    ['turn', 'command'],
  );
});

test('the summary counts turns and commands, and quotes the first failure spelled out', () => {
  const e = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
  const f = (what: FailedLine['what'], error: Error): FailedLine => ({ what, error });
  assert.equal(failureSummary([]), undefined);
  assert.equal(failureSummary([f('turn', e('the key was refused', 'provider_auth'))]), 'a turn failed, the first: the key was refused (provider_auth)');
  assert.equal(failureSummary([f('command', e("unknown mode 'x'\nmore", 'invalid_params'))]), "a command failed, the first: unknown mode 'x' (invalid_params)");
  assert.equal(
    failureSummary([f('command', e('bad \x1b[2J mode')), f('turn', e('t')), f('turn', e('t')), f('command', e('c'))]),
    '2 turns and 2 commands failed, the first: bad \\x1b[2J mode',
  );
});
