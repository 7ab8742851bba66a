// Drives the pure turn machine with effects the test controls: every invoked effect becomes a
// pending promise the test resolves or rejects, and every named action is recorded.
import { createActor, fromPromise } from 'xstate';
import { turnMachine, type TurnInput, type TurnResult } from '../../src/machines/turn.machine.js';

export interface Pending {
  name: string;
  input: any;
  signal: AbortSignal;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export const tick = () => new Promise<void>((r) => setImmediate(r));

export function driveTurn(input: TurnInput = { turnId: 't1', maxSteps: 5 }) {
  const pending: Pending[] = [];
  const actions: { name: string; params: any }[] = [];
  const effect = (name: string) =>
    fromPromise<any, any>(
      ({ input, signal }) =>
        new Promise((resolve, reject) => pending.push({ name, input, signal, resolve, reject })),
    );
  const record = (name: string) => (_: unknown, params: unknown) => void actions.push({ name, params });
  const machine = turnMachine.provide({
    actors: {
      preflight: effect('preflight'),
      compact: effect('compact'),
      modelStep: effect('modelStep'),
      decideTool: effect('decideTool'),
      askPermission: effect('askPermission'),
      runTool: effect('runTool'),
    } as never,
    actions: {
      steerReceived: record('steerReceived'),
      deliverSteers: record('deliverSteers'),
      cancelPermission: record('cancelPermission'),
      cancelTool: record('cancelTool'),
      finish: record('finish'),
    },
  });
  const actor = createActor(machine, { input }).start();
  return {
    actor,
    actions,
    pending,
    /** The state path, e.g. `tools.awaitingPermission`. */
    state(): string {
      const v = actor.getSnapshot().value;
      return typeof v === 'string' ? v : Object.entries(v).map(([k, s]) => `${k}.${s}`)[0]!;
    },
    /** The effect invoked last, which must be `name`. */
    current(name: string): Pending {
      const p = pending.at(-1);
      if (!p || p.name !== name) throw new Error(`expected effect ${name} to be running, got ${p?.name}`);
      return p;
    },
    async settle(name: string, value: unknown) {
      this.current(name).resolve(value);
      await tick();
    },
    async fail(name: string, error: unknown) {
      this.current(name).reject(error);
      await tick();
    },
    output(): TurnResult {
      return actor.getSnapshot().output!;
    },
    named(name: string) {
      return actions.filter((a) => a.name === name);
    },
  };
}
