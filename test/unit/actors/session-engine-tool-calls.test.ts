// The session engine's tool calls end to end on real parts (scripted model, real tools on a temp dir,
// the in-memory log): results too large for the log, the step limit, unknown tools, vendor call ids,
// update_plan, calls the output token limit cut. Every event is checked against spec/events.schema.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ModelProvider, type ModelRequest, type ProviderEvent } from '../../../src/core/provider.js';
import { assertWellFormed, makeHarness, text, writeCall as write } from '../../support/engine-harness.js';

test('an edit of a file too large for its diff to fit the log is recorded: the diff shows the lines that changed, and the model reads the result', async () => {
  const edit = { tool_call: { name: 'edit_file', input: { path: 'big.txt', old_string: 'NEEDLE', new_string: 'FOUND' } } };
  const h = makeHarness([[edit], [{ text: 'edited' }]]);
  const lines = Array.from({ length: 25_000 }, (_, i) => `line ${i} of a file of some 650 KB`);
  lines.splice(12_000, 0, 'NEEDLE');
  const before = lines.join('\n') + '\n';
  writeFileSync(join(h.dir, 'big.txt'), before);
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'big.txt'), 'utf8'), before.replace('NEEDLE', 'FOUND'));
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.ok(done, 'the call is recorded as completed');
  assert.match(done.output ?? '', /^Edited big\.txt: replaced 1 occurrence/);
  const diff = done.content?.find((c) => c.type === 'diff');
  assert.deepEqual(diff, {
    type: 'diff',
    path: join(h.dir, 'big.txt'),
    oldText: lines.slice(11_997, 12_004).join('\n') + '\n',
    newText: lines.slice(11_997, 12_004).join('\n').replace('NEEDLE', 'FOUND') + '\n',
  });
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['edited'], 'the model went on after reading the result');
  assertWellFormed(h);
});

test('a rewrite too large to show even narrowed is recorded with its output and a note instead of the diff', async () => {
  const next = 'b'.repeat(600_000);
  const h = makeHarness([[{ tool_call: { name: 'write_file', input: { path: 'big.txt', content: next } } }], [{ text: 'written' }]]);
  writeFileSync(join(h.dir, 'big.txt'), 'a'.repeat(600_000));
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'big.txt'), 'utf8'), next);
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.match(done?.output ?? '', /^Wrote big\.txt/);
  assert.deepEqual(done?.content, [{ type: 'text', text: `${done?.output}\n[This result is too large for the session log to show; the model read its output.]` }]);
  assertWellFormed(h);
});

test('an output of control characters too large for the log is cut to what fits it in bytes, not characters, and the turn goes on', async () => {
  // 200,000 characters of \u0001 are 1.2 MB of JSON, held twice in the result's event (output and
  // content): cut to 256 Ki characters, the last resort was still over the log's 1 MiB, and the turn
  // failed with event_too_large (until 2026-12-07).
  const h = makeHarness([[{ tool_call: { name: 'read_file', input: { path: 'ctl.bin' } } }], [{ text: 'read' }]]);
  writeFileSync(join(h.dir, 'ctl.bin'), '\u0001'.repeat(200_000));
  const r = await h.engine.prompt(text('go')).result;
  assert.equal(r.stopReason, 'end_turn');
  const done = h.ofType('tool_call_updated').find((e) => e.status === 'completed');
  assert.ok(done, 'the call is recorded as completed');
  const note = '[This result is too large for the session log to show; the model read its output.]';
  assert.match(done.output ?? '', /\u0001… \[cut\]$/);
  assert.ok((done.output ?? '').length > 50_000, 'most of what fits is kept');
  assert.deepEqual(done.content, [{ type: 'text', text: `${done.output}\n${note}` }]);
  assert.ok(Buffer.byteLength(JSON.stringify(done)) <= 1024 * 1024, 'the event fits the log');
  assert.deepEqual(h.ofType('agent_message_chunk').map((e) => e.text), ['read'], 'the model went on after reading the result');
  assertWellFormed(h);
});

test('the step limit gives max_turn_requests', async () => {
  const h = makeHarness([[write('a.txt')], [write('b.txt')], [write('c.txt')]], { limits: { maxSteps: 2 } });
  const r = await h.engine.prompt(text('go')).result;
  assert.deepEqual([r.stopReason, r.steps], ['max_turn_requests', 2]);
  assert.ok(!existsSync(join(h.dir, 'c.txt')), 'no third step ran');
});

test('an unknown tool is a failed call the model reads', async () => {
  const h = makeHarness([[{ tool_call: { name: 'teleport', input: {} } }], [{ text: 'ok' }]]);
  await h.engine.prompt(text('go')).result;
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([failed.status, failed.errorCode], ['failed', 'unknown_tool']);
});

test("an unknown tool's name, the model's text, is its call's title as one printable line", async () => {
  // Until 2026-12-07 the name reached the editor raw as the title: an ESC or a bidi override in it.
  const h = makeHarness([[{ tool_call: { name: 'tele\x1b[2Jport\u202e\nnow', input: {} } }], [{ text: 'ok' }]]);
  await h.engine.prompt(text('go')).result;
  assert.equal(h.ofType('tool_call_started').at(-1)!.title, 'tele [2Jport now');
  assert.equal(h.ofType('tool_call_updated').at(-1)!.errorCode, 'unknown_tool');
});

test('a vendor call id the session already has (calls numbered per response) is made unique: every call is shown once and its result reaches the model', async () => {
  const read = (path: string, id: string) => ({ tool_call: { name: 'read_file', input: { path }, id } });
  const h = makeHarness(
    [
      [read('a.txt', 'call_0')],
      [read('b.txt', 'call_0'), read('a.txt', 'call_1'), read('b.txt', 'call_1')],
      [{ text: 'done' }],
      [read('b.txt', 'call_0')],
      [{ text: 'again' }],
    ],
    { mode: 'bypass' },
  );
  writeFileSync(join(h.dir, 'a.txt'), 'ay\n');
  writeFileSync(join(h.dir, 'b.txt'), 'bee\n');
  assert.equal((await h.engine.prompt(text('read both')).result).stopReason, 'end_turn');
  assert.equal((await h.engine.prompt(text('read b')).result).stopReason, 'end_turn');
  const ids = h.ofType('tool_call_started').map((e) => e.toolCallId);
  assert.equal(ids.length, 5);
  assert.equal(new Set(ids).size, 5, `every call has its own id: ${ids.join(', ')}`);
  assert.equal(ids[0], 'call_0', 'an id not taken yet is the vendor\'s');
  const done = h.ofType('tool_call_updated').filter((e) => e.status === 'completed');
  assert.deepEqual(done.map((e) => e.toolCallId), ids, 'each call ran once');
  const results = h.engine.conversation.messages().flatMap((m) => (m.role === 'tool' ? m.results : []));
  assert.deepEqual(
    results.map((r) => [r.toolCallId, r.output.includes('bee') ? 'b' : r.output.includes('ay') ? 'a' : r.output]),
    ids.map((id, i) => [id, 'ababb'[i]]),
    'the model reads each call\'s own result, none answered as not run',
  );
  assertWellFormed(h);
});

test('one id for two calls of a reply that starts both before it ends either (Chat Completions): each runs under its own name, with its own input', async () => {
  const h = makeHarness(
    [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' }, id: 'call_0' } }, { tool_call: { name: 'write_file', input: { path: 'b.txt', content: 'bee' }, id: 'call_0' } }], [{ text: 'done' }]],
    {
      mode: 'bypass',
      // Every start of the reply first, then the ends, as an OpenAI-compatible stream maps them.
      wrapProvider: (inner): ModelProvider => ({
        id: inner.id,
        capabilities: (m) => inner.capabilities(m),
        async *stream(request, signal) {
          const ends: ProviderEvent[] = [];
          for await (const ev of inner.stream(request, signal)) {
            if (ev.type === 'tool_call_end') {
              ends.push(ev);
              continue;
            }
            if (ev.type === 'stop' || ev.type === 'usage') yield* ends.splice(0);
            yield ev;
          }
          yield* ends;
        },
      }),
    },
  );
  writeFileSync(join(h.dir, 'a.txt'), 'ay\n');
  assert.equal((await h.engine.prompt(text('read a, write b')).result).stopReason, 'end_turn');
  const started = h.ofType('tool_call_started');
  assert.deepEqual(started.map((e) => e.name), ['read_file', 'write_file']);
  assert.deepEqual(started.map((e) => e.input), [{ path: 'a.txt' }, { path: 'b.txt', content: 'bee' }]);
  assert.equal(readFileSync(join(h.dir, 'b.txt'), 'utf8'), 'bee');
  assertWellFormed(h);
});

test('update_plan publishes the complete plan as plan_updated; a malformed plan is a failed call', async () => {
  const entries = [
    { content: 'read the code', priority: 'high', status: 'completed' },
    { content: 'fix the bug', priority: 'medium', status: 'in_progress' },
  ];
  const h = makeHarness([
    [{ tool_call: { name: 'update_plan', input: { entries } } }],
    [{ tool_call: { name: 'update_plan', input: { entries: [{ content: 'x', priority: 'urgent', status: 'pending' }] } } }],
    [{ text: 'ok' }],
  ]);
  await h.engine.prompt(text('plan it')).result;
  const plans = h.ofType('plan_updated');
  assert.equal(plans.length, 1);
  assert.deepEqual(plans[0]!.entries, entries);
  const failed = h.ofType('tool_call_updated').at(-1)!;
  assert.deepEqual([failed.status, failed.errorCode], ['failed', 'invalid_params']);
  assert.match(failed.output ?? '', /priority/);
  assertWellFormed(h);
});

/** The scripted model, with the arguments of the call `id` replaced by `args` (what a vendor's stream cut short gives: its raw text, or none). */
function cutArgs(id: string, args: { raw?: string }) {
  return (inner: ModelProvider): ModelProvider => ({
    ...inner,
    capabilities: inner.capabilities.bind(inner),
    async *stream(request: ModelRequest, signal: AbortSignal) {
      for await (const ev of inner.stream(request, signal)) {
        if (ev.type === 'tool_call_end' && ev.id === id) yield { ...ev, input: {}, ...(args.raw === undefined ? {} : { invalidArgs: args.raw }) } as ProviderEvent;
        else yield ev;
      }
    },
  });
}

for (const [what, raw] of [['cut short', '{"path": "a.txt", "content": "hel'], ['before any argument', undefined]] as const) {
  test(`a call the output token limit cut ${what} (max_tokens) is not run: the model is told why, and goes on`, async () => {
    const call = { tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'hello' }, id: 'call_cut' } };
    let told = '';
    const h = makeHarness([[write('b.txt'), call, { stop: 'max_tokens' }], [{ text: 'I will send it smaller.' }]], {
      wrapProvider: (inner) => {
        const cut = cutArgs('call_cut', raw === undefined ? {} : { raw })(inner);
        return {
          ...cut,
          stream(request, signal) {
            told = JSON.stringify(request.messages.at(-1));
            return cut.stream(request, signal);
          },
        };
      },
    });
    const r = await h.engine.prompt(text('write both')).result;
    assert.equal(r.stopReason, 'end_turn');
    assert.ok(existsSync(join(h.dir, 'b.txt')), 'the whole call before it ran');
    assert.ok(!existsSync(join(h.dir, 'a.txt')), 'the cut call did not run');
    const failed = h.ofType('tool_call_updated').find((e) => e.toolCallId === 'call_cut' && e.status === 'failed');
    assert.match(failed?.output ?? '', /output token limit \(max_tokens\).*incomplete/);
    assert.match(told, /output token limit/, 'the model reads why');
    assertWellFormed(h);
  });
}

test('a whole last call of a reply that then reached max_tokens runs', async () => {
  const h = makeHarness([[write('a.txt'), { stop: 'max_tokens' }], [{ text: 'done' }]]);
  assert.equal((await h.engine.prompt(text('write')).result).stopReason, 'end_turn');
  assert.equal(readFileSync(join(h.dir, 'a.txt'), 'utf8'), 'hello\n');
});
