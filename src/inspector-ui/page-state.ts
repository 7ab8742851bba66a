/**
 * What the inspector page holds (main.ts draws it): the session list and the live feed's moves of
 * it, and of the session shown its log, the transitions rebuilt from it and the live ones, the
 * timeline's rows, the moment travelled to, and the feeds. One object, which the page's console
 * handle (`troupeInspector.app`) and the tests read.
 */
import type { Feed } from './api.js';
import type { LiveFold } from './live-states.js';
import type { Statechart } from './statechart.js';
import type { Row } from './timeline.js';
import type { LiveTransition, LogEvent, MachineName, ReplayedTransition, SessionRow, States } from './types.js';

export const app = {
  charts: new Map<MachineName, Statechart>(),
  sessions: [] as SessionRow[],
  /** Each session's machines as the live feed moved them (for the list; live-states.ts). */
  machines: new Map<string, LiveFold>(),
  /** Sessions whose rows the feed moved since they were drawn. */
  redraw: new Set<string>(),
  redrawTimer: undefined as number | undefined,
  /** What the live feed's state says in the header: shown again once the list can be read again. */
  feedSays: ['connecting…', ''] as [string, 'live' | 'down' | ''],
  /** The session list could not be read the last time it was asked for. */
  listFailed: false,
  selected: undefined as string | undefined,
  events: [] as LogEvent[],
  replayed: [] as ReplayedTransition[],
  /** The daemon's replay `replayed` comes from, and the log seq it reaches: the next ask gets what follows. */
  replayFrom: undefined as { replayId: string; lastSeq: number } | undefined,
  /** The session shown's live transitions: only pushed to, or replaced by another array (LiveFolder folds only what was pushed). */
  live: [] as LiveTransition[],
  /** The highest transition number in `live`: the feed delivers in that order, so anything at or below it is there already. */
  liveN: 0,
  gaps: [] as { at: number; text: string }[],
  rows: [] as Row[],
  travel: undefined as number | undefined,
  shown: {} as States,
  lastEvent: {} as Partial<Record<MachineName, string>>,
  transitions: undefined as Feed | undefined,
  log: undefined as Feed | undefined,
  poll: undefined as number | undefined,
  loggedOut: false,
  /** Gaps of the live feed met: a reading again after one is superseded by the next's (readAgainAfterGap). */
  feedGaps: 0,
};
