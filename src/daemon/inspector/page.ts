/**
 * The inspector page's HTML shell and stylesheet. They ship inside the compiled package (no build
 * step beyond tsc, no CDN): the scripts are the compiled modules of src/inspector-ui, served under
 * /inspect/ui/, and the installed elkjs bundle under /inspect/vendor/.
 */
export const INSPECTOR_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>troupe inspector</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="style.css">
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<script src="vendor/elk.bundled.js"></script>
<script type="module" src="ui/main.js"></script>
</head>
<body>
<header>
  <h1>troupe inspector</h1>
  <span id="feed-status" data-testid="feed-status" class="status">connecting…</span>
  <span id="gaps" data-testid="gaps"></span>
</header>
<main>
  <section id="sessions-pane">
    <h2>Sessions</h2>
    <div class="table-scroll">
    <table id="sessions" data-testid="sessions">
      <thead><tr><th>session</th><th>status</th><th>state</th><th>model</th><th>cwd</th><th>last activity</th><th>restarts</th><th>pid</th></tr></thead>
      <tbody></tbody>
    </table>
    </div>
  </section>
  <section id="detail-pane" hidden>
    <div id="travel" data-testid="travel" class="travel" hidden>
      <span id="travel-text"></span> <button id="back-live" data-testid="back-live">back to live</button>
    </div>
    <div id="charts">
      <figure class="chart" data-machine="session"><figcaption>session <code data-testid="state-session"></code> <span class="last-event" data-testid="event-session"></span></figcaption><div class="svg"></div></figure>
      <figure class="chart" data-machine="turn"><figcaption>turn <span class="turn-id" data-testid="turn-id"></span> <code data-testid="state-turn"></code> <span class="last-event" data-testid="event-turn"></span></figcaption><div class="svg"></div></figure>
      <figure class="chart" data-machine="child"><figcaption>supervised child <code data-testid="state-child"></code> <span class="last-event" data-testid="event-child"></span></figcaption><div class="svg"></div></figure>
    </div>
    <div id="lower">
      <section id="timeline-pane">
        <h2>Timeline <small>(log events and machine transitions on one time axis; select a row to travel back)</small></h2>
        <svg id="strip" data-testid="strip" height="64"></svg>
        <ol id="timeline" data-testid="timeline"></ol>
      </section>
      <section id="cause-pane">
        <h2>Cause</h2>
        <pre id="cause" data-testid="cause">Select a row of the timeline.</pre>
      </section>
    </div>
  </section>
</main>
</body>
</html>
`;

/** Three linked states, in the page's highlight colour. */
export const INSPECTOR_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M9 10 L23 10 M16 13 L16 20" stroke="#e65100" stroke-width="2"/><rect x="2" y="5" width="10" height="9" rx="3" fill="#ffd54f" stroke="#e65100"/><rect x="20" y="5" width="10" height="9" rx="3" fill="#fff" stroke="#555"/><rect x="11" y="20" width="10" height="9" rx="3" fill="#fff" stroke="#555"/></svg>`;

export const INSPECTOR_CSS = `
:root { --bg:#fafafa; --fg:#1d1d1f; --muted:#6b6b70; --line:#d0d0d6; --active:#ffd54f; --active-line:#e65100; --fire:#d81b60;
  --turn:#1565c0; --tool:#2e7d32; --perm:#6a1b9a; --steer:#00838f; --compact:#8d6e63; --crash:#c62828; --restart:#ef6c00; --cancel:#757575; }
* { box-sizing: border-box; }
body { margin:0; font:13px/1.4 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; flex-wrap:wrap; gap:4px 16px; align-items:baseline; padding:8px 16px; border-bottom:1px solid var(--line); background:#fff; }
h1 { font-size:16px; margin:0; }
h2 { font-size:13px; margin:8px 0; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
h2 small { text-transform:none; letter-spacing:0; }
.status { color:var(--muted); }
.status.live { color:#2e7d32; }
.status.down { color:var(--crash); }
#gaps .gap { color:#fff; background:var(--crash); border-radius:3px; padding:1px 6px; margin-left:6px; overflow-wrap:anywhere; }
#gaps .gap[data-mended] { color:var(--muted); background:#eceff1; }
main { padding:8px 16px; }
/* Rows do not wrap (one line per session): the table scrolls sideways in its pane, not the page. */
.table-scroll { overflow-x:auto; }
table { border-collapse:collapse; width:100%; background:#fff; }
th, td { text-align:left; padding:3px 8px; border-bottom:1px solid #eee; white-space:nowrap; }
td.cwd { max-width:260px; overflow:hidden; text-overflow:ellipsis; }
tbody tr { cursor:pointer; }
tbody tr:hover { background:#f0f4ff; }
tbody tr.selected { background:#e3ecff; }
.pill { border-radius:8px; padding:0 6px; background:#eee; }
.pill.active, .pill.running, .pill.busy { background:#fff3c4; }
.pill.failed, .pill.crashed { background:#ffcdd2; }
/* minmax(0, …) and min-width:0: a grid item is otherwise at least as wide as its content, and a
   chart or a long row widened the page instead of scrolling in its pane. */
#charts { display:grid; grid-template-columns: minmax(0,1fr) minmax(0,2fr); grid-template-areas: 'turn turn' 'session child'; gap:8px; margin-top:8px; }
.chart { margin:0; background:#fff; border:1px solid var(--line); border-radius:6px; padding:6px; min-height:120px; min-width:0; overflow:auto; }
.chart[data-machine=turn] { grid-area:turn; } .chart[data-machine=session] { grid-area:session; } .chart[data-machine=child] { grid-area:child; }
.chart[data-machine=session] svg { max-height:300px; }
.chart figcaption { font-weight:600; margin-bottom:4px; }
.chart figcaption code { background:var(--active); padding:0 4px; border-radius:3px; font-weight:400; }
.last-event { font-weight:400; color:var(--fire); }
.turn-id { font-weight:400; color:var(--muted); font-family:ui-monospace, monospace; font-size:11px; }
.chart svg { display:block; width:100%; height:auto; max-height:760px; }
.node rect { fill:#fff; stroke:#8a8a94; stroke-width:1.2; }
.node.compound > rect { fill:#f6f7fb; }
.node.parallel > rect { stroke-dasharray:5 3; }
.node.final > rect { stroke-width:3; }
.node.initial > rect { stroke:#333; }
.node.any > rect { stroke-dasharray:2 2; fill:#fafafa; }
.node text { font-size:12px; fill:#222; }
.node.active > rect { fill:var(--active); stroke:var(--active-line); stroke-width:2.5; }
.node.active.compound > rect { fill:#fff8e1; }
.edge path { fill:none; stroke:#9e9eaa; stroke-width:1.1; marker-end:url(#arrow); }
.edge text { font-size:10px; fill:var(--muted); }
.edge.fire path { stroke:var(--fire); stroke-width:3; animation:fire 1.6s ease-out; }
.edge.fire.again path { animation-name:fire-again; }
.edge.fire text { fill:var(--fire); font-weight:700; }
@keyframes fire { from { stroke-width:6; } to { stroke-width:3; } }
@keyframes fire-again { from { stroke-width:6; } to { stroke-width:3; } }
.toast { font-size:12px; font-weight:700; fill:var(--fire); animation:toast 1.8s ease-out forwards; pointer-events:none; }
@keyframes toast { 0% { opacity:1; transform:translateY(0); } 100% { opacity:0; transform:translateY(-14px); } }
#lower { display:grid; grid-template-columns: minmax(0,2fr) minmax(0,1fr); gap:8px; margin-top:8px; }
#lower > section { min-width:0; }
#timeline { list-style:none; margin:0; padding:0; max-height:420px; overflow:auto; background:#fff; border:1px solid var(--line); border-radius:6px; }
#timeline li { display:grid; grid-template-columns: 92px 64px minmax(0,1fr); gap:8px; padding:2px 8px; border-bottom:1px solid #f2f2f2; cursor:pointer; }
#timeline li:hover { background:#f0f4ff; }
#timeline li.selected { background:#e3ecff; outline:1px solid #90a4ff; }
#timeline li.future { opacity:.45; }
#timeline .t { color:var(--muted); font-variant-numeric:tabular-nums; }
#timeline .lane { font-size:11px; color:var(--muted); }
#timeline .what { overflow-wrap:anywhere; }
#timeline li.gap { background:#ffebee; color:var(--crash); font-weight:600; }
#timeline li.more { display:block; color:var(--muted); font-style:italic; cursor:default; }
#timeline li[data-kind=turn] .what { color:var(--turn); }
#timeline li[data-kind=tool] .what { color:var(--tool); }
#timeline li[data-kind=permission] .what { color:var(--perm); }
#timeline li[data-kind=steer] .what { color:var(--steer); }
#timeline li[data-kind=compaction] .what { color:var(--compact); }
#timeline li[data-kind=crash] .what { color:var(--crash); font-weight:700; }
#timeline li[data-kind=restart] .what { color:var(--restart); font-weight:600; }
#timeline li[data-kind=cancel] .what { color:var(--cancel); font-weight:600; }
#timeline li[data-kind=transition] .what { font-family:ui-monospace, monospace; font-size:12px; }
#strip { width:100%; background:#fff; border:1px solid var(--line); border-radius:6px; margin-bottom:6px; }
#strip .lane-label { font-size:10px; fill:var(--muted); }
#strip .mark { cursor:pointer; }
#strip .cursor { stroke:var(--fire); stroke-width:2; }
#cause { background:#fff; border:1px solid var(--line); border-radius:6px; padding:8px; max-height:480px; overflow:auto; white-space:pre-wrap; word-break:break-word; margin:0; }
.travel { background:#fff3e0; border:1px solid #ffb74d; border-radius:6px; padding:6px 10px; margin-top:8px; }
/* A narrow window (a phone): the charts and the lower panes one under the other, each chart at
   least its readable size (--min-width, set per chart by statechart.ts), scrolled in its pane
   rather than shrunk (the turn machine fitted to 360 px had 3 px text). */
@media (max-width: 800px) {
  header, main { padding-left:8px; padding-right:8px; }
  #charts { grid-template-columns: minmax(0,1fr); grid-template-areas: 'turn' 'session' 'child'; }
  .chart svg { min-width:var(--min-width, 0); }
  #lower { grid-template-columns: minmax(0,1fr); }
  #timeline li { grid-template-columns: 90px 50px minmax(0,1fr); gap:4px; padding:2px 4px; }
}
`;
