// The offline scripted provider: demo rules, replay scripts, keyed replies, errors and abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScriptedProvider } from '../../../src/providers/scripted/scripted.provider.js';
import { askedTools, DEMO_BANNER } from '../../../src/providers/scripted/demo.model.js';
import { isProviderError, type ModelMessage, type ModelRequest, type ProviderEvent } from '../../../src/core/provider.js';
import { isTroupeError } from '../../../src/core/errors.js';

const ask = (model: string, messages: ModelMessage[], purpose: ModelRequest['purpose'] = 'turn'): ModelRequest => ({
  model,
  system: '',
  messages,
  tools: [],
  purpose,
});
const user = (t: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text: t }] });

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}
const textOf = (evs: ProviderEvent[]) => evs.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

test('demo: plain words become tool calls, in the order asked', () => {
  assert.deepEqual(askedTools('list the files here and read package.json').map((a) => [a.name, a.input]), [
    ['list_dir', { path: '.' }],
    ['read_file', { path: 'package.json' }],
  ]);
  assert.deepEqual(askedTools('read the README').map((a) => a.input), [{ path: 'README.md' }]);
  assert.deepEqual(askedTools('create a file notes.txt with hello world').map((a) => [a.name, a.input]), [
    ['write_file', { path: 'notes.txt', content: 'hello world\n' }],
  ]);
  assert.deepEqual(askedTools('please run `npm test`').map((a) => a.input), [{ command: 'npm test' }]);
  assert.deepEqual(askedTools('search for TODO').map((a) => a.input), [{ pattern: 'TODO' }]);
  assert.deepEqual(askedTools('what is the capital of France?'), []);
});

test('demo: announces itself as an offline demo, streams, and reports tool results', async () => {
  const p = createScriptedProvider({ env: { TROUPE_DEMO_DELAY_MS: '0' } });
  const first = await collect(p.stream(ask('demo', [user('list the files')]), new AbortController().signal));
  assert.ok(textOf(first).startsWith(DEMO_BANNER));
  assert.ok(first.some((e) => e.type === 'tool_call_end' && e.input.path === '.'));
  assert.deepEqual(first.at(-1), { type: 'stop', reason: 'tool_use' });
  const results: ModelMessage = { role: 'tool', results: [{ toolCallId: 'c1', name: 'list_dir', output: 'a.txt\nb/\n', isError: false }] };
  const second = await collect(p.stream(ask('demo', [user('list the files'), results]), new AbortController().signal));
  assert.match(textOf(second), /2 entries/);
  assert.deepEqual(second.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.ok(second.some((e) => e.type === 'usage'), 'usage is always reported');
});

test('demo: counts lines and entries as a person does', async () => {
  const p = createScriptedProvider({ env: { TROUPE_DEMO_DELAY_MS: '0' } });
  const reply = async (name: string, output: string) => {
    const results: ModelMessage = { role: 'tool', results: [{ toolCallId: 'c1', name, output, isError: false }] };
    return textOf(await collect(p.stream(ask('demo', [user('go'), results]), new AbortController().signal)));
  };
  // A final newline ends the last line; it does not start another.
  const one = await reply('read_file', '{"name":"x"}\n');
  assert.match(one, /The file has 1 line\. It reads:\n```\n\{"name":"x"\}\n```/);
  const ten = await reply('read_file', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  assert.match(ten, /The file has 10 lines\. It begins:/);
  assert.match(ten, /line 8\n… \(2 more lines\)/);
  assert.match(await reply('read_file', ''), /The file has 0 lines/);
  assert.match(await reply('list_dir', 'a.txt\n'), /The directory has 1 entry:/);
  // The tool's notes are not entries: an empty directory, and a list cut at its limit.
  assert.equal(await reply('list_dir', '[src is empty]'), 'The directory is empty.\n\nThat is everything the tools returned.');
  assert.match(await reply('list_dir', 'a.txt\nb.txt\n[... 3 more entries not shown]'), /The directory has 5 entries:/);
});

test('replay: replies are consumed in order; keyed replies answer matching prompts; compaction costs no reply', async () => {
  const p = createScriptedProvider({
    script: { replies: [[{ text: 'one' }], { when: 'status', items: [{ text: 'keyed' }] }, [{ text: 'two' }]] },
  });
  const s = new AbortController().signal;
  assert.equal(textOf(await collect(p.stream(ask('replay', [user('a')]), s))), 'one');
  assert.equal(textOf(await collect(p.stream(ask('replay', [user('status?')]), s))), 'keyed');
  assert.match(textOf(await collect(p.stream(ask('replay', [user('b')], 'compaction'), s))), /Summary/);
  assert.equal(textOf(await collect(p.stream(ask('replay', [user('b')]), s))), 'two');
  await assert.rejects(collect(p.stream(ask('replay', [user('c')]), s)), (e) => isProviderError(e, 'invalid_request') && /no reply left/.test(e.message));
});

test('replay: scripted errors and overflows are ProviderErrors of the right kind', async () => {
  const p = createScriptedProvider({
    script: { replies: [[{ context_overflow: 'too long' }], [{ error: { kind: 'rate_limited', message: 'wait', retry_after_ms: 1500 } }]] },
  });
  const s = new AbortController().signal;
  await assert.rejects(collect(p.stream(ask('replay', [user('a')]), s)), (e) => isProviderError(e, 'context_overflow'));
  await assert.rejects(collect(p.stream(ask('replay', [user('a')]), s)), (e) => isProviderError(e, 'rate_limited') && e.retryAfterMs === 1500);
});

test('replay: a hang ends promptly on abort', async () => {
  const p = createScriptedProvider({ script: { replies: [[{ text: 'x' }, { hang: true }]] } });
  const ac = new AbortController();
  const done = collect(p.stream(ask('replay', [user('a')]), ac.signal));
  setTimeout(() => ac.abort(), 5);
  await assert.rejects(done, (e) => isProviderError(e, 'aborted'));
});

test('replay: TROUPE_SCRIPT is read from disk; a bad script is a clear invalid_params error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-script-'));
  writeFileSync(join(dir, 'ok.json'), JSON.stringify({ capabilities: { contextWindow: 1234 }, replies: [[{ text: 'from file' }]] }));
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ replies: [[{ txet: 'typo' }]] }));
  const ok = createScriptedProvider({ env: { TROUPE_SCRIPT: join(dir, 'ok.json') } });
  assert.equal(ok.capabilities('replay').contextWindow, 1234);
  assert.equal(textOf(await collect(ok.stream(ask('replay', [user('a')]), new AbortController().signal))), 'from file');
  const bad = createScriptedProvider({ env: { TROUPE_SCRIPT: join(dir, 'bad.json') } });
  await assert.rejects(collect(bad.stream(ask('replay', [user('a')]), new AbortController().signal)), (e) => isTroupeError(e, 'invalid_params') && /replies\.0/.test(e.message) && /txet/.test(e.message));
});

test('a scripted model that does not exist ends the turn model_not_found, as a vendor 404 naming the model does', async () => {
  const provider = createScriptedProvider({ env: {} });
  await assert.rejects(collect(provider.stream(ask('demo2', [user('hi')]), new AbortController().signal)), (err) => isProviderError(err, 'model_not_found') && /demo2/.test(err.vendorMessage));
});
