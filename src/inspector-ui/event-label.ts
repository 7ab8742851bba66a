/**
 * A machine event as the page shows it. XState names a delayed transition's event after the delay
 * and the state (`xstate.after.backoff.child.backoff`, the child's restart after its backoff): shown
 * as `after backoff`, as the chart labels its edge. Until 2026-12-07 only the chart did: the timeline,
 * the caption's last event and the event floated on the chart read the raw name.
 */
export const shownEvent = (event: string): string => event.replace(/^xstate\.after\.([^.]+)\..*$/, 'after $1');
