// The gate between the client's messages and the SDK (src/acp/request-gate.ts), with the SDK's own
// agent app on in-memory message streams: what follows an `initialize` waits for its answer, the
// input ends only once every request is answered and the agent has stopped (the connection still
// open meanwhile), and a connection the SDK closes ends a read that waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as acp from '@agentclientprotocol/sdk';
import { requestGate } from '../../../src/acp/request-gate.js';

type Message = acp.AnyMessage;

/** A client's side: messages to send (`send`, `end`) and what the agent wrote (`out`, `next`). */
function wire() {
  let input!: ReadableStreamDefaultController<Message>;
  let cancelledWith: unknown = 'not cancelled';
  const readable = new ReadableStream<Message>({
    start: (c) => void (input = c),
    cancel: (reason) => void (cancelledWith = reason),
  });
  const out: any[] = [];
  const waiters = new Set<() => void>();
  const writable = new WritableStream<Message>({
    write(m) {
      out.push(m);
      for (const w of waiters) w();
    },
  });
  return {
    stream: { readable, writable },
    out,
    cancelledWith: () => cancelledWith,
    send: (...messages: object[]) => messages.forEach((m) => input.enqueue({ jsonrpc: '2.0', ...m } as Message)),
    end: () => input.close(),
    /** Resolves once `match` accepts something the agent wrote. */
    next: (match: (m: any) => boolean) =>
      new Promise<any>((resolve) => {
        const look = () => {
          const found = out.find(match);
          if (found !== undefined) (waiters.delete(look), resolve(found));
        };
        waiters.add(look);
        look();
      }),
  };
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const initialize = { id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } };
const answers = (out: any[]) => out.filter((m) => m.method === undefined).map((m) => [m.id, m.error ? m.error.code : 'ok']);

test('a request sent right behind initialize is served once initialize has been answered, however long that takes', async () => {
  const w = wire();
  const initialized = deferred();
  const app = acp
    .agent({ name: 'test' })
    .onRequest('initialize', async () => {
      await initialized.promise;
      return { protocolVersion: 1 };
    })
    .onRequest('session/list', () => ({ sessions: [] }));
  app.connect(requestGate(w.stream, { onEnd: () => undefined, beforeClose: async () => undefined }));
  w.send(initialize, { id: 2, method: 'session/list', params: {} });
  // Turns of the loop for the SDK to read and refuse what it was given, if it had been given it.
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(answers(w.out), []);
  initialized.resolve();
  await w.next((m) => m.id === 2);
  assert.deepEqual(answers(w.out), [[1, 'ok'], [2, 'ok']]);
});

test('the input ends once every request is answered and beforeClose has run, the connection open until then', async () => {
  const w = wire();
  const listed = deferred();
  let client!: acp.AgentContext;
  const events: string[] = [];
  const app = acp
    .agent({ name: 'test' })
    .onRequest('initialize', ({ client: c }) => ((client = c), { protocolVersion: 1 }))
    .onRequest('session/list', async () => {
      await listed.promise;
      return { sessions: [] };
    });
  const connection = app.connect(
    requestGate(w.stream, {
      onEnd: () => void events.push('end'),
      beforeClose: async () => {
        // (The agent stops over turns of the loop.)
        await new Promise((r) => setImmediate(r));
        events.push('beforeClose');
        // What the agent sends as it stops still goes out.
        await client.notify('session/update', { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'bye' } } });
      },
    }),
  );
  void connection.closed.then(() => events.push('closed'));
  w.send(initialize, { id: 2, method: 'session/list', params: {} });
  w.end();
  await w.next((m) => m.id === 1);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(events, ['end'], 'the list is still being served');
  listed.resolve();
  await connection.closed;
  assert.deepEqual(events, ['end', 'beforeClose', 'closed']);
  assert.deepEqual(answers(w.out), [[1, 'ok'], [2, 'ok']]);
  assert.equal(w.out.at(-1).params?.update?.content?.text, 'bye', JSON.stringify(w.out));
});

test('a read waiting for an initialize answer ends when the connection is closed, and the input is cancelled', async () => {
  const w = wire();
  const reader = requestGate(w.stream, { onEnd: () => assert.fail('the input did not end'), beforeClose: async () => undefined }).readable.getReader();
  w.send(initialize, { id: 2, method: 'session/list', params: {} });
  assert.equal(((await reader.read()).value as { method?: string }).method, 'initialize');
  // Never answered: the SDK closes the connection instead (its close cancels its reader).
  const waiting = reader.read();
  await reader.cancel('closed');
  assert.deepEqual(await waiting, { done: true, value: undefined });
  assert.equal(w.cancelledWith(), 'closed');
});
