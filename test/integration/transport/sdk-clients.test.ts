// The SDK 2.4.0 clients, unchanged, against troupe's uWS transport: HTTP (createHttpStream) and
// WebSocket (createWebSocketStream with the `ws` package), over real sockets on 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { WebSocket } from 'ws';
import { authHeaders, startHarness, until, type Harness } from '../../support/transport/harness.js';

type Kind = 'http' | 'ws';

function openStream(h: Harness, kind: Kind): acp.Stream {
  if (kind === 'http') return createHttpStream(h.acpUrl, { headers: authHeaders });
  return createWebSocketStream(h.acpUrl.replace(/^http/, 'ws'), { WebSocket: WebSocket as never, headers: authHeaders });
}

/** A client app that records update texts per session and answers permission requests. */
function recordingClient(answer: 'allow' | 'reject' = 'allow') {
  const updates = new Map<string, string[]>();
  const permissionRequests: string[] = [];
  const app = acp
    .client()
    .onNotification('session/update', ({ params }) => {
      const content = (params.update as { content?: { text?: string } }).content;
      const list = updates.get(params.sessionId) ?? [];
      list.push(content?.text ?? '');
      updates.set(params.sessionId, list);
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissionRequests.push(params.sessionId);
      return { outcome: { outcome: 'selected', optionId: answer } };
    });
  return { app, updates, permissionRequests };
}

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };
const prompt = (sessionId: string, text: string): acp.PromptRequest => ({ sessionId, prompt: [{ type: 'text', text }] });

for (const kind of ['http', 'ws'] as const) {
  describe(`SDK ${kind} client`, { timeout: 20_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(() => h.close());

    test('initialize, then two sessions prompted concurrently on one connection', async () => {
      const c = recordingClient();
      const before = h.agent.connections.length;
      const result = await c.app.connectWith(openStream(h, kind), async (agent) => {
        const init = await agent.request('initialize', INIT);
        assert.equal(init.protocolVersion, 1);
        assert.equal(init.agentCapabilities?.loadSession, true);
        const s1 = await agent.request('session/new', { cwd: '/tmp', mcpServers: [] });
        const s2 = await agent.request('session/new', { cwd: '/tmp', mcpServers: [] });
        const [r1, r2] = await Promise.all([agent.request('session/prompt', prompt(s1.sessionId, 'a')), agent.request('session/prompt', prompt(s2.sessionId, 'b'))]);
        return { s1: s1.sessionId, s2: s2.sessionId, r1, r2 };
      });
      assert.equal(h.agent.connections.length, before + 1, 'one transport connection for both sessions');
      assert.notEqual(result.s1, result.s2);
      assert.equal(result.r1.stopReason, 'end_turn');
      assert.equal(result.r2.stopReason, 'end_turn');
      assert.deepEqual(c.updates.get(result.s1), ['chunk 1', 'chunk 2', 'chunk 3']);
      assert.deepEqual(c.updates.get(result.s2), ['chunk 1', 'chunk 2', 'chunk 3']);
      const rec = h.agent.connections.at(-1)!;
      assert.equal(rec.channel.transport, kind);
      // Ending connectWith closes the transport: DELETE over HTTP, a socket close over WS.
      assert.equal(await rec.closed, kind === 'http' ? 'deleted' : 'socket_closed');
    });

    test('sessions on separate connections', async () => {
      const c1 = recordingClient();
      const c2 = recordingClient();
      const run = (c: typeof c1) =>
        c.app.connectWith(openStream(h, kind), async (agent) => {
          await agent.request('initialize', INIT);
          const s = await agent.request('session/new', { cwd: '/tmp', mcpServers: [] });
          const r = await agent.request('session/prompt', prompt(s.sessionId, 'x'));
          return { sessionId: s.sessionId, stop: r.stopReason };
        });
      const [a, b] = await Promise.all([run(c1), run(c2)]);
      assert.notEqual(a.sessionId, b.sessionId);
      assert.deepEqual(c1.updates.get(a.sessionId), ['chunk 1', 'chunk 2', 'chunk 3']);
      assert.deepEqual(c2.updates.get(b.sessionId), ['chunk 1', 'chunk 2', 'chunk 3']);
      assert.equal(c1.updates.has(b.sessionId), false, 'no cross-talk between connections');
      const ids = new Set(h.agent.connections.slice(-2).map((r) => r.channel.id));
      assert.equal(ids.size, 2);
    });

    test('a permission round trip reaches the agent with its session', async () => {
      const c = recordingClient('allow');
      const out = await c.app.connectWith(openStream(h, kind), async (agent) => {
        await agent.request('initialize', INIT);
        const s = await agent.request('session/new', { cwd: '/tmp', mcpServers: [] });
        const r = await agent.request('session/prompt', prompt(s.sessionId, 'needs permission'));
        return { sessionId: s.sessionId, stop: r.stopReason };
      });
      assert.equal(out.stop, 'end_turn');
      assert.deepEqual(c.permissionRequests, [out.sessionId]);
      assert.deepEqual(c.updates.get(out.sessionId), ['chunk 1', 'chunk 2', 'chunk 3', 'permission allow']);
      const rec = h.agent.connections.at(-1)!;
      const answer = rec.received.find((r) => r.message['id'] === 'perm-1' && !('method' in r.message));
      assert.ok(answer, 'the client response reached the agent under the agent-chosen id');
      assert.equal(answer.context.sessionId, out.sessionId);
    });

    test('session/cancel ends a waiting prompt with stopReason cancelled', async () => {
      const c = recordingClient();
      const stop = await c.app.connectWith(openStream(h, kind), async (agent) => {
        await agent.request('initialize', INIT);
        const s = await agent.request('session/new', { cwd: '/tmp', mcpServers: [] });
        const pending = agent.request('session/prompt', prompt(s.sessionId, 'wait-for-cancel'));
        await until(() => (c.updates.get(s.sessionId)?.length ?? 0) === 3, 'prompt updates');
        await agent.notify('session/cancel', { sessionId: s.sessionId });
        return (await pending).stopReason;
      });
      assert.equal(stop, 'cancelled');
    });

    test('session/load resolves only after all 1000 replayed updates arrived', async () => {
      const c = recordingClient();
      const seenAtResolve = await c.app.connectWith(openStream(h, kind), async (agent) => {
        await agent.request('initialize', INIT);
        await agent.request('session/load', { sessionId: 'ses_old', cwd: '/tmp', mcpServers: [], _meta: { replay: 1000 } } as never);
        return c.updates.get('ses_old')?.length ?? 0;
      });
      assert.equal(seenAtResolve, 1000);
      const texts = c.updates.get('ses_old')!;
      assert.equal(texts[0], 'replay 1');
      assert.equal(texts[999], 'replay 1000');
    });
  });
}
