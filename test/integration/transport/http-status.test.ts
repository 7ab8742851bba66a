// Raw HTTP against /acp: every status the SDK server gives, with troupe's JSON error bodies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { rawInitialize, rawPost, SseReader, startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';

async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { error: { code: string } };
  return body.error.code;
}

/**
 * What the server sends back for `bytes` written on a connection of their own, until it closes the
 * connection (or, with `untilHead`, until a response's head has come: the connection is then closed here).
 */
function rawExchange(h: Harness, bytes: string, { untilHead = false } = {}): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(h.port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => {
      got += d;
      if (untilHead && /\r\n\r\n/.test(got)) socket.destroy();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('ACP HTTP statuses', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxBodyBytes: 4096, maxIdLength: 64 } });
    // A /v1 route that takes a body, to hold /v1 to the rules /acp follows.
    h.server.route('POST', '/v1/echo-body', (req) => ({ body: req.body ?? null }));
  });
  after(() => h.close());

  test('a near miss of /acp (a trailing slash, a double slash, capitals, a segment more) is 404 method_not_found naming the path, as JSON; without the token 401', async () => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } });
    for (const path of ['/acp/', '//acp', '/ACP', '/acp/x']) {
      const res = await h.fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: initialize });
      assert.deepEqual([res.status, res.headers.get('content-type'), await res.json()], [404, 'application/json', { error: { code: 'method_not_found', message: `No route for POST ${path}` } }], path);
      const bare = await fetch(`${h.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: initialize });
      assert.deepEqual([bare.status, ((await bare.json()) as { error: { code: string } }).error.code], [401, 'unauthorized'], `${path} without the token`);
    }
  });

  test('405 for a method other than GET, POST, DELETE', async () => {
    const res = await h.fetch('/acp', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, POST, DELETE');
    assert.equal(await errorCode(res), 'invalid_request');
  });

  test('415 for a POST that is not application/json', async () => {
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    assert.equal(res.status, 415);
    assert.equal(await errorCode(res), 'invalid_request');
  });

  test('415 from the headers alone: the body is never read, and the connection closes as after a 413 (/acp and /v1 alike)', async () => {
    const id = await rawInitialize(h);
    for (const [path, extra] of [['/acp', `Acp-Connection-Id: ${id}\r\n`], ['/v1/echo-body', '']] as const) {
      const received = { acp: h.acp.traffic().http.received, v1: h.server.managementBytes.received };
      // Half of a declared 1000-byte body: until 2026-12-07 the server waited for the rest before
      // it looked at the type, and answered nothing until uWS's timeout closed the connection.
      const answer = await rawExchange(h, `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: text/plain\r\n${extra}Content-Length: 1000\r\n\r\n${'x'.repeat(500)}`);
      assert.match(answer, /^HTTP\/1\.1 415 /, `${path}: ${answer}`);
      assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code, 'invalid_request');
      assert.deepEqual({ acp: h.acp.traffic().http.received, v1: h.server.managementBytes.received }, received, `${path}: no byte of the body was read`);
    }
  });

  test('one media-type rule for /acp and /v1: application/json in any case, parameters ignored; nothing else', async () => {
    const id = await rawInitialize(h);
    const cancel = JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'ses_x' } });
    const post = (path: string, type: string) => h.fetch(path, { method: 'POST', headers: { 'Content-Type': type, 'Acp-Connection-Id': id, 'Acp-Session-Id': 'ses_x' }, body: cancel });
    for (const path of ['/acp', '/v1/echo-body']) {
      for (const type of ['application/json', 'Application/JSON', ' application/json ; charset=utf-8', 'application/json;charset=latin1']) {
        const res = await post(path, type);
        assert.equal(res.status, path === '/acp' ? 202 : 200, `${path} ${JSON.stringify(type)}`);
        await res.arrayBuffer();
      }
      for (const type of ['text/plain', 'application/jsonx', 'application/json-seq', 'text/json', 'application/x-www-form-urlencoded']) {
        const res = await post(path, type);
        assert.equal(res.status, 415, `${path} ${JSON.stringify(type)}`);
        assert.equal(await errorCode(res), 'invalid_request');
      }
    }
  });

  test('400 parse_error for invalid JSON', async () => {
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{nope' });
    assert.equal(res.status, 400);
    assert.equal(await errorCode(res), 'parse_error');
  });

  test('a body that starts with a UTF-8 byte order mark is read as the SDK server reads it (fetch drops the mark)', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }))]);
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { id: number }).id, 7);
    // Only a leading mark: one inside the JSON is no whitespace, and still a parse error.
    const inside = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{\ufeff}' });
    assert.equal(inside.status, 400);
    assert.equal(await errorCode(inside), 'parse_error');
  });

  test('400 with a JSON-RPC -32600 body for a batch', async () => {
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[{"jsonrpc":"2.0","id":1,"method":"initialize"}]' });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number } };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
  });

  test('400 for a body that is not an object, and for initialize without an id', async () => {
    const prim = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '42' });
    assert.equal(prim.status, 400);
    const noId = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}' });
    assert.equal(noId.status, 400);
  });

  test('initialize: 200 with Acp-Connection-Id; again on that connection: 400', async () => {
    const id = await rawInitialize(h);
    assert.match(id, /^[0-9a-f-]{36}$/);
    const again = await rawPost(h, id, { jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: 1 } });
    assert.equal(again.status, 400);
  });

  test('missing connection id 400, unknown connection id 404', async () => {
    const missing = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}' });
    assert.equal(missing.status, 400);
    const unknown = await rawPost(h, '00000000-0000-0000-0000-000000000000', { jsonrpc: '2.0', id: 1, method: 'session/new', params: {} });
    assert.equal(unknown.status, 404);
    assert.equal(await errorCode(unknown), 'connection_not_found');
    const get = await h.fetch('/acp', { headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': 'nope' } });
    assert.equal(get.status, 404);
  });

  test('session scoping: missing and mismatched Acp-Session-Id are 400, a match is 202', async () => {
    const id = await rawInitialize(h);
    const prompt = { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: 'ses_a', prompt: [] } };
    assert.equal((await rawPost(h, id, prompt)).status, 400);
    const mismatch = await rawPost(h, id, prompt, 'ses_b');
    assert.equal(mismatch.status, 400);
    assert.match(((await mismatch.json()) as { error: { message: string } }).error.message, /Mismatched/);
    // session/cancel is session scoped even without params.sessionId.
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', method: 'session/cancel', params: {} })).status, 400);
    assert.equal((await rawPost(h, id, prompt, 'ses_a')).status, 202);
  });

  test('a response to a session-routed agent request must carry that session', async () => {
    const id = await rawInitialize(h);
    const stream = await SseReader.open(h, id, { sessionId: 'ses_p' });
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: 'ses_p', prompt: [{ type: 'text', text: 'permission' }] } }, 'ses_p')).status, 202);
    const events = await stream.waitFor(4);
    const ask = events[3]!.json;
    assert.equal(ask['method'], 'session/request_permission');
    const answer = { jsonrpc: '2.0', id: ask['id'], result: { outcome: { outcome: 'selected', optionId: 'allow' } } };
    assert.equal((await rawPost(h, id, answer)).status, 400);
    assert.equal((await rawPost(h, id, answer, 'ses_other')).status, 400);
    assert.equal((await rawPost(h, id, answer, 'ses_p')).status, 202);
    const after = await stream.waitFor(6);
    assert.deepEqual(after[5]!.json['result'], { stopReason: 'end_turn' });
    stream.close();
  });

  test('406 without Accept: text/event-stream; 409 for a second receiver on a stream', async () => {
    const id = await rawInitialize(h);
    const no = await h.fetch('/acp', { headers: { 'Acp-Connection-Id': id } });
    assert.equal(no.status, 406);
    const first = await SseReader.open(h, id);
    await assert.rejects(SseReader.open(h, id), /409/);
    const s1 = await SseReader.open(h, id, { sessionId: 'ses_x' });
    const second = await h.fetch('/acp', { headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id, 'Acp-Session-Id': 'ses_x' } });
    assert.equal(second.status, 409);
    assert.equal(await errorCode(second), 'stream_conflict');
    first.close();
    s1.close();
  });

  test('413 for an oversized body, by Content-Length and while streaming', async () => {
    const id = await rawInitialize(h);
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { pad: 'y'.repeat(5000) } });
    const declared = await rawPost(h, id, JSON.parse(big));
    assert.equal(declared.status, 413);
    assert.equal(await errorCode(declared), 'payload_too_large');
    const chunks = [new TextEncoder().encode(big.slice(0, 3000)), new TextEncoder().encode(big.slice(3000))];
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = chunks.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const streamed = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': id }, body, duplex: 'half' } as RequestInit & { headers: Record<string, string> });
    assert.equal(streamed.status, 413);
  });

  test('a Content-Length of 10 digits or more (uWS refuses to parse it) closes the connection, and the server goes on', async () => {
    const id = await rawInitialize(h);
    for (const length of ['1000000000', '99999999999']) {
      const answer = await rawExchange(h, `POST /acp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAcp-Connection-Id: ${id}\r\nContent-Length: ${length}\r\n\r\n{`);
      assert.equal(answer, '', `Content-Length ${length}: closed without a response`);
    }
    const after = await rawPost(h, id, { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'ses_x' } }, 'ses_x');
    assert.equal(after.status, 202, 'the next request is served');
  });

  test('a Content-Length on two lines with differing values closes the connection: the bytes past the first length never run as a request', async () => {
    const id = await rawInitialize(h);
    const cancel = JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'ses_x' } });
    // uWS frames the body by the first line; a proxy framing it by the second would pass the rest
    // on as the body, and the daemon would run it as a request of its own (request smuggling).
    const smuggled = `GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n`;
    for (const lengths of [[cancel.length, 2], [2, cancel.length], [cancel.length, cancel.length + 1]]) {
      const head = `POST /acp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAcp-Connection-Id: ${id}\r\nAcp-Session-Id: ses_x\r\n`;
      const answer = await rawExchange(h, `${head}Content-Length: ${lengths[0]}\r\nContent-Length: ${lengths[1]}\r\n\r\n${cancel}${smuggled}`);
      // As uWS closes for the framing errors it finds itself (spec/transport.md §3): no answer at all.
      assert.equal(answer, '', `Content-Length ${lengths.join(' and ')}: closed, nothing answered (the smuggled GET least of all)`);
    }
    // The same length twice is one length (RFC 9110 §8.6), and the connection is served on.
    const same = await rawPost(h, id, { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'ses_x' } }, 'ses_x');
    assert.equal(same.status, 202, 'the next request is served');
    const twice = await rawExchange(h, `POST /acp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAcp-Connection-Id: ${id}\r\nAcp-Session-Id: ses_x\r\nContent-Length: ${cancel.length}\r\nContent-Length: ${cancel.length}\r\n\r\n${cancel}`, { untilHead: true });
    assert.match(twice, /^HTTP\/1\.1 202 /);
  });

  test('400 invalid_request for JSON nested deeper than 256 levels; 200 levels pass', async () => {
    // Parsed without complaint, it would break the agent side, which serializes the message again
    // (JSON.stringify recurses): the request was acknowledged and never answered.
    const connectionId = await rawInitialize(h);
    const post = (levels: number) =>
      h.fetch('/acp', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': connectionId, 'Acp-Session-Id': 's1' },
        body: `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","x":${'['.repeat(levels)}${']'.repeat(levels)}}}`,
      });
    const deep = await post(1000);
    assert.equal(deep.status, 400);
    assert.equal(await errorCode(deep), 'invalid_request');
    assert.equal((await post(200)).status, 202);
  });

  test('400 for ids over maxIdLength', async () => {
    const id = await rawInitialize(h);
    const longSession = 's'.repeat(65);
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: longSession } }, longSession)).status, 400);
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 'r'.repeat(65), method: 'session/new', params: {} })).status, 400);
  });

  test('output sent before the GET is delivered when it attaches', async () => {
    const id = await rawInitialize(h);
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 7, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } })).status, 202);
    const stream = await SseReader.open(h, id);
    const [ev] = await stream.waitFor(1);
    assert.equal(ev!.json['id'], 7);
    assert.match(String((ev!.json['result'] as { sessionId: string }).sessionId), /^ses_test_/);
    assert.equal(ev!.id, '1');
    stream.close();
  });

  test('DELETE: 202, then the connection is gone (404 everywhere)', async () => {
    const id = await rawInitialize(h);
    const stream = await SseReader.open(h, id);
    const del = await h.fetch('/acp', { method: 'DELETE', headers: { 'Acp-Connection-Id': id } });
    assert.equal(del.status, 202);
    await stream.waitEnd();
    assert.equal(await h.agent.connection(id).closed, 'deleted');
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 1, method: 'session/new', params: {} })).status, 404);
    assert.equal((await h.fetch('/acp', { method: 'DELETE', headers: { 'Acp-Connection-Id': id } })).status, 404);
    assert.equal((await h.fetch('/acp', { headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id } })).status, 404);
    assert.equal((await h.fetch('/acp', { method: 'DELETE' })).status, 400);
  });

  test('the server side can close a connection through the transport handle', async () => {
    const id = await rawInitialize(h);
    assert.equal(h.acp.connections().some((c) => c.id === id && c.transport === 'http'), true);
    assert.equal(h.acp.closeConnection(id), true);
    assert.equal(await h.agent.connection(id).closed, 'deleted');
    assert.equal(h.acp.closeConnection(id), false);
    assert.equal((await rawPost(h, id, { jsonrpc: '2.0', id: 1, method: 'session/new', params: {} })).status, 404);
  });
});

describe('ACP connection capacity', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxConnections: 2 } });
  });
  after(() => h.close());

  test('503 with data.code capacity_exceeded past maxConnections, and room again after DELETE', async () => {
    const a = await rawInitialize(h);
    await rawInitialize(h);
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: 1 } }) });
    assert.equal(res.status, 503);
    const body = (await res.json()) as { id: number; error: { code: number; data: { code: string } } };
    assert.equal(body.id, 3);
    assert.equal(body.error.data.code, 'capacity_exceeded');
    await h.fetch('/acp', { method: 'DELETE', headers: { 'Acp-Connection-Id': a } });
    await rawInitialize(h);
  });
});
