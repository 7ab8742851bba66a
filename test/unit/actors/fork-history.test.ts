// A fork's conversation is its source's: the events copied into it are renumbered, and what points
// at a seq (a compaction's summary, through the event it covers) must point at the same event there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSessionId } from '../../../src/core/ids.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { tempDir } from '../../support/store/store-fixtures.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { makeHarness, text } from '../../support/engine-harness.js';

test("a fork of a compacted session whose directories changed before the compaction sends the model the source's conversation", async (t) => {
  const h = makeHarness([[{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }], [{ text: 'd' }]]);
  t.after(() => h.engine.dispose());
  await h.engine.prompt(text('one')).result;
  // A load that names other directories logs them alone; a fork does not inherit them (ACP), so it copies nothing of it.
  h.engine.configure({ additionalDirectories: [mkdtempSync(join(tmpdir(), 'troupe-extra-'))] });
  for (const p of ['two', 'three', 'four']) await h.engine.prompt(text(p)).result;
  assert.equal(await h.engine.compactNow(), 'completed');
  assert.ok(h.ofType('compaction_completed')[0]!.throughSeq, 'older turns were summarized');

  const sessionId = newSessionId();
  const deps = { ...(h.engine as any).core.deps, log: new MemoryEventLog({ sessionId }) };
  const fork = SessionEngine.create(deps, { sessionId, cwd: h.dir, model: 'scripted/replay', mode: 'bypass' }, h.events);
  t.after(() => fork.dispose());
  assert.deepEqual(fork.conversation.messages(), h.engine.conversation.messages());
});

test('a fork writes each content part it copies to its file before it copies the next: the writer never holds a large history whole', async (t) => {
  const h = makeHarness([[{ text: 'seen' }]]);
  t.after(() => h.engine.dispose());
  await h.engine.prompt(text('y'.repeat(6 * 2 ** 20))).result;
  assert.ok(h.ofType('content_part').length >= 6);

  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const sessionId = newSessionId();
  const log = await FileEventLog.create(join(dir, `${sessionId}.log`), { sessionId });
  const append = log.append.bind(log);
  const unwritten: number[] = [];
  log.append = (input) => {
    if (input.type === 'content_part') unwritten.push(log.lastSeq() - log.stats().writtenSeq);
    return append(input);
  };
  const fork = SessionEngine.create({ ...(h.engine as any).core.deps, log }, { sessionId, cwd: h.dir, model: 'scripted/replay', mode: 'bypass' }, h.events);
  t.after(() => fork.dispose());
  // Events not yet written as each part is appended: none after the first part (the one before is in the file).
  assert.ok(unwritten.length >= 6);
  assert.deepEqual(unwritten.slice(1).filter((n) => n > 0), [], `events unwritten at each part: ${unwritten.join(' ')}`);
  assert.deepEqual(fork.conversation.messages(), h.engine.conversation.messages());
});
