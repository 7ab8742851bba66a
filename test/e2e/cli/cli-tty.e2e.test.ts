// The interactive CLI in a real pseudo-terminal (tmux): the permission prompt of `troupe run`,
// Ctrl-C cancelling a turn, and `troupe chat` with steering, /cancel, /quit and its history file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, makeHome, until, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { haveTmux, Tmux } from '../../support/cli/tmux.js';

// tmux is installed by .ci/run; without it this suite cannot drive a terminal at all.
assert.ok(haveTmux(), 'tmux is required for the terminal tests (apt-get install -y tmux)');

describe('troupe on a terminal', { timeout: SUITE_TIMEOUT_MS }, () => {
  let demo: Home;
  let scripted: Home;
  const tmux = new Tmux();
  before(() => {
    demo = makeHome();
    scripted = makeHome({
      replies: [
        { when: 'please hang', items: [{ text: 'Working on it.' }, { hang: true }] },
        { when: 'hello', items: [{ text: 'Hello there.' }] },
        { when: 'write later', items: [{ text: 'Soon.' }, { delay_ms: 1500 }, { tool_call: { name: 'write_file', input: { path: 'later.txt', content: 'later' } } }] },
        // What follows the tool's result.
        [{ text: 'Left alone.' }],
      ],
    });
  });
  after(async () => {
    tmux.close();
    await Promise.all([demo.close(), scripted.close()]);
  });

  test('run asks before writing and before running a command: allow once, then reject', async () => {
    const t = tmux.start(demo.dir, demo.work, demo.env, ['run', 'run `touch ran.txt` and create a file a.txt with one']);
    // The diff of the write comes with the question, before any answer.
    await tmux.waitFor(t, /Allow Write a\.txt\?[\s\S]*a\.txt\n\s+\+ one\n[\s\S]*\[y\] allow once {2}\[a\] allow always {2}\[n\] reject/);
    tmux.keys(t, 'y', 'Enter');
    await tmux.waitFor(t, /Allow Run `touch ran\.txt`\?/);
    tmux.keys(t, 'n', 'Enter');
    const screen = await tmux.waitFor(t, /EXIT=\d+/);
    assert.match(screen, /EXIT=0/);
    assert.equal(readFileSync(join(demo.work, 'a.txt'), 'utf8'), 'one\n');
    assert.equal(existsSync(join(demo.work, 'ran.txt')), false, 'the rejected command did not run');
    assert.match(screen, /✓ Write a\.txt \(edit, completed\)/);
    assert.match(screen, /\+ one/, 'the diff is shown');
    assert.match(screen, /✗ Run `touch ran\.txt` \(execute, failed\)/);
  });

  test('Ctrl-D or Ctrl-C at a permission question ends its line: what follows starts on a line of its own', async () => {
    const eof = tmux.start(demo.dir, demo.work, demo.env, ['run', 'run `touch eof.txt`']);
    await tmux.waitFor(eof, /Allow Run `touch eof\.txt`\?[\s\S]*always reject ›/);
    tmux.keys(eof, 'C-d');
    const eofScreen = await tmux.waitFor(eof, /EXIT=\d+/);
    assert.match(eofScreen, /always reject › *\n✗ Run `touch eof\.txt` \(execute, failed\)/);
    assert.match(eofScreen, /EXIT=0/);
    const intr = tmux.start(demo.dir, demo.work, demo.env, ['run', 'run `touch intr.txt`']);
    await tmux.waitFor(intr, /Allow Run `touch intr\.txt`\?[\s\S]*always reject ›/);
    tmux.keys(intr, 'C-c');
    const intrScreen = await tmux.waitFor(intr, /EXIT=\d+/);
    assert.match(intrScreen, /always reject › *\n\[cancelling… press Ctrl-C again to quit\]/);
    assert.match(intrScreen, /EXIT=130/);
    assert.equal(existsSync(join(demo.work, 'eof.txt')) || existsSync(join(demo.work, 'intr.txt')), false);
  });

  test("run - on a terminal reads the prompt until Ctrl-D, then asks nothing: its stdin is used up", async () => {
    const t = tmux.start(demo.dir, demo.work, demo.env, ['run', '-']);
    await tmux.waitFor(t, /troupe run: reading the prompt from stdin \(Ctrl-D ends it\)/);
    tmux.keys(t, 'create a file typed.txt with hi', 'Enter', 'C-d');
    const screen = await tmux.waitFor(t, /EXIT=\d+/);
    assert.match(screen, /EXIT=0/);
    assert.match(screen, /\[denied Write typed\.txt: no terminal to ask; pass --yes to allow\]/);
    assert.doesNotMatch(screen, /Allow Write/);
    assert.equal(existsSync(join(demo.work, 'typed.txt')), false);
    // With no prompt at all, a terminal's stdin is not waited on.
    const bare = tmux.start(demo.dir, demo.work, demo.env, ['run']);
    assert.match(await tmux.waitFor(bare, /EXIT=\d+/), /troupe run: missing the prompt \(try 'troupe run --help'\)\nEXIT=2/);
  });

  test('Ctrl-C cancels the running turn and exits 130', async () => {
    const t = tmux.start(scripted.dir, scripted.work, scripted.env, ['run', 'please hang']);
    await tmux.waitFor(t, /Working on it\./);
    tmux.keys(t, 'C-c');
    const screen = await tmux.waitFor(t, /EXIT=\d+/);
    assert.match(screen, /cancelling/);
    assert.match(screen, /\[cancelled · session ses_/);
    assert.match(screen, /EXIT=130/);
  });

  test('colours on a terminal, none with --no-color or NO_COLOR', async () => {
    const env = { ...demo.env };
    delete env.NO_COLOR;
    const coloured = tmux.start(demo.dir, demo.work, env, ['run', 'hello']);
    const plain = tmux.start(demo.dir, demo.work, env, ['run', '--no-color', 'hello']);
    const plainEnv = tmux.start(demo.dir, demo.work, demo.env, ['run', 'hello']);
    for (const t of [coloured, plain, plainEnv]) await tmux.waitFor(t, /EXIT=0/);
    // Thoughts are dimmed (SGR 2) on a terminal.
    assert.match(tmux.screen(coloured, true), /\x1b\[2m[^\x1b]*No file or command request/);
    assert.doesNotMatch(tmux.screen(plain, true), /\x1b\[2m/);
    assert.doesNotMatch(tmux.screen(plainEnv, true), /\x1b\[2m/);
  });

  test('daemon status: its live sessions dimmed on a terminal, no colour with --no-color', async () => {
    // A live session for status to list (its child stays until --idle-ms).
    assert.equal((await demo.run(['run', 'hello'])).code, 0);
    const env = { ...demo.env };
    delete env.NO_COLOR;
    const coloured = tmux.start(demo.dir, demo.work, env, ['daemon', 'status']);
    const plain = tmux.start(demo.dir, demo.work, env, ['daemon', 'status', '--no-color']);
    for (const t of [coloured, plain]) await tmux.waitFor(t, /EXIT=0/);
    assert.match(tmux.screen(coloured, true), /\x1b\[2m\s+ses_\w+/);
    // Until 2026-12-06 the option was accepted and ignored.
    assert.match(tmux.screen(plain, true), /^\s+ses_\w+/m);
    assert.doesNotMatch(tmux.screen(plain, true), /\x1b\[2m/);
  });

  test('chat: a prompt, a steer while the turn runs, /cancel, /quit, history', async () => {
    const t = tmux.start(scripted.dir, scripted.work, scripted.env, ['chat']);
    await tmux.waitFor(t, /new session ses_\w+/);
    tmux.keys(t, 'hello', 'Enter');
    await tmux.waitFor(t, /Hello there\./);
    tmux.keys(t, 'please hang', 'Enter');
    await tmux.waitFor(t, /Working on it\./);
    tmux.keys(t, 'go left', 'Enter');
    await tmux.waitFor(t, /steering the running turn/);
    tmux.keys(t, '/cancel', 'Enter');
    await tmux.waitFor(t, /\[cancelled\]/);
    tmux.keys(t, '/quit', 'Enter');
    const screen = await tmux.waitFor(t, /EXIT=\d+/);
    assert.match(screen, /EXIT=0/);
    const history = readFileSync(join(scripted.dir, 'chat_history'), 'utf8');
    assert.deepEqual(history.trim().split('\n'), ['hello', 'please hang', 'go left', '/cancel', '/quit']);
  });

  test('chat left with Ctrl-D while its turn runs: a permission request the turn makes then is withdrawn, not asked where no answer is read', async () => {
    const t = tmux.start(scripted.dir, scripted.work, scripted.env, ['chat']);
    await tmux.waitFor(t, /new session ses_\w+/);
    tmux.keys(t, 'write later', 'Enter');
    await tmux.waitFor(t, /Soon\./);
    tmux.keys(t, 'C-d');
    const screen = await tmux.waitFor(t, /EXIT=\d+/);
    assert.match(screen, /Left alone\./, 'the turn went on without the write');
    assert.match(screen, /EXIT=0/);
    assert.equal(existsSync(join(scripted.work, 'later.txt')), false);
  });

  test('attach --interactive steers and cancels a turn that another process drives', async () => {
    const first = await scripted.run(['run', '--json', 'hello']);
    const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
    const driver = scripted.start(['run', '--json', '--session', sessionId, 'please hang']);
    await until(() => driver.stdout().includes('Working on it.'), 'the driven turn to run');
    const t = tmux.start(scripted.dir, scripted.work, scripted.env, ['attach', sessionId, '--interactive']);
    await tmux.waitFor(t, /attached to ses_/);
    tmux.keys(t, 'go right', 'Enter');
    await tmux.waitFor(t, /steering the running turn/);
    await until(() => jsonLines(driver.stdout()).some((l) => l.update?.sessionUpdate === 'user_message_chunk' && l.update.content.text === 'go right'), 'the driver to see the steer');
    tmux.keys(t, '/cancel', 'Enter');
    const done = await driver.done;
    assert.equal(done.code, 130, 'the driver saw its turn cancelled');
    tmux.keys(t, 'C-c');
    assert.match(await tmux.waitFor(t, /EXIT=\d+/), /EXIT=0/);
  });
});
