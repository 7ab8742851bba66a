// Property: for any sequence of turns (text, tools allowed / rejected / cancelled at the prompt,
// two tools in one step, a cancel mid-stream, a steer, a provider error, an overflow that
// compacts (or, on the first prompt, has nothing to compact)), the states rebuilt from the log equal
// the states the live engine reported through its control channel, transition for transition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { text } from '../../support/engine-harness.js';
import type { ScriptItem } from '../../../src/providers/scripted/script-items.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';
import { recorded, replayed, until } from './live-recorder.js';

type Kind = 'text' | 'allow' | 'reject' | 'cancelAtPermission' | 'twoTools' | 'cancelStreaming' | 'steer' | 'error' | 'overflow';
const KINDS: Kind[] = ['text', 'allow', 'reject', 'cancelAtPermission', 'twoTools', 'cancelStreaming', 'steer', 'error', 'overflow'];

const write = (path: string): ScriptItem => ({ tool_call: { name: 'write_file', input: { path, content: 'x\n' } } });
const list: ScriptItem = { tool_call: { name: 'list_dir', input: { path: '.' } } };

/**
 * The model calls each kind of turn makes, in order (plain replies are used up one per call). An
 * overflow compacts and retries only when there is an earlier turn to summarize: on the session's
 * first prompt (i = 0) it ends the turn at once, with no second call.
 */
function repliesFor(kind: Kind, i: number): ScriptItem[][] {
  switch (kind) {
    case 'text':
      return [[{ text: `answer ${i}` }]];
    case 'allow':
    case 'reject':
      return [[{ text: 'Writing.' }, write(`f${i}.txt`)], [{ text: 'Done.' }]];
    case 'cancelAtPermission':
      return [[write(`f${i}.txt`)]];
    case 'twoTools':
      return [[list, write(`g${i}.txt`)], [{ text: 'Both done.' }]];
    case 'cancelStreaming':
      return [[{ text: 'partial' }, { hang: true }]];
    case 'steer':
      return [[{ text: 'first ' }, { delay_ms: 40 }, { text: 'half' }], [{ text: 'steered' }]];
    case 'error':
      return [[{ error: { kind: 'invalid_request', message: 'bad request' } }]];
    case 'overflow':
      return i === 0 ? [[{ context_overflow: 'too long' }]] : [[{ context_overflow: 'too long' }], [{ text: 'after compaction' }]];
  }
}

test('replayed states equal live states for any sequence of turns', { timeout: 120_000 }, async () => {
  const seed = fcSeed('replay vs live');
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 5 }), async (kinds) => {
      const r = await recorded(kinds.flatMap(repliesFor), { mode: 'default' });
      const { h } = r;
      // Checked once the recorder is finished: a failure before then would leave its socket open.
      const wrong: string[] = [];
      const compacted: number[] = [];
      for (const [i, kind] of kinds.entries()) {
        if (kind === 'allow' || kind === 'twoTools') h.asker['answers'].push('allow_once');
        if (kind === 'reject') h.asker['answers'].push('reject_once');
        const before = h.events.length;
        const p = h.engine.prompt(text(`prompt ${i}`));
        const mine = () => h.events.slice(before);
        if (kind === 'cancelAtPermission') {
          await h.asker.whenAsked();
          h.engine.cancel();
        } else if (kind === 'cancelStreaming') {
          await until(() => mine().some((e) => e.type === 'agent_message_chunk'));
          h.engine.cancel();
        } else if (kind === 'steer') {
          await until(() => mine().some((e) => e.type === 'agent_message_chunk'));
          h.engine.steer(p.turnId, text('guidance'));
        }
        const result = await p.result;
        if (kind === 'overflow') compacted.push(mine().filter((e) => e.type === 'compaction_started').length);
        const failed = kind === 'error' || (kind === 'overflow' && i === 0);
        const want = kind === 'cancelAtPermission' || kind === 'cancelStreaming' ? 'cancelled' : failed ? 'error' : 'end_turn';
        if (result.stopReason !== want) wrong.push(`turn ${i} (${kind}): ${result.stopReason}, not ${want}`);
      }
      const live = await r.finish();
      assert.deepEqual(wrong, []);
      const overflows = [...kinds.entries()].filter(([, k]) => k === 'overflow').map(([i]) => (i === 0 ? 0 : 1));
      assert.deepEqual(compacted, overflows, 'an overflow compacts when, and only when, there is an earlier turn');
      assert.deepEqual(h.schemaErrors, []);
      assert.deepEqual(replayed(h), live, `kinds ${kinds.join(', ')}`);
    }),
    { seed, numRuns: fcRuns(15) },
  );
});
