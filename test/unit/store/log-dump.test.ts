import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync } from 'node:fs';
import { sessionsDir } from '../../../src/store/paths.js';
import { chunk, sessionCreated, tempDir, turnCompleted, writtenLog } from '../../support/store/store-fixtures.js';
import { BIN } from '../../support/cli/cli-harness.js';
import { runLogDump as run } from '../../support/cli/log-dump-run.js';
import { boundByFileModes, canDropFileOverride } from '../../support/cli/unprivileged.js';

test('log dump by session id (resolved under TROUPE_HOME) prints JSON lines equal to the stored events', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const sessions = sessionsDir(dir);
    mkdirSync(sessions, { recursive: true });
    const log = await writtenLog(sessions, 'ses_dump', [sessionCreated('ses_dump', '/w'), chunk('ses_dump', 'hello "world"'), turnCompleted('ses_dump')]);
    const stored = (await log.readAfter(0)).events;
    const env = { TROUPE_HOME: dir };
    const j = await run(['ses_dump', '--json'], env);
    assert.equal(j.code, 0);
    assert.equal(j.err, '');
    assert.deepEqual(j.out.trimEnd().split('\n').map((l) => JSON.parse(l)), stored);
    const h = await run(['dump', 'ses_dump'], env);
    assert.equal(h.code, 0);
    const lines = h.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^# session ses_dump, .*3 events \(seq 1–3\)/);
    assert.match(lines[2]!, /^\s+2\s+\S+Z\s+agent_message_chunk\s+.*hello \\"world\\"/);
    assert.equal(lines.length, 4);
  } finally {
    cleanup();
  }
});

test('log dump of a file with a torn tail prints the valid prefix and warns on stderr with the offset', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await writtenLog(dir, 'ses_torn', [chunk('ses_torn', 'a')]);
    const { statSync } = await import('node:fs');
    const size = statSync(log.path).size;
    appendFileSync(log.path, Buffer.from([9, 9, 9]));
    const r = await run([log.path, '--json'], {});
    assert.equal(r.code, 0);
    assert.equal(r.out.trimEnd().split('\n').length, 1);
    assert.match(r.err, new RegExp(`warning: .*at byte ${size}`));
    assert.equal(statSync(log.path).size, size + 3, 'dump does not repair the file');
  } finally {
    cleanup();
  }
});

test('log dump usage errors and missing logs give non-zero exit codes and nothing on stdout', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const env = { TROUPE_HOME: dir };
    assert.deepEqual([(await run([], env)).code, (await run(['a', 'b'], env)).code, (await run(['x', '--bogus'], env)).code], [2, 2, 2]);
    const missing = await run(['ses_missing'], env);
    assert.equal(missing.code, 1);
    assert.equal(missing.out, '');
    assert.match(missing.err, /no log at .*sessions\/ses_missing\.log/);
    const notLog = `${dir}/not.log`;
    appendFileSync(notLog, 'hello, not a log');
    assert.equal((await run([notLog], env)).code, 1);
  } finally {
    cleanup();
  }
});

test('log dump for people spells out the control characters JSON leaves raw (DEL, C1), as the other commands do', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await writtenLog(dir, 'ses_c1', [sessionCreated('ses_c1', '/w/\x9b2J'), chunk('ses_c1', 'csi \x9b31m del \x7f esc \x1b')]);
    const r = await run([log.path], {});
    assert.equal(r.code, 0, r.err);
    // Until 2026-12-06 U+009B (a CSI to some terminals) and DEL reached the terminal raw.
    assert.ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(r.out), JSON.stringify(r.out));
    assert.match(r.out, /csi \\x9b31m del \\x7f esc \\u001b/);
    assert.match(r.out, /\/w\/\\x9b2J/);
  } finally {
    cleanup();
  }
});

test('log dump: every error about the file itself ends with its code, as every error line does', async () => {
  // Until 2026-12-06 "no log at" a file, "is a directory" and "is not a troupe log" had no code.
  const { dir, cleanup } = tempDir();
  try {
    const env = { TROUPE_HOME: dir };
    const notLog = `${dir}/not.log`;
    appendFileSync(notLog, 'hello, not a log');
    mkdirSync(`${dir}/a-dir.log`);
    for (const [args, line] of [
      [['ses_missing'], `troupe log dump: no log at ${sessionsDir(dir)}/ses_missing.log (session_not_found)`],
      [[`${dir}/missing.log`], `troupe log dump: no log at ${dir}/missing.log (invalid_params)`],
      [[`${notLog}/below`], `troupe log dump: no log at ${notLog}/below (invalid_params)`],
      [[`${dir}/a-dir.log`], `troupe log dump: ${dir}/a-dir.log is a directory (invalid_params)`],
      [[notLog, '--json'], `troupe log dump: ${notLog} is not a troupe log (log_corrupt)`],
    ] as const) {
      const r = await run([...args], env);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.out, '', args.join(' '));
      assert.equal(r.err.trimEnd().split('\n').at(-1), line, args.join(' '));
    }
  } finally {
    cleanup();
  }
});

test('log dump: a file it cannot read (EIO) is log_read_failed, with the errno, not Node\'s words alone', { skip: !existsSync('/proc/self/mem') }, async () => {
  // /proc/self/mem opens, and reading it at offset 0 (unmapped) fails with EIO: a real failing read.
  const r = await run(['/proc/self/mem'], {});
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.equal(r.err, 'troupe log dump: cannot read /proc/self/mem: i/o error (EIO) (log_read_failed)\n');
});

/** Runs the real binary as a process that file modes bind (root too). */
function dumpWithoutOverride(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const [file, argv] = boundByFileModes([process.execPath, BIN, 'log', 'dump', ...args]);
  return new Promise((done) =>
    execFile(file, argv, { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (err, out, stderr) =>
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out, err: stderr })),
  );
}

test('log dump: a log it may not read (EACCES), by id or path, is log_read_failed naming the file and the errno', { skip: !canDropFileOverride }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    const sessions = sessionsDir(dir);
    mkdirSync(sessions, { recursive: true });
    const log = await writtenLog(sessions, 'ses_0locked', [sessionCreated('ses_0locked', '/w')]);
    chmodSync(log.path, 0o000);
    // Until 2026-12-06: "troupe log dump: EACCES: permission denied, open '…'", with no code.
    for (const target of ['ses_0locked', log.path]) {
      const r = await dumpWithoutOverride([target], { TROUPE_HOME: dir });
      assert.equal(r.code, 1, r.err);
      assert.equal(r.out, '');
      assert.equal(r.err, `troupe log dump: cannot read ${log.path}: permission denied (EACCES) (log_read_failed)\n`);
    }
  } finally {
    cleanup();
  }
});
