/**
 * Opening a URL in the user's browser (`troupe inspect --open`). `$BROWSER` is read as the convention
 * has it (xdg-open, Python's webbrowser): commands separated by `:`, tried in turn until one opens
 * the URL; in each, `%s` stands for the URL (else the URL is its last argument), and words are
 * separated by spaces. Until 2026-12-07 the whole value was run as one program's name, so
 * `BROWSER=firefox:chromium` or `BROWSER='firefox --new-window %s'` could not run at all. Without it,
 * the system's opener (open, explorer, xdg-open).
 */
import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { CliError } from './cli-io.js';
import { printable } from './terminal-text.js';

/**
 * How long an opener is watched. One that cannot open a page fails at once (xdg-open with no browser
 * and no display: exit 3 within 0.2 s); one still running then is taken to be showing it (xdg-open
 * runs a browser it starts in the foreground, for as long as it is open) and left to run.
 */
const OPENER_WATCH_MS = 2000;

/** Opens `url`, or throws `browser_failed` saying why each command tried could not. */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv): Promise<void> {
  const system = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const commands = (env.BROWSER ?? '').split(delimiter).map((c) => c.trim()).filter(Boolean);
  const failures: string[] = [];
  for (const command of commands.length > 0 ? commands : [system]) {
    const [program, ...words] = command.split(/\s+/) as [string, ...string[]];
    const args = words.some((w) => w.includes('%s')) ? words.map((w) => w.replaceAll('%s', url)) : [...words, url];
    const ended = await run(program, args);
    if (ended === 0 || ended === undefined) return;
    failures.push(ended === 'not run' ? `could not run '${printable(command)}' to open a browser` : `'${printable(command)}' could not open a browser (${typeof ended === 'number' ? `exit code ${ended}` : ended})`);
  }
  throw new CliError('browser_failed', `${failures.join('; ')}: open the URL above yourself (or set BROWSER)`);
}

/** How `program` ended: its exit code or signal, `not run`, or undefined while it still runs after the watch. */
function run(program: string, args: string[]): Promise<number | string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: 'ignore', detached: true });
    child.once('error', () => resolve('not run'));
    child.once('spawn', () => {
      const watch = setTimeout(() => (child.unref(), resolve(undefined)), OPENER_WATCH_MS);
      child.once('exit', (code, signal) => (clearTimeout(watch), resolve(code ?? signal ?? undefined)));
    });
  });
}
