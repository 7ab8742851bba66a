/**
 * Argument parsing shared by the commands: node:util parseArgs in strict mode, with usage mistakes
 * turned into a `usage` CliError (exit 2) that names the command's --help.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { decimalInteger, parseArgsProblem } from '../core/option-values.js';
import { CliError } from './cli-io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'no-color': { type: 'boolean' },
} as const satisfies Options;

/**
 * Parses `args` for `command`; unknown options, missing values and empty values are usage errors.
 * `dashWords` says what the command's words are when one may start with a dash (`a prompt`): an
 * unknown option's error then says how to give such a word (after `--`).
 * No option of the CLI takes an empty value: `--session "$ID"` with ID unset must not be read as no
 * `--session` (until 2026-12-06 `troupe run --session '' …` started a new session without a word, and
 * an empty `--cwd`, `--model` or `--mode` was as if not given).
 */
export function parseCommandArgs<O extends Options>(command: string, args: string[], options: O, dashWords?: string) {
  const all = { ...COMMON_OPTIONS, ...options };
  let parsed;
  try {
    parsed = parseArgs({ args, options: all, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    const dash = dashWords ? { command: `troupe ${command}`, what: dashWords } : undefined;
    throw new CliError('usage', `${parseArgsProblem(err, args, all, dash)} (try 'troupe ${command} --help')`);
  }
  // Named as typed (`-n ''` is -n, not --lines).
  const empty = parsed.tokens.find((t) => t.kind === 'option' && t.value === '');
  if (empty?.kind === 'option') throw new CliError('usage', `${empty.rawName} needs a value, got an empty one (try 'troupe ${command} --help')`);
  return parsed;
}

/** The positional at `index`, or a usage error naming what is missing. */
export function requirePositional(command: string, positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined || value === '') throw new CliError('usage', `missing ${what} (try 'troupe ${command} --help')`);
  return value;
}

/** A usage error when more than `max` positionals were given (an extra word is a mistake, not ignored). */
export function noExtraPositionals(command: string, positionals: string[], max: number): void {
  const extra = positionals[max];
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' (try 'troupe ${command} --help')`);
}

/** An integer option of at least `min` (0: non-negative, 1: positive), or a usage error. */
export function intOption(command: string, name: string, raw: string | undefined, fallback: number, min: 0 | 1 = 0): number {
  if (raw === undefined) return fallback;
  // Decimal digits, as the daemon reads a cursor: Number() would also take '', '0x10', '1e3' or
  // '1e21' (sent on as 'after=1e+21', which the daemon refuses).
  const n = decimalInteger(raw);
  if (n === undefined || n < min) throw new CliError('usage', `--${name} must be a ${min === 1 ? 'positive' : 'non-negative'} integer, got '${raw}' (try 'troupe ${command} --help')`);
  return n;
}
