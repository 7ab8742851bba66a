/**
 * An in-process double of the relay for transport tests: implements the AcpAgentSide seam with raw
 * JSON-RPC. It answers initialize, session/new, session/load (replays N updates first), session/prompt
 * (updates, an optional permission round trip, cancel), and `_test/flood` (output until backpressure
 * or close). Every agent → client send is awaited, as the relay must.
 */
import type { AcpAgentSide, AcpClientChannel, AcpCloseReason, AcpConnectionPeer, AcpInboundContext, JsonRpcMessage, JsonRpcRequest } from '../../../src/daemon/http/acp/acp.types.js';

export interface TestAgentOptions {
  /** session/update notifications replayed by session/load. Default 3. */
  loadReplay?: number;
  /** session/update notifications sent by each session/prompt. Default 3. */
  promptUpdates?: number;
}

export interface ConnectionRecord {
  channel: AcpClientChannel;
  initialize: JsonRpcRequest;
  received: Array<{ message: JsonRpcMessage; context: AcpInboundContext }>;
  closedReason?: AcpCloseReason;
  closed: Promise<AcpCloseReason>;
  /** Number of flood messages whose send had resolved. */
  floodSent: number;
}

interface Turn {
  cancelled: boolean;
  onCancel?: () => void;
}

export class TestAgent implements AcpAgentSide {
  readonly connections: ConnectionRecord[] = [];
  private sessionCounter = 0;

  constructor(private readonly options: TestAgentOptions = {}) {}

  /** The record of the connection with this id. */
  connection(id: string): ConnectionRecord {
    const rec = this.connections.find((c) => c.channel.id === id);
    if (!rec) throw new Error(`no connection ${id}`);
    return rec;
  }

  async open(channel: AcpClientChannel, initialize: JsonRpcRequest): Promise<AcpConnectionPeer> {
    let resolveClosed!: (r: AcpCloseReason) => void;
    const rec: ConnectionRecord = { channel, initialize, received: [], closed: new Promise((r) => (resolveClosed = r)), floodSent: 0 };
    this.connections.push(rec);
    const turns = new Map<string, Turn>();
    const waiting = new Map<string, (msg: JsonRpcMessage) => void>();
    let requestCounter = 0;
    const send = (msg: JsonRpcMessage, answering?: AcpInboundContext): Promise<void> => channel.send(msg, answering);
    const update = (sessionId: string, text: string): Promise<void> =>
      send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
    const ask = (sessionId: string, turn: Turn): Promise<JsonRpcMessage | undefined> => {
      const id = `perm-${++requestCounter}`;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        turn.onCancel = () => resolve(undefined);
        void send({
          jsonrpc: '2.0',
          id,
          method: 'session/request_permission',
          params: { sessionId, toolCall: { toolCallId: `call-${requestCounter}`, title: 'Write file' }, options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] },
        });
      });
    };

    const handle = async (msg: JsonRpcMessage, context: AcpInboundContext): Promise<void> => {
      // Every answer names the context its request came with: the transport routes it by that, exactly.
      const respond = (id: unknown, result: unknown): Promise<void> => send({ jsonrpc: '2.0', id, result }, context);
      const method = msg['method'];
      const params = (msg['params'] ?? {}) as Record<string, unknown>;
      const sessionId = typeof params['sessionId'] === 'string' ? params['sessionId'] : '';
      if (method === undefined) {
        waiting.get(String(msg['id']))?.(msg);
        waiting.delete(String(msg['id']));
        return;
      }
      switch (method) {
        case 'session/new':
          return respond(msg['id'], { sessionId: `ses_test_${++this.sessionCounter}` });
        case 'session/load': {
          const n = typeof (params['_meta'] as Record<string, unknown> | undefined)?.['replay'] === 'number' ? ((params['_meta'] as Record<string, number>)['replay'] as number) : (this.options.loadReplay ?? 3);
          for (let i = 1; i <= n; i++) await update(sessionId, `replay ${i}`);
          return respond(msg['id'], {});
        }
        case 'session/prompt': {
          const turn: Turn = { cancelled: false };
          turns.set(sessionId, turn);
          const prompt = JSON.stringify(params['prompt'] ?? '');
          for (let i = 1; i <= (this.options.promptUpdates ?? 3); i++) await update(sessionId, `chunk ${i}`);
          let stopReason = 'end_turn';
          if (prompt.includes('permission')) {
            const answer = await ask(sessionId, turn);
            const outcome = ((answer?.['result'] as Record<string, unknown> | undefined)?.['outcome'] as Record<string, unknown> | undefined) ?? {};
            await update(sessionId, `permission ${outcome['outcome'] === 'selected' ? String(outcome['optionId']) : 'cancelled'}`);
          }
          if (prompt.includes('wait-for-cancel') && !turn.cancelled) await new Promise<void>((r) => (turn.onCancel = r));
          if (turn.cancelled) stopReason = 'cancelled';
          turns.delete(sessionId);
          return respond(msg['id'], { stopReason });
        }
        case 'session/cancel': {
          const turn = turns.get(sessionId);
          if (turn) {
            turn.cancelled = true;
            turn.onCancel?.();
          }
          return;
        }
        case '_test/flood': {
          const size = Number(params['size'] ?? 1024);
          const text = 'x'.repeat(size);
          respond(msg['id'], { started: true });
          for (let i = 0; i < Number(params['count'] ?? 1e6) && !channel.isClosed; i++) {
            await update(sessionId || 'flood', text);
            rec.floodSent++;
          }
          return;
        }
        case '_test/release': {
          // As the relay does once a session is closed or deleted: its stream keeps nothing for resume.
          // `answerFirst`: in the relay's order, the answer queued (on the stream of the session it
          // came on) before the release, so that the stream still holds it when released.
          if (params['answerFirst'] !== true) {
            channel.releaseSession(String(params['release']));
            return respond(msg['id'], {});
          }
          const answered = respond(msg['id'], {});
          channel.releaseSession(String(params['release']));
          return answered;
        }
        case '_test/echo':
          return respond(msg['id'], { params, context: rec.received.at(-1)?.context ?? {} });
        default:
          if ('id' in msg) return send({ jsonrpc: '2.0', id: msg['id'], error: { code: -32601, message: `Method not found: ${String(method)}` } }, context);
      }
    };

    return {
      initializeResponse: {
        jsonrpc: '2.0',
        id: initialize.id,
        result: { protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: 'transport-test-agent', version: '0.0.0' }, authMethods: [] },
      },
      receive: (message, context) => {
        rec.received.push({ message, context });
        // Like the SDK, dispatch without blocking the inbound queue.
        void handle(message, context).catch((err) => console.error('test agent failed', err));
      },
      closed: (reason) => {
        rec.closedReason = reason;
        resolveClosed(reason);
      },
    };
  }
}
