/**
 * Heap figures of a daemon under the bench, through the V8 inspector protocol (the daemon is started
 * with `--inspect=127.0.0.1:0`, a node flag of the daemon process only; its children are launched
 * with their own flags and do not inherit it). Bench-only: the daemon has no GC or snapshot route.
 * - `gcHeap()`: a full GC (HeapProfiler.collectGarbage, twice), then `process.memoryUsage()`, so
 *   that a heap delta between two points is live objects, not garbage waiting for the collector;
 * - `snapshotSummary()`: a heap snapshot folded into self size and count per (node type, name), to
 *   diff two points and see what each session costs.
 */
import WebSocket from 'ws';
import type { Served } from './daemon-support.js';
import { sleep } from './daemon-support.js';

export interface HeapUsage {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

export interface HeapClass {
  name: string;
  count: number;
  selfBytes: number;
}

export class DaemonInspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private chunks: string[] = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') this.chunks.push(msg.params.chunk);
      if (typeof msg.id !== 'number') return;
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(JSON.stringify(msg.error)));
      else p?.resolve(msg.result);
    });
  }

  /** Connects to the inspector the daemon announced on stderr (`Debugger listening on ws://…`). */
  static async connect(d: Served, timeoutMs = 10_000): Promise<DaemonInspector> {
    const deadline = Date.now() + timeoutMs;
    let url: string | undefined;
    while (!(url = /Debugger listening on (ws:\/\/\S+)/.exec(d.stderr())?.[1])) {
      if (Date.now() > deadline) throw new Error('the daemon announced no inspector (start it with --inspect=127.0.0.1:0)');
      await sleep(20);
    }
    const ws = new WebSocket(url, { maxPayload: 2 ** 31 });
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
    return new DaemonInspector(ws);
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** A full garbage collection, then the daemon's memory usage. */
  async gcHeap(): Promise<HeapUsage> {
    await this.call('HeapProfiler.collectGarbage');
    await this.call('HeapProfiler.collectGarbage');
    const r = await this.call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    return JSON.parse(r.result.value);
  }

  /** A heap snapshot (which collects garbage first), folded by node type and constructor name. */
  async snapshotSummary(): Promise<Map<string, HeapClass>> {
    this.chunks = [];
    await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    const snap = JSON.parse(this.chunks.join(''));
    this.chunks = [];
    const fields: string[] = snap.snapshot.meta.node_fields;
    const types: string[] = snap.snapshot.meta.node_types[0];
    const width = fields.length;
    const [iType, iName, iSize] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
    const nodes: number[] = snap.nodes;
    const strings: string[] = snap.strings;
    const out = new Map<string, HeapClass>();
    for (let i = 0; i < nodes.length; i += width) {
      const type = types[nodes[i + iType]!]!;
      // Strings and code are grouped by type: their names are their contents.
      const name = type === 'object' || type === 'closure' || type === 'native' ? `${type}:${strings[nodes[i + iName]!]}` : type;
      const c = out.get(name) ?? { name, count: 0, selfBytes: 0 };
      c.count++;
      c.selfBytes += nodes[i + iSize]!;
      out.set(name, c);
    }
    return out;
  }

  close(): void {
    this.ws.close();
  }
}

/** What grew between two snapshot summaries, largest first, per `per` (e.g. per session). */
export function heapGrowth(before: Map<string, HeapClass>, after: Map<string, HeapClass>, per: number, top = 25): { name: string; countPer: number; bytesPer: number }[] {
  const rows = [...after.values()].map((a) => {
    const b = before.get(a.name);
    return { name: a.name, countPer: (a.count - (b?.count ?? 0)) / per, bytesPer: (a.selfBytes - (b?.selfBytes ?? 0)) / per };
  });
  return rows
    .sort((x, y) => y.bytesPer - x.bytesPer)
    .slice(0, top)
    .map((r) => ({ name: r.name, countPer: Math.round(r.countPer * 100) / 100, bytesPer: Math.round(r.bytesPer) }));
}
