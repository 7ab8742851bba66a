// The session host's create: a new session is reported only once its session_created is durable
// (a barrier, spec/event-log.md §3), and a log made ahead (a spare) is used and not made twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { silentLogger } from '../../../src/core/ports.js';
import { SessionHost } from '../../../src/acp/session-host.js';
import { loadConfig } from '../../../src/providers/config.js';
import { sessionsDir } from '../../../src/store/index.js';

async function host(): Promise<{ h: SessionHost; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-host-'));
  const env = { HOME: home, TROUPE_HOME: home, TROUPE_MODEL: 'scripted/demo' };
  const h = await SessionHost.open({ home, env, config: loadConfig(env), logger: silentLogger });
  // create() builds the session's tools for a client; it never calls it.
  h.attach({} as acp.AgentContext, {});
  return { h, home };
}

test('create returns once session_created is durable', async (t) => {
  const { h, home } = await host();
  t.after(() => h.shutdown());
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  assert.equal(live.log.lastSeq(), 1);
  assert.equal(live.log.durableSeq(), 1, 'fdatasynced before the session is reported');
});

test('a spare log made ahead is the next session; an unused one is removed at shutdown', async () => {
  const { h, home } = await host();
  h.prepareSpareLog();
  const live = await h.create({ cwd: home, additionalDirectories: [] });
  assert.deepEqual(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')), [`${live.engine.sessionId}.log`], 'the spare became the session: no other log');
  h.prepareSpareLog();
  // Let the second spare's file appear, then shut down without using it.
  for (let i = 0; i < 200 && readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')).length, 2);
  await h.shutdown();
  assert.deepEqual(readdirSync(sessionsDir(home)).filter((f) => f.endsWith('.log')), [`${live.engine.sessionId}.log`]);
});
