#!/usr/bin/env node
// Runs before `npm test`: the browser tests drive Debian's chromium, the terminal tests drive
// tmux, and the full-disk tests set a file-size limit on an agent with util-linux's prlimit. On a Debian machine where we are root (CI, a fresh container) missing ones are installed
// with apt; anywhere else this says exactly what to install and stops.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const missing = [];
if (!existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')) missing.push('chromium');
if (!onPath('tmux')) missing.push('tmux');
if (!onPath('prlimit')) missing.push('util-linux');
if (missing.length === 0) process.exit(0);

const canApt = process.getuid?.() === 0 && onPath('apt-get');
if (!canApt) {
  console.error(`The tests need these system packages: ${missing.join(', ')}. Install them (Debian: apt-get install ${missing.join(' ')}) and run the tests again.`);
  process.exit(1);
}
console.error(`Installing the system packages the tests drive: ${missing.join(', ')} (apt-get)`);
const run = (args) => spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status;
if (run(['update', '-qq']) !== 0 || run(['install', '-y', '-qq', ...missing]) !== 0) {
  console.error(`apt-get could not install ${missing.join(', ')}`);
  process.exit(1);
}
