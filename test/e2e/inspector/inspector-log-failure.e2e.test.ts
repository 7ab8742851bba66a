// The page in a real headless Chromium against a real daemon whose session log is damaged between the
// page's replay of it and its log feed: the feed's stream opens, then fails reading the log
// (`event: error` `log_corrupt`). The page must say so and stop that feed; until 2026-12-06 it did not
// listen for the event, and the browser reconnected, met the same error, and so on, silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, showSession, until } from '../../support/inspector-page.js';

/** Bytes of a msgpack unsigned int at `off` (as the log's event records write `firstSeq` and `count`). */
function uintBytes(b: number): number {
  if (b <= 0x7f) return 1;
  return { 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9, 0xcb: 9 }[b] ?? assert.fail(`not an unsigned int: 0x${b.toString(16)}`);
}

/**
 * Damages the last event record of a log file in place: its frame and checksum stay valid (so the
 * daemon's scan, which decodes nothing, still counts its events), its events no longer decode.
 */
function damageLastEventRecord(path: string): void {
  const buf = readFileSync(path);
  let last: { start: number; len: number } | undefined;
  for (let off = 0; off + 8 <= buf.length; ) {
    const len = buf.readUInt32LE(off);
    if (buf[off + 8] === 0x93) last = { start: off + 8, len };
    off += 8 + len;
  }
  assert.ok(last, 'the log has an event record');
  const payload = buf.subarray(last.start, last.start + last.len);
  let at = 1;
  at += uintBytes(payload[at]!);
  at += uintBytes(payload[at]!);
  payload.fill(0xc1, at); // msgpack's never-used byte, where the events were
  buf.writeUInt32LE(crc32(payload), last.start - 4);
  writeFileSync(path, buf);
}

/** The reconnection time the feed's answer gives the browser (an SSE `retry:` field). */
const RECONNECT_MS = 100;

test('inspector: a log feed the daemon ends with event: error (log_corrupt) is said in the notices and not asked for again', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { replies: [[{ text: 'pong' }]] } });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] });
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d);

  // The replay the page asks for first reads the log whole: the damage comes once it is answered,
  // before the page opens the log's feed (whose replay the daemon then reads from the file).
  let replays = 0;
  await page.route(`**/v1/sessions/${sessionId}/replay*`, async (route) => {
    const response = await route.fetch();
    if (replays++ === 0) damageLastEventRecord(join(d.home, 'sessions', `${sessionId}.log`));
    await route.fulfill({ response });
  });
  // The feed's answer (the daemon ends it after its `event: error`) reaches the page with a `retry:`
  // field first: a page that did not stop would reconnect 100 ms after it ends, not after Chromium's
  // default 3 s, so a short wait sees many chances to ask again (until 2026-12-06 it waited 7 s).
  await page.route(`**/v1/sessions/${sessionId}/events*`, async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, body: `retry: ${RECONNECT_MS}\n\n${await response.text()}` });
  });
  const feedRequests: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === `/v1/sessions/${sessionId}/events`) feedRequests.push(`${r.method()} ${r.url()}`);
  });

  await showSession(page, sessionId);
  await until(page, 'the failure said', () => /log_corrupt/.test(document.querySelector('#gaps')?.textContent ?? ''));
  const notices = await page.$$eval('#gaps .gap', (gs) => gs.map((g) => [g.textContent ?? '', (g as HTMLElement).dataset.about]));
  assert.equal(notices.length, 1, JSON.stringify(notices));
  assert.match(notices[0]![0]!, /^the log feed failed: .*does not decode.* \(log_corrupt\)$/);
  assert.equal(notices[0]![1], 'session', 'about the session shown');

  // Over twenty reconnection times, a page that did not stop would have asked again.
  await page.waitForTimeout(20 * RECONNECT_MS);
  assert.deepEqual(feedRequests, [`GET ${d.url}/v1/sessions/${sessionId}/events?after=0`], 'the feed asked for once');
  assert.equal((await page.$$('#gaps .gap')).length, 1, 'said once');
  assert.deepEqual(errors, []);
});
