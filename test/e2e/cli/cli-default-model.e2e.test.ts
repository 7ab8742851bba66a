// troupe run with a default model no session can be made with (TROUPE_MODEL=scripted/nope, given to
// the daemon it starts): without --model it ends at once with the refusal, one line naming the model
// and where it came from; with --model the session is made with that model (session/new's
// `_meta.troupe.model`), and the default is not consulted. Until 2026-12-07 --model switched a session
// made with the default first (session/set_config_option), so a default refused at session/new made
// every `troupe run --model …` fail too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHome, SUITE_TIMEOUT_MS, type Home } from '../../support/cli/cli-harness.js';

describe('troupe run and the default model', { timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(() => {
    h = makeHome({ env: { TROUPE_MODEL: 'scripted/nope' } });
  });
  after(() => h.close());

  test('no --model: refused with the default model named; --model: a session of that model, and only it', async () => {
    const refused = await h.run(['run', 'hello']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /^troupe run: the default model "scripted\/nope" \(from TROUPE_MODEL\) cannot be used: scripted has no model 'nope': .* \(model_not_found\)\n$/);
    const ran = await h.run(['run', '--model', 'scripted/demo', '--json', 'hello']);
    assert.equal(ran.code, 0, ran.stderr);
    const mistyped = await h.run(['run', '--model', 'scripted/also-nope', 'hello']);
    assert.equal(mistyped.code, 1);
    assert.match(mistyped.stderr, /^troupe run: scripted has no model 'also-nope': .* \(model_not_found\)\n$/);
    const sessions = JSON.parse((await h.run(['sessions', '--json'])).stdout) as { model?: string }[];
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    assert.equal(sessions[0]!.model, 'scripted/demo');
  });
});
