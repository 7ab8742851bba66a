// Lines on stdin over the message limit (src/acp/oversized-lines.ts): for any lines cut into any
// chunks, every line within the limit reaches the SDK exactly as sent, and every line over it is
// answered by what its start says it was, in its place. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { boundedLines, topLevelMembers } from '../../../src/acp/oversized-lines.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('oversized-lines');

async function run(chunks: Uint8Array[], limit: number) {
  const answers: string[] = [];
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  let passed = '';
  const decoder = new TextDecoder();
  for await (const c of boundedLines(input, { answer: (l) => void answers.push(l), warn: () => undefined }, limit) as unknown as AsyncIterable<Uint8Array>) passed += decoder.decode(c, { stream: true });
  return { passed, answers };
}

const message = fc.oneof(
  fc.record({ id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })), method: fc.constantFrom('session/prompt', 'session/list'), pad: fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '😀'), maxLength: 200 }) }),
  fc.record({ id: fc.nat(), result: fc.record({ content: fc.string({ maxLength: 200 }) }) }),
  fc.record({ method: fc.constant('session/cancel'), params: fc.record({ sessionId: fc.string({ maxLength: 200 }) }) }),
);

test('lines within the limit pass as sent, lines over it are answered in their place, however the input is cut', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 8 }), fc.integer({ min: 40, max: 300 }), fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 10 }), async (messages, limit, cuts) => {
      const lines = messages.map((m) => JSON.stringify({ jsonrpc: '2.0', ...m }));
      const bytes = new TextEncoder().encode(lines.map((l) => l + '\n').join(''));
      const chunks: Uint8Array[] = [];
      for (let at = 0, i = 0; at < bytes.length; i++) {
        const n = cuts[i % cuts.length]!;
        chunks.push(bytes.subarray(at, at + n));
        at += n;
      }
      const { passed, answers } = await run(chunks, limit);
      const small = lines.filter((l) => Buffer.byteLength(l) <= limit);
      const big = messages.filter((_, i) => Buffer.byteLength(lines[i]!) > limit);
      // Responses over the limit are answered to the agent (in the passed stream), the rest to the client.
      const toAgent = big.filter((m) => 'result' in m);
      const passedLines = passed.split('\n').filter(Boolean);
      assert.deepEqual(passedLines.filter((l) => !l.includes('payload_too_large')), small);
      assert.deepEqual(passedLines.filter((l) => l.includes('payload_too_large')).map((l) => JSON.parse(l).id), toAgent.map((m) => (m as { id: unknown }).id));
      const toClient = big.filter((m) => !('result' in m));
      assert.deepEqual(answers.map((l) => JSON.parse(l).id), toClient.map((m) => ('id' in m ? m.id : null)));
      for (const a of answers) assert.equal(JSON.parse(a).error.data.code, 'payload_too_large');
    }),
    { seed, numRuns: fcRuns(200) },
  );
});

test('a line of exactly the limit passes; one byte more is answered; a last line without its newline passes', async () => {
  const line = (n: number) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'm', params: { p: 'x'.repeat(n) } });
  const exact = line(10);
  const limit = Buffer.byteLength(exact);
  assert.equal((await run([new TextEncoder().encode(exact + '\n')], limit)).passed, exact + '\n');
  assert.equal((await run([new TextEncoder().encode(line(11) + '\n')], limit)).answers.length, 1);
  assert.equal((await run([new TextEncoder().encode(exact)], limit)).passed, exact);
});

test('a line over the limit whose id is a fraction or an integer past 2^53 is answered with id null, never under a number the client did not send', async () => {
  // As request-gate.ts refuses such an id on a line within the limit (spec/transport.md §1).
  const pad = 'x'.repeat(100);
  const lines = ['1.5', '9007199254740993', '-9007199254740993'].flatMap((id) => [`{"jsonrpc":"2.0","id":${id},"method":"session/list","params":{"p":"${pad}"}}`, `{"jsonrpc":"2.0","id":${id},"result":{"p":"${pad}"}}`]);
  lines.push(`{"jsonrpc":"2.0","id":9007199254740991,"method":"session/list","params":{"p":"${pad}"}}`);
  const { passed, answers } = await run([new TextEncoder().encode(lines.map((l) => l + '\n').join(''))], 60);
  assert.equal(passed, '', 'nothing to the agent: no response answers a request of its under such an id');
  assert.deepEqual(answers.map((a) => /"id":(null|-?[\d.]+)/.exec(a)?.[1]), [...Array(6).fill('null'), '9007199254740991']);
  for (const a of answers) assert.equal(JSON.parse(a).error.data.code, 'payload_too_large');
});

test('topLevelMembers finds the top-level members, never a nested one, and no value cut short', () => {
  const of = (head: string) => Object.fromEntries(topLevelMembers(head));
  assert.deepEqual(of('{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"x'), { jsonrpc: '2.0', id: 7, method: 'session/prompt', params: undefined });
  assert.deepEqual(of('{"params":{"id":3},"id":"a\\"b","method"'), { params: undefined, id: 'a"b' });
  assert.deepEqual(of('{"params":{"id":3,"method":"x"},"jsonrpc":"2.0","method":"sess'), { params: undefined, jsonrpc: '2.0', method: undefined });
  assert.deepEqual(of('{"text":"\\"id\\":5","id" : -2.5e3 }'), { text: '"id":5', id: -2500 });
  assert.deepEqual(of('{"jsonrpc":"2.0","id":5,"result":{"content":"yyyy'), { jsonrpc: '2.0', id: 5, result: undefined });
  assert.deepEqual(of('{"jsonrpc":"2.0","id":12'), { jsonrpc: '2.0', id: undefined }, 'a number the head may have cut');
});
