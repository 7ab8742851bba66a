// The routes a browser reaches before it holds the token, on a real `troupe serve`: the one-time login
// link (GET spends its code; HEAD and a doubled code must not), and the origins --allow-origin names,
// matched as a browser sends them (docs/daemon.md §Securing it, spec/transport.md §8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon } from '../../support/daemon.js';

async function mintLink(d: Daemon): Promise<string> {
  const minted = await d.api('POST', '/v1/login-codes');
  assert.equal(minted.status, 200);
  return (minted.json as { url: string }).url;
}

test('the login link: HEAD is 405 with or without the token and spends nothing, a code given twice is 400; the GET then logs in once', async (t) => {
  const d = await Daemon.start({ args: ['--pool', '0'] });
  t.after(() => d.stop());
  const link = await mintLink(d);
  // Until 2026-12-07 a HEAD without the token was 401 (the GET needs none), and one with the token
  // spent the code: a link checker or a preview fetching it first left the person a dead link.
  for (const headers of [{}, d.headers]) {
    const head = await fetch(link, { method: 'HEAD', headers, redirect: 'manual' });
    assert.deepEqual([head.status, head.headers.get('allow'), head.headers.get('set-cookie')], [405, 'GET', null]);
  }
  // Two codes, the good one first: until 2026-12-07 the first was spent.
  const twice = await fetch(`${link}&code=other`, { redirect: 'manual' });
  assert.equal(twice.status, 400);
  assert.equal(((await twice.json()) as { error: { code: string } }).error.code, 'invalid_params');
  const login = await fetch(link, { redirect: 'manual' });
  assert.equal(login.status, 303, 'the code is still good after the HEADs and the refusal');
  assert.match(login.headers.get('set-cookie') ?? '', /^troupe_session=/);
  assert.equal((await fetch(link, { redirect: 'manual' })).status, 403, 'and it works once');
});

test('--allow-origin is read as an origin: written with capitals, a default port or a slash, it matches what a browser sends', async (t) => {
  // Until 2026-12-07 the value was compared as typed (lower-cased, trailing slash cut): with its
  // default port it never matched the browser's `https://app.example.com`, and the page got 403.
  const d = await Daemon.start({ args: ['--pool', '0', '--allow-origin', 'HTTPS://App.Example.com:443/'] });
  t.after(() => d.stop());
  const res = await fetch(`${d.url}/v1/sessions`, { headers: { ...d.headers, Origin: 'https://app.example.com' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example.com');
  assert.equal((await fetch(`${d.url}/v1/sessions`, { headers: { ...d.headers, Origin: 'https://app.example.com:8443' } })).status, 403, 'another port is another origin');
});
