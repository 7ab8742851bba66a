// One server's list (src/tools/mcp/mcp-lists.ts): one listing at a time, one queued behind it,
// and a listing that fails neither loses the items nor the change said while it ran.
// (The same against a real MCP server: mcp-tools.test.ts, "floods tools/list_changed".)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerList } from '../../../src/tools/mcp/mcp-lists.js';

/** A listing the test answers (or fails) when it wants. */
function held() {
  let answer!: (items: string[]) => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<string[]>((resolve, reject) => ((answer = resolve), (fail = reject)));
  return { list: () => promise, answer, fail };
}

test('a refresh asked while a listing runs waits for it, even when it fails; more asked meanwhile are folded in', async () => {
  const list = new ServerList<string>();
  const first = held();
  const asked: string[] = [];
  const running = list.refresh(() => (asked.push('first'), first.list()));
  const queued = list.refresh(async () => (asked.push('queued'), ['latest']));
  const folded = await Promise.all([list.refresh(async () => (asked.push('folded'), ['never'])), list.refresh(async () => ['never'])]);
  assert.deepEqual(folded, [false, false]);
  await Promise.resolve();
  assert.deepEqual(asked, ['first'], 'nothing else is asked while the first runs');
  first.fail(new Error('listing failed'));
  await assert.rejects(running, /listing failed/);
  assert.equal(await queued, true);
  assert.deepEqual(asked, ['first', 'queued']);
  assert.deepEqual(list.items, ['latest']);
  // With nothing running, a refresh lists at once.
  assert.equal(await list.refresh(async () => ['again']), true);
  assert.deepEqual(list.items, ['again']);
});
