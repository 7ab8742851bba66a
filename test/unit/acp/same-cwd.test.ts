// Which cwd loads or resumes a session (sameCwd, src/acp/session-options.ts), on real directories and
// a real symlink: `<root>/a/link -> <root>/b/c`, so `<root>/a/link/..` is `<root>/b` to the kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sameCwd } from '../../../src/acp/session-options.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { sessionCreated, tempDir, writtenLog } from '../../support/store/store-fixtures.js';

function linkedTree(root: string): { a: string; b: string; viaLink: string } {
  const a = join(root, 'a');
  const b = join(root, 'b');
  mkdirSync(a);
  mkdirSync(join(b, 'c'), { recursive: true });
  symlinkSync(join(b, 'c'), join(a, 'link'));
  return { a, b, viaLink: `${a}/link/..` }; // not join(), which would take the `..` as text
}

test('a cwd with a `..` after a symlink is the directory the kernel reaches', (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const { a, b, viaLink } = linkedTree(dir);
  assert.equal(sameCwd(b, viaLink), true);
  assert.equal(sameCwd(a, viaLink), false);
});

test('a session logged with a `..` cwd (before 2026-12-07) loads with the cwd its index entry lists', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const { viaLink } = linkedTree(dir);
  const sessions = join(dir, 'sessions');
  mkdirSync(sessions);
  mkdirSync(join(dir, 'other'));
  // Sessions made before sessionCwd logged their cwd as given, and the agent that made one folded
  // its events into the index (applyEvents), which keeps a cwd resolved as text.
  const log = await writtenLog(sessions, 'ses_old', [sessionCreated('ses_old', viaLink)]);
  const { events } = await log.readAfter(0);
  await log.close();
  const index = await SessionIndex.open(join(dir, 'other'));
  await index.applyEvents(events);
  const listed = index.get('ses_old')!.cwd;
  // The cwd session/list gives, and the daemon resumes the session with (its index entry's), loads it.
  assert.equal(sameCwd(viaLink, listed), true, `${viaLink} against the listed ${listed}`);
});
