// The modes of $TROUPE_HOME (spec/event-log.md §0, Modes; spec/daemon.md §Files): a home, a sessions
// directory and session logs found open to others (made under umask 022, by systemd's
// StateDirectory=, a copy) are made private as the daemon (or an editor's `troupe acp`) opens them,
// with a warning; a home shared by design (sticky, another user's, $HOME) is left, and said. Until
// 2026-12-07 all of it was kept as it was found: any user of the machine could read the logs'
// prompts and file contents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, printDaemonIfFailed, tempDir } from '../../support/daemon.js';
import { AcpChild } from '../../support/acp-child.js';

const script = { replies: [{ when: 'hi', items: [{ text: 'hello' }] }] };
const modeOf = (path: string) => (statSync(path).mode & 0o7777).toString(8).padStart(4, '0');

/** A home with one session that has had a turn: made by a daemon, then stopped. */
async function homeWithSession(t: { after(f: () => unknown): void }, home: string): Promise<void> {
  const d = await Daemon.start({ home, script });
  t.after(() => d.stop());
  const c = d.connect('http');
  await c.init();
  const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
  c.close();
  assert.equal(await d.stop(), 0);
}

/** Group and others let in everywhere, as umask 022 or a copy leaves it. */
function openToOthers(home: string, homeMode: number): void {
  writeFileSync(join(home, 'daemon.log'), 'an earlier run\n');
  writeFileSync(join(home, 'chat_history'), 'a prompt typed in troupe chat\n');
  for (const name of ['daemon.log', 'chat_history', 'token']) chmodSync(join(home, name), 0o644);
  for (const name of readdirSync(join(home, 'sessions'))) chmodSync(join(home, 'sessions', name), 0o644);
  chmodSync(join(home, 'sessions'), 0o755);
  chmodSync(home, homeMode);
}

/** The modes of the sessions directory and of every file in it, by name. */
function sessionModes(home: string): Record<string, string> {
  const dir = join(home, 'sessions');
  return Object.fromEntries([['sessions/', modeOf(dir)], ...readdirSync(dir).map((n) => [n, modeOf(join(dir, n))])]);
}

test('a home, its sessions directory and its files found open to others (0755, 0644) are made 0700 and 0600 as the daemon starts, each said', async (t) => {
  const home = join(tempDir(), 'home');
  mkdirSync(home);
  await homeWithSession(t, home);
  openToOthers(home, 0o755);
  // HOME elsewhere: the helper makes it the TROUPE_HOME, and the user's home directory is left as it is.
  const d = await Daemon.start({ home, script, env: { HOME: tempDir() } });
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  const sessions = sessionModes(home);
  assert.ok(Object.keys(sessions).some((n) => n.endsWith('.log')), 'a session log is there');
  assert.deepEqual(
    { home: modeOf(home), 'daemon.log': modeOf(join(home, 'daemon.log')), chat_history: modeOf(join(home, 'chat_history')), token: modeOf(join(home, 'token')), ...sessions },
    { home: '0700', 'daemon.log': '0600', chat_history: '0600', token: '0600', ...Object.fromEntries(Object.keys(sessions).map((n) => [n, n === 'sessions/' ? '0700' : '0600'])) },
  );
  assert.match(d.stderr, /home \(TROUPE_HOME\) holds the sessions, their logs and the token, and was open to others \(mode 0755\): made 0700/);
  assert.match(d.stderr, /\/sessions holds the session logs .* was open to others \(mode 0755\): made 0700, and \d+ files in it that others could read made private \(0600\)/);
  assert.match(d.stderr, /daemon\.log was open to others \(mode 0644\): made 0600/);
  assert.match(d.stderr, /chat_history was open to others \(mode 0644\): made 0600/);
  // It serves as ever.
  assert.equal((await d.api('GET', '/v1/sessions')).json.sessions.length, 1);
});

test('a TROUPE_HOME that is a link to the directory (kept on another disk): the directory and its sessions directory are made 0700', async (t) => {
  const base = tempDir();
  const real = join(base, 'real');
  mkdirSync(real);
  await homeWithSession(t, real);
  openToOthers(real, 0o755);
  const link = join(base, 'home');
  symlinkSync(real, link);
  // The sessions directory a link too, as after moving it elsewhere.
  renameSync(join(real, 'sessions'), join(base, 'sessions'));
  symlinkSync(join(base, 'sessions'), join(real, 'sessions'));
  const d = await Daemon.start({ home: link, script, env: { HOME: tempDir() } });
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  assert.deepEqual([modeOf(real), modeOf(join(base, 'sessions'))], ['0700', '0700']);
  assert.match(d.stderr, /was open to others \(mode 0755\): made 0700\n/);
});

for (const [what, mode, why] of [['sticky, as /tmp', 0o1777, 'shared \\(sticky bit\\)'], ["the user's home directory", 0o755, 'your home directory']] as const) {
  test(`a home shared by design (${what}) is left as it is, and said; troupe's files in it are made private all the same`, async (t) => {
    const home = join(tempDir(), 'shared');
    mkdirSync(home);
    await homeWithSession(t, home);
    openToOthers(home, mode);
    // The helper's daemon has HOME=TROUPE_HOME.
    const d = await Daemon.start({ home, script });
    printDaemonIfFailed(t, d);
    t.after(() => d.stop());
    assert.equal(modeOf(home), mode.toString(8).padStart(4, '0'));
    assert.match(d.stderr, new RegExp(`\\(TROUPE_HOME\\) is open to others \\(mode ${modeOf(home)}\\) and left as it is, being ${why}: .*set TROUPE_HOME to a directory of troupe's own`));
    const sessions = sessionModes(home);
    assert.deepEqual(sessions, Object.fromEntries(Object.keys(sessions).map((n) => [n, n === 'sessions/' ? '0700' : '0600'])));
    assert.deepEqual([modeOf(join(home, 'daemon.log')), modeOf(join(home, 'chat_history')), modeOf(join(home, 'token'))], ['0600', '0600', '0600']);
  });
}

test("an editor's troupe acp makes a home found open to others 0700 and its files 0600 as it starts, and its sessions directory and logs as it opens them, each said", async (t) => {
  const home = join(tempDir(), 'home');
  mkdirSync(home);
  await homeWithSession(t, home);
  openToOthers(home, 0o755);
  // HOME elsewhere (the helper makes it the TROUPE_HOME): the user's home directory is left as it is.
  const a = AcpChild.start({ home, script, env: { HOME: tempDir() } });
  t.after(() => a.close());
  await a.initialize();
  // As it starts, before any session: until 2026-12-07 the home and these files were kept as found.
  assert.deepEqual([modeOf(home), modeOf(join(home, 'daemon.log')), modeOf(join(home, 'chat_history'))], ['0700', '0600', '0600']);
  assert.match(a.stderr, /home \(TROUPE_HOME\) holds the sessions, their logs and the token, and was open to others \(mode 0755\): made 0700/);
  assert.match(a.stderr, /chat_history was open to others \(mode 0644\): made 0600/);
  // Opening a session opens the session index.
  await a.newSession(tempDir());
  const sessions = sessionModes(home);
  assert.deepEqual(sessions, Object.fromEntries(Object.keys(sessions).map((n) => [n, n === 'sessions/' ? '0700' : '0600'])));
  assert.match(a.stderr, /\/sessions holds the session logs .* was open to others \(mode 0755\): made 0700/);
});
