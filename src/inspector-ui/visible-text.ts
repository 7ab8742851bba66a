/**
 * Text from a session (a prompt, a steer, a tool's title, the model's words, a cwd, an id from a
 * link) as the page shows it: every character that would not read as itself is spelled out as its
 * escape (`\u202e`), the way the CLI prints it (src/cli/terminal-text.ts). A bidi override or
 * isolate left in place made the rest of its row read in another order than its characters (the
 * "Trojan Source" reordering: `prompt "a ‮txt.exe"` drawn as `prompt "a exe.txt"`); until 2026-12-07
 * the timeline, the Cause pane and the notices showed them so. The page may import nothing of
 * troupe's at run time (only src/inspector-ui is served), so the set is written here again, the
 * CLI's: the C0 controls but tab and line feed (which the page shows as spaces), DEL, the C1
 * controls and core's BIDI_CONTROLS (src/core/one-line.ts), U+202A–U+202E and U+2066–U+2069; and
 * the line and paragraph separators, which would break a row or a JSON string in two.
 */
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** What JSON.stringify leaves as they are: it escapes C0 controls itself. */
const HIDDEN_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `s` with its unreadable characters spelled out (`\u202e`). */
export const visible = (s: string): string => s.replace(HIDDEN, escaped);

/** `value` as indented JSON, with what JSON leaves unreadable spelled out too (still valid JSON). */
export const visibleJson = (value: unknown): string => JSON.stringify(value, null, 2).replace(HIDDEN_IN_JSON, escaped);
