import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { sampleProcess } from '../../../src/actors/process-sample.js';

const linux = { skip: process.platform !== 'linux' && 'procfs' };

test('this process, while it runs, is R and its CPU time grows by what it used', linux, () => {
  const before = sampleProcess(process.pid)!;
  const start = process.cpuUsage();
  while (process.cpuUsage(start).user < 100_000);
  const after = sampleProcess(process.pid)!;
  assert.equal(after.state, 'R');
  // 100 ms used, read at 10 ms resolution (and GC threads may add to it).
  assert.ok(after.cpuMs - before.cpuMs >= 80, `${after.cpuMs - before.cpuMs} ms`);
});

test('a process named with spaces and parentheses is read right; stopped it is T; gone, there is no answer', linux, async (t) => {
  const p = spawn(process.execPath, ['-e', "process.title = 'a ) b ( c'; setInterval(() => {}, 1000); console.log('named')"], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => void p.kill('SIGKILL'));
  await once(p.stdout!, 'data');
  // (It goes to sleep in its loop once it has written.)
  const stateIs = async (s: string) => {
    for (let i = 0; i < 500 && sampleProcess(p.pid!)?.state !== s; i++) await new Promise((r) => setTimeout(r, 10));
  };
  await stateIs('S');
  assert.match(readFileSync(`/proc/${p.pid}/stat`, 'latin1'), /^\d+ \(a \) b \( c\) S /);
  const asleep = sampleProcess(p.pid!)!;
  assert.equal(asleep.state, 'S');
  assert.ok(asleep.cpuMs >= 0 && asleep.cpuMs < 60_000);
  p.kill('SIGSTOP');
  await stateIs('T');
  assert.equal(sampleProcess(p.pid!)?.state, 'T');
  p.kill('SIGKILL');
  await once(p, 'exit');
  assert.equal(sampleProcess(p.pid!), undefined);
  assert.equal(sampleProcess(-1), undefined);
  assert.equal(sampleProcess(0), undefined);
});

test('reading a process allocates nothing outside the V8 heap (the watchdog reads every child, again and again)', linux, () => {
  // readFileSync of a procfs file allocated two 8 KiB ArrayBuffers a call, kept until a GC: with
  // hundreds of children, freed malloc memory the daemon kept resident (src/core/proc-stat.ts).
  const start = process.memoryUsage().arrayBuffers;
  let most = 0;
  for (let i = 0; i < 50; i++) {
    assert.equal(sampleProcess(process.pid)?.state, 'R');
    most = Math.max(most, process.memoryUsage().arrayBuffers - start);
  }
  assert.ok(most < 8192, `${most} bytes of ArrayBuffers grew`);
});
