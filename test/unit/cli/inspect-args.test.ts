// `troupe inspect` reads its options as every other command does (src/cli/args.ts): it takes
// --no-color, its usage mistakes are the CLI's one line naming its --help, and --last is decimal
// digits only. Runs in-process against a fake management API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspectCommand } from '../../../src/cli/inspect.command.js';
import { fakeManagementApi, type FakeApi } from '../../support/cli/fake-management-api.js';

const ID = 'ses_0insp';
const picture = (last: number) => ({
  session: { id: ID, status: 'active', model: 'scripted/demo', mode: 'default', cwd: '/w', updatedAt: 0, child: null },
  source: 'log',
  states: { session: 'idle' },
  transitions: Array.from({ length: last > 2 ? 2 : last }, (_, i) => ({ machine: 'session', state: 'idle', event: `e${i}`, at: 0 })),
  mermaid: { session: 'stateDiagram-v2\n', turn: 'stateDiagram-v2\n', child: 'stateDiagram-v2\n' },
});

let api: FakeApi;
before(async () => {
  api = await fakeManagementApi({
    [`GET /v1/sessions/${ID}/inspect?last=20`]: picture(20),
    [`GET /v1/sessions/${ID}/inspect?last=1`]: picture(1),
    [`GET /v1/sessions/${ID}/inspect?last=50`]: picture(50),
  });
});
after(() => api.close());

test('inspect takes --no-color, as every command does, and prints the same', async () => {
  // Until 2026-12-06: "troupe inspect: Unknown option '--no-color'…", exit 2.
  const plain = await api.run(inspectCommand, [ID]);
  const noColor = await api.run(inspectCommand, [ID, '--no-color']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(noColor.code, 0, noColor.stderr);
  assert.equal(noColor.stdout, plain.stdout);
  assert.match(noColor.stdout, /^session {2}ses_0insp/);
});

test('inspect --last takes decimal digits, as the other numeric options do', async () => {
  for (const [raw, shown] of [['1', 1], ['50', 2], ['020', 2]] as const) {
    const r = await api.run(inspectCommand, [ID, '--last', raw]);
    assert.equal(r.code, 0, `--last ${raw}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`last ${shown} transition`));
  }
  // Until 2026-12-06 Number() read '1e3' as 1000 and '0x10' as 16.
  for (const raw of ['1e3', '0x10', '0', '2.0', ' 7']) {
    const r = await api.run(inspectCommand, [ID, `--last=${raw}`]);
    assert.equal(r.code, 2, `--last=${raw}: ${r.stdout}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `troupe inspect: --last must be a positive integer, got '${raw}' (try 'troupe inspect --help')\n`);
  }
  // An empty value is refused for every option, as no value (args.ts).
  const empty = await api.run(inspectCommand, [ID, '--last=']);
  assert.deepEqual([empty.code, empty.stdout, empty.stderr], [2, '', "troupe inspect: --last needs a value, got an empty one (try 'troupe inspect --help')\n"]);
});

test("inspect's usage mistakes are the CLI's one line, naming its --help", async () => {
  for (const [args, line] of [
    // Until 2026-12-06 Node's three-line "argument is ambiguous" message.
    [[ID, '--last', '-1'], "troupe inspect: --last needs a value, and '-1' looks like an option (a value that starts with '-' is written --last=-1) (try 'troupe inspect --help')"],
    [[ID, 'ses_0other'], "troupe inspect: unexpected argument 'ses_0other' (try 'troupe inspect --help')"],
    [[ID, '--machine', 'turn'], "troupe inspect: --machine goes with --mermaid (try 'troupe inspect --help')"],
    [['--json'], "troupe inspect: --mermaid and --json need a session id (try 'troupe inspect --help')"],
  ] as const) {
    const r = await api.run(inspectCommand, [...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, `${line}\n`, args.join(' '));
  }
  const unknown = await api.run(inspectCommand, ['--bogus']);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr, "troupe inspect: unknown option '--bogus' (try 'troupe inspect --help')\n");
});
