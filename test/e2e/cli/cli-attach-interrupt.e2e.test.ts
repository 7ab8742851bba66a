// `troupe attach` says "Ctrl-C detaches" only once Ctrl-C does: a SIGINT right after that line
// detaches (exit 0) rather than killing the process (until 2026-12-06 the listener came after the line).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHome, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

const PRELOAD = new URL('../../support/cli/interrupt-on-notice.js', import.meta.url).href;

describe('troupe attach and an early Ctrl-C', { timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(() => {
    h = makeHome({ replies: [{ when: 'hello', items: [{ text: 'hi' }] }] });
  });
  after(() => h.close());

  test('Ctrl-C the moment attach says it detaches: it detaches, exit 0', async () => {
    const r = await h.run(['run', 'hello']);
    assert.equal(r.code, 0, r.stderr);
    const id = /session (ses_\w+)/.exec(r.stderr)![1]!;
    const attach = await h.run(['attach', id], { env: { NODE_OPTIONS: `--import=${PRELOAD}`, TROUPE_INTERRUPT_ON: 'Ctrl-C detaches' } });
    assert.match(attach.stderr, /attached to/);
    assert.equal(attach.code, 0, `killed by the SIGINT instead of detaching: ${JSON.stringify(attach)}`);
  });
});
