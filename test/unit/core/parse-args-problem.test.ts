// A node:util parseArgs error in troupe's words (parseArgsProblem, src/core/option-values.ts): one
// line, its quotes balanced, chosen by the error's code. Each case is a real strict parseArgs of the
// arguments, whose error is then put into words; the code it threw is checked too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { parseArgsProblem, type ArgsOptions, type DashWords } from '../../../src/core/option-values.js';

const OPTIONS = {
  cwd: { type: 'string', short: 'c' },
  'add-dir': { type: 'string', multiple: true },
  lines: { type: 'string', short: 'n' },
  yes: { type: 'boolean', short: 'y' },
  json: { type: 'boolean' },
} as const satisfies ArgsOptions;

const RUN: DashWords = { command: 'troupe run', what: 'a prompt' };

/** The code strict parseArgs threw for `args`, and the line said of it. */
function problem(args: string[], opts: { dash?: DashWords; positionals?: boolean } = {}): [unknown, string] {
  try {
    parseArgs({ args, options: OPTIONS, allowPositionals: opts.positionals ?? true, strict: true });
  } catch (err) {
    return [(err as { code?: unknown }).code, parseArgsProblem(err, args, OPTIONS, opts.dash)];
  }
  assert.fail(`parseArgs took ${JSON.stringify(args)}`);
}

test('an unknown option is named as typed, with how to give a word that starts with a dash where the command takes one', () => {
  const cases: [string[], DashWords | undefined, string][] = [
    // Until 2026-12-07 Node's words: "Unknown option '--foo'. To specify a positional argument starting
    // with a '-', place it at the end of the command after '--', as in '-- "--foo"" (unbalanced).
    [['--foo', 'hi'], RUN, `unknown option '--foo' (a prompt that starts with '-' goes after '--': troupe run -- "--foo")`],
    [['--foo', 'hi'], undefined, `unknown option '--foo'`],
    [['-x'], undefined, `unknown option '-x'`],
    // In a group of short options, and with a value: the whole argument goes after `--`.
    [['-yx', 'hi'], RUN, `unknown option '-x' in '-yx' (a prompt that starts with '-' goes after '--': troupe run -- "-yx")`],
    [['--foo=bar'], RUN, `unknown option '--foo' (a prompt that starts with '-' goes after '--': troupe run -- "--foo=bar")`],
    // The words before it stay before the `--`, quoted where a shell needs it.
    [['ses_0abc', 'it is', '--foo'], { command: 'troupe steer', what: 'a text' }, `unknown option '--foo' (a text that starts with '-' goes after '--': troupe steer ses_0abc "it is" -- "--foo")`],
    // What a shell would expand in double quotes goes in single ones.
    [['--$HOME'], RUN, `unknown option '--$HOME' (a prompt that starts with '-' goes after '--': troupe run -- '--$HOME')`],
    [["--it's$"], RUN, `unknown option '--it's$' (a prompt that starts with '-' goes after '--': troupe run -- '--it'\\''s$')`],
  ];
  for (const [args, dash, line] of cases) assert.deepEqual(problem(args, { dash }), ['ERR_PARSE_ARGS_UNKNOWN_OPTION', line], args.join(' '));
});

test('an option missing its value, or given one it does not take, says so in one line', () => {
  const cases: [string[], string][] = [
    // Until 2026-12-07: "Option '--cwd <value>' argument missing", "Option '-c, --cwd <value>' argument missing".
    [['--cwd'], '--cwd needs a value'],
    [['hi', '-c'], '-c needs a value'],
    [['-yc'], '-c needs a value'],
    [['--add-dir', '.', '--add-dir'], '--add-dir needs a value'],
    // Until 2026-12-07: "Option '--json' does not take an argument".
    [['--json=1', 'hi'], "--json takes no value, got '1'"],
    [['--json='], "--json takes no value, got ''"],
    // A value that starts with a dash: Node's three lines.
    [['--cwd', '--x'], "--cwd needs a value, and '--x' looks like an option (a value that starts with '-' is written --cwd=--x)"],
    [['-n', '-5'], "-n needs a value, and '-5' looks like an option (a value that starts with '-' is written --lines=-5)"],
  ];
  for (const [args, line] of cases) assert.deepEqual(problem(args, { dash: RUN }), ['ERR_PARSE_ARGS_INVALID_OPTION_VALUE', line], args.join(' '));
});

test('a word where a command takes none is an unexpected argument, named', () => {
  // Until 2026-12-07: "Unexpected argument 'hi'. This command does not take positional arguments".
  assert.deepEqual(problem(['--yes', 'hi'], { positionals: false }), ['ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL', "unexpected argument 'hi'"]);
  assert.deepEqual(problem(['--', '--yes'], { positionals: false }), ['ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL', "unexpected argument '--yes'"]);
});

test('an error that is not a parseArgs one is its first line, as before', () => {
  assert.equal(parseArgsProblem(new Error('something else.\nmore'), ['--json'], OPTIONS), 'something else');
});
