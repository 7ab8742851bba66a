// `TROUPE_MODEL=scripted/nope troupe serve`: a default model no turn could use is said as the daemon
// starts, and each session/new is refused with it (model_not_found, naming it and where it came
// from), through the daemon's relay as from `troupe acp`. Until 2026-12-07 the daemon started in
// silence and made sessions whose every turn failed model_not_found. A default whose provider has no
// key here is said as it starts too; its sessions are still made (they can be switched to another model).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClient, tempDir } from '../../support/daemon.js';

test('TROUPE_MODEL=scripted/nope: the daemon says so as it starts, and refuses session/new naming it', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { env: { TROUPE_MODEL: 'scripted/nope' } });
  const said = /the default model "scripted\/nope" \(from TROUPE_MODEL\) cannot be used: scripted has no model 'nope': its models are scripted\/demo, scripted\/replay; set TROUPE_MODEL to a model troupe serves/;
  // Logged before the daemon wrote its state file, which Daemon.start waits for.
  assert.match(d.stderr, said);
  assert.match(d.stderr, /new sessions are refused until then/);
  await assert.rejects(
    c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] }),
    (e: any) => e.code === -32046 && e.data?.code === 'model_not_found' && e.data?.modelId === 'scripted/nope' && said.test(e.message),
  );
  assert.deepEqual((await d.api('GET', '/v1/sessions')).json.sessions, [], 'no session left behind');
});

test('TROUPE_MODEL=openai/gpt-5 without OPENAI_API_KEY: the daemon says so as it starts; a session is still made, and can be switched to a usable model', async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { env: { TROUPE_MODEL: 'openai/gpt-5' } });
  assert.match(d.stderr, /the default model "openai\/gpt-5" \(from TROUPE_MODEL\) cannot be used here: openai has no credential here: set OPENAI_API_KEY .*; every turn on it fails until then/);
  const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  await c.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'scripted/demo' });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
});
