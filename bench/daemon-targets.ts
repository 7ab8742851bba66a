/**
 * The targets for the daemon, checked against the figures of one daemon-bench run, each with
 * its ratio to the baseline measured in the same run.
 */
import { readFileSync } from 'node:fs';
import { ratio, type Target } from './daemon-support.js';

/** The memory target's "20 MB" and "64 KB", in the units the bench measures. */
const CHILD_PSS_LIMIT_MIB = 20e6 / 2 ** 20;
const DAEMON_PER_SESSION_LIMIT_KIB = 64e3 / 2 ** 10;

/** The last `BENCH_LIVE=1000` run of bench/daemon-live.ts, if any: what it created, and when. */
function fullLiveRun(): Record<string, unknown> | undefined {
  try {
    const r = JSON.parse(readFileSync('bench/results/daemon-live-1000.json', 'utf8'));
    return { file: 'bench/results/daemon-live-1000.json', date: r.date, stored: r.stored ?? 0, created: r.sessions?.created, failed: r.sessions?.failed, childPssMeanMiB: r.memory?.childPssMiB?.mean };
  } catch {
    return undefined;
  }
}

/** One entry per target; `met` is a plain boolean; `basis` says when a figure is extrapolated. */
export function judge(r: any): Record<string, Target & Record<string, unknown>> {
  const sn = r.sessionNew;
  const rt = r.roundTrip;
  const st = r.streaming;
  const sc = r.scale;
  const fresh = sc.fresh;
  const stored = sc.withStored;
  const agg = fresh.aggregate;
  const mem = fresh.memory;
  const loop = fresh.eventLoop;
  const live = fresh.live;
  const warm = sn.daemonWarmPoolMs;
  const cold = sn.daemonColdMs;
  const refNew = sn.referenceInProcessMs;
  // Round trip, streaming and aggregate are judged on the lean clients (bench/daemon-lean.ts): the SDK
  // client spends ~0.5 ms per HTTP request and ~19 µs per event itself, which is not the relay's
  // time; the SDK-client figures stay alongside (`sdkClient`).
  const lrt = rt.lean;
  const lst = st.lean;
  const lagg = agg.lean;
  const rtt = lrt.daemonHttp.sessionStateUs;
  const streamRatio = ratio(lst.daemonHttp.updatesPerSecond, lst.stdioDirect.updatesPerSecond);
  const sdkStreamRatio = ratio(st.daemonHttp.updatesPerSecond, st.stdioDirect.updatesPerSecond);
  const leanOne = lagg.daemon.oneClientPerSession;
  const leanFan = lagg.daemon.sseAndWsPerSession;
  const leanRef = lagg.reference.oneClientPerSession;
  return {
    warmPoolSessionNew: {
      target: 'p50 ≤ 5 ms, p99 ≤ 25 ms, and p50 no slower than the in-process reference',
      measured: { p50: warm.p50, p99: warm.p99, referenceP50: refNew.p50, referenceP99: refNew.p99 },
      ratioVsReference: { p50: ratio(warm.p50, refNew.p50), p99: ratio(warm.p99, refNew.p99) },
      ratioVsIdleStdioChild: { p50: ratio(warm.p50, sn.stdioIdleChildInitAndNewMs.p50) },
      ratioVsRefillFrozen: { p50: ratio(warm.p50, sn.daemonWarmPoolRefillFrozenMs.p50) },
      // Judged against the reference's samples taken like the daemon's, each after the same idle
      // spell; its back-to-back samples (as judged until 2026-11-30) are kept for context.
      basis: 'reference samples interleaved with the daemon\'s, each of both after the same idle spell (sessionNew.note)',
      ratioVsReferenceBackToBack: sn.referenceBackToBackMs ? { p50: ratio(warm.p50, sn.referenceBackToBackMs.p50) } : undefined,
      // Judged on the lean client since 2026-12-07, as the round trip is; before, on the SDK's.
      sdkClient: sn.sdkClient && { p50: sn.sdkClient.daemonWarmPoolMs.p50, p99: sn.sdkClient.daemonWarmPoolMs.p99, referenceP50: sn.sdkClient.referenceInProcessMs.p50 },
      met: warm.p50 <= 5 && warm.p99 <= 25 && warm.p50 <= refNew.p50,
    },
    coldSessionNew: {
      target: 'p50 ≤ 120 ms, p99 ≤ 200 ms (--pool 0; judged on the default launch: bin/troupe.js, the agent script with its code cache)',
      measured: { p50: cold.p50, p99: cold.p99 },
      // --snapshot meets the latency but costs each child its blob in private memory, failing the
      // memory target; both are reported, the target is judged on what a daemon does by default.
      withSnapshot: sn.childStart && {
        p50: sn.childStart.snapshot.coldSessionNewMs.p50,
        p99: sn.childStart.snapshot.coldSessionNewMs.p99,
        idleChildPssMiBAfter12s: sn.childStart.snapshot.idlePssMiB.after12s.mean,
        bundleIdleChildPssMiBAfter12s: sn.childStart.bundle.idlePssMiB.after12s.mean,
      },
      ratioVsReference: { p50: ratio(cold.p50, refNew.p50) },
      ratioVsNodeSpawnToExit: { p50: ratio(cold.p50, sn.nodeSpawnToExitMs.p50) },
      met: cold.p50 <= 120 && cold.p99 <= 200,
    },
    relayRoundTrip: {
      target: 'HTTP in → child → SSE out: p50 ≤ 250 µs, p99 ≤ 3 ms (`_troupe/session_state`, lean HTTP client: raw keep-alive POST + SSE reader)',
      measured: {
        p50Us: rtt.p50,
        p99Us: rtt.p99,
        wsP50Us: lrt.daemonWs.sessionStateUs.p50,
        stdioP50Us: lrt.stdioDirect.sessionStateUs.p50,
        relayOnlyP50Us: lrt.relayOnlyUs.p50,
        referenceP50Us: lrt.referenceHttp.sessionStateUs.p50,
        floorP50Us: lrt.relayFloorUs?.p50,
        floorP99Us: lrt.relayFloorUs?.p99,
      },
      // Not judged, for context: the same three once V8 has optimized the path (roundTrip.lean.steady).
      // The judged series is a fresh session's, as a client meets it; most of its gap to these is the
      // new child's unoptimized code (bench/README.md, "Fresh and in service").
      inService: lrt.steady
        ? { p50Us: lrt.steady.daemonHttpUs.p50, p99Us: lrt.steady.daemonHttpUs.p99, floorP50Us: lrt.steady.relayFloorUs.p50, stdioP50Us: lrt.steady.stdioDirectUs.p50, met: lrt.steady.daemonHttpUs.p50 <= 250 && lrt.steady.daemonHttpUs.p99 <= 3000 }
        : undefined,
      // The least relay in front of the least agent on the same SDK, through the same client
      // (bench/relay-floor.ts), measured as the judged series is: a fresh process, after
      // BENCH_WARMUP requests (in service it is lower: inService.floorP50Us).
      ratioVsFloor: lrt.relayFloorUs ? { p50: ratio(rtt.p50, lrt.relayFloorUs.p50), p99: ratio(rtt.p99, lrt.relayFloorUs.p99) } : undefined,
      ratioVsStdio: { p50: ratio(rtt.p50, lrt.stdioDirect.sessionStateUs.p50), p99: ratio(rtt.p99, lrt.stdioDirect.sessionStateUs.p99) },
      ratioVsReference: { p50: ratio(rtt.p50, lrt.referenceHttp.sessionStateUs.p50), p99: ratio(rtt.p99, lrt.referenceHttp.sessionStateUs.p99) },
      sdkClient: { p50Us: rt.daemonHttp.sessionStateUs.p50, p99Us: rt.daemonHttp.sessionStateUs.p99, stdioP50Us: rt.stdioDirect.sessionStateUs.p50, relayOnlyP50Us: rt.relayOnlyUs.p50, referenceP50Us: rt.referenceHttp.sessionStateUs.p50 },
      met: rtt.p50 <= 250 && rtt.p99 <= 3000,
    },
    streamingThroughput: {
      target: '≥ 60% of direct stdio throughput (updates/s, log on; lean clients on both sides)',
      measured: { daemonHttpUpdatesPerSecond: lst.daemonHttp.updatesPerSecond, daemonWsUpdatesPerSecond: lst.daemonWs.updatesPerSecond, stdioUpdatesPerSecond: lst.stdioDirect.updatesPerSecond, referenceHttpUpdatesPerSecond: lst.referenceHttp.updatesPerSecond },
      ratioVsStdio: { http: streamRatio, ws: ratio(lst.daemonWs.updatesPerSecond, lst.stdioDirect.updatesPerSecond) },
      warmChildRatioVsStdio: { http: ratio(lst.warmChild.daemonHttp.updatesPerSecond, lst.warmChild.stdioDirect.updatesPerSecond), ws: ratio(lst.warmChild.daemonWs.updatesPerSecond, lst.warmChild.stdioDirect.updatesPerSecond) },
      sdkClient: { ratioVsStdio: { http: sdkStreamRatio, ws: ratio(st.daemonWs.updatesPerSecond, st.stdioDirect.updatesPerSecond) }, daemonHttpUpdatesPerSecond: st.daemonHttp.updatesPerSecond, stdioUpdatesPerSecond: st.stdioDirect.updatesPerSecond },
      met: Math.min(streamRatio, ratio(lst.daemonWs.updatesPerSecond, lst.stdioDirect.updatesPerSecond)) >= 0.6,
    },
    aggregateEvents: {
      target: `≥ 250k events/s with ≤ 100 streaming sessions (N SSE + N WS clients), and ≥ 2× the SDK reference (lean clients on both)`,
      measured: { fanOutEventsPerSecond: leanFan.eventsPerSecond, oneClientEventsPerSecond: leanOne.eventsPerSecond, referenceEventsPerSecond: leanRef.eventsPerSecond, sessions: leanOne.sessions },
      cpuUsPerEvent: { fanOut: leanFan.cpuUsPerEvent, oneClient: leanOne.cpuUsPerEvent, reference: leanRef.cpuUsPerEvent },
      ratioVsReference: { oneClientPerSession: ratio(leanOne.eventsPerSecond, leanRef.eventsPerSecond), fanOut: ratio(leanFan.eventsPerSecond, leanRef.eventsPerSecond) },
      sdkClient: {
        fanOutEventsPerSecond: agg.daemonSseAndWsPerSession.eventsPerSecond,
        oneClientEventsPerSecond: agg.daemonOneClientPerSession.eventsPerSecond,
        referenceEventsPerSecond: agg.referenceOneClientPerSession.eventsPerSecond,
        ratioVsReference: { oneClientPerSession: ratio(agg.daemonOneClientPerSession.eventsPerSecond, agg.referenceOneClientPerSession.eventsPerSecond) },
      },
      // Not judged, for context: the same sessions and clients on long replies (bench/README.md).
      longReplies: lagg.daemon.longReplies && lagg.reference.longReplies
        ? {
            chunksPerSession: lagg.daemon.longReplies.chunksPerSession,
            fanOutEventsPerSecond: lagg.daemon.longReplies.eventsPerSecond,
            referenceEventsPerSecond: lagg.reference.longReplies.eventsPerSecond,
            cpuUsPerEvent: { fanOut: lagg.daemon.longReplies.cpuUsPerEvent, reference: lagg.reference.longReplies.cpuUsPerEvent },
            ratioVsReference: { fanOut: ratio(lagg.daemon.longReplies.eventsPerSecond, lagg.reference.longReplies.eventsPerSecond) },
          }
        : undefined,
      met: Math.max(leanFan.eventsPerSecond, leanOne.eventsPerSecond) >= 250_000 && leanOne.eventsPerSecond >= 2 * leanRef.eventsPerSecond,
    },
    liveSessions: {
      target: '≥ 1,000 live sessions with 10,000 stored',
      basis: `a burst of ${stored.burst.requested} session/new with ${stored.stored} stored (created ${stored.burst.created}); ${live.measuredLive} live sessions on a fresh home measured for memory and fds, 1,000 extrapolated from them; 1,000 children were not run within the time budget`,
      measured: { storedSessions: stored.stored, burstRequested: stored.burst.requested, burstCreatedWithStored: stored.burst.created, burstFailedWithStored: stored.burst.failed, liveMeasured: live.measuredLive, byMemory: live.extrapolated.sessionsByMemory, byFds: live.extrapolated.sessionsByFds, secondsToSpawn1000: live.extrapolated.secondsToSpawn1000 },
      met: stored.stored >= 10_000 && stored.burst.failed === 0 && live.extrapolated.sessionsByMemory >= 1000 && live.extrapolated.sessionsByFds >= 1000,
      // The real thing is too long for this bench; daemon-live.ts holds 1,000 (its own, earlier run).
      separateFullRun: fullLiveRun(),
    },
    memory: {
      target: '≤ 20 MB PSS per idle child, ≤ 64 KB of daemon memory per idle session',
      measured: {
        childPssMeanMiB: mem.childPssMiB.mean,
        childPssMaxMiB: mem.childPssMiB.max,
        daemonAnonymousPerSessionAfterGcKiB: mem.daemonPerSessionAfterGcKiB.anonymous,
        daemonPssPerSessionAfterGcKiB: mem.daemonPerSessionAfterGcKiB.pss,
        daemonHeapPerSessionAfterGcKiB: mem.daemonPerSessionAfterGcKiB.heapUsed,
        daemonPerSessionNoGcKiB: mem.daemonPerSessionKiB,
        referencePerSessionKiB: mem.referencePerSessionKiB,
      },
      ratioVsReference: { totalPerSession: ratio(mem.totalPerSessionMiB.daemon, mem.totalPerSessionMiB.reference) },
      // Judged on the daemon's anonymous memory (heap + malloc) with a full GC forced at both ends.
      // Until 2026-11-30 it was the PSS delta without a GC, which moved with the collector's timing
      // by more than 64 KiB × N, and under-counts: the daemon's PSS share of the node binary's pages
      // shrinks as children are added.
      daemonPerSessionConclusive: mem.daemonPerSessionAfterGcKiB.anonymous > 0,
      // MB and KB read as decimal units, the stricter reading: 20 MB is 19.07 MiB, 64 KB 62.5 KiB
      // (until 2026-12-07 they were read as MiB and KiB).
      limits: { childPssMiB: CHILD_PSS_LIMIT_MIB, daemonPerSessionKiB: DAEMON_PER_SESSION_LIMIT_KIB },
      met: mem.childPssMiB.mean <= CHILD_PSS_LIMIT_MIB && mem.daemonPerSessionAfterGcKiB.anonymous > 0 && mem.daemonPerSessionAfterGcKiB.anonymous <= DAEMON_PER_SESSION_LIMIT_KIB,
    },
    eventLoop: {
      target: 'daemon loop never blocked > 50 ms, even during a 100-session spawn burst (measured from outside: /v1/health latency every 5 ms)',
      measured: {
        burstMaxMs: loop.daemonDuringBurst.latencyMs.max,
        inDaemonBurstBlockedMaxMs: loop.daemonInDaemonDuringBurst.blockedMaxMs,
        inDaemonBurstStarvedMaxMs: loop.daemonInDaemonDuringBurst.starvedMaxMs,
        inDaemonWithStoredBlockedMaxMs: stored.eventLoop.inDaemonDuringBurst.blockedMaxMs,
        inDaemonWithStoredStarvedMaxMs: stored.eventLoop.inDaemonDuringBurst.starvedMaxMs,
        burstP99Ms: loop.daemonDuringBurst.latencyMs.p99,
        over50ms: loop.daemonDuringBurst.over50ms,
        idleMaxMs: loop.daemonIdle.latencyMs.max,
        burstWithStoredMaxMs: stored.eventLoop.duringBurst.latencyMs.max,
        burstWithStoredOver50ms: stored.eventLoop.duringBurst.over50ms,
        idleWithStoredP50Ms: stored.eventLoop.idle.latencyMs.p50,
        referenceBurstMaxMs: loop.referenceDuringBurst.latencyMs.max,
      },
      ratioVsReference: { burstMax: ratio(loop.daemonDuringBurst.latencyMs.max, loop.referenceDuringBurst.latencyMs.max) },
      met: Math.max(loop.daemonDuringBurst.latencyMs.max, stored.eventLoop.duringBurst.latencyMs.max) <= 50,
    },
  };
}
