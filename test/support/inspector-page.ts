// The inspector page in a real headless Chromium (playwright-core, /usr/bin/chromium or
// CHROMIUM_PATH), logged in the way `troupe inspect --url` does, for the e2e tests of test/e2e/inspector.
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Daemon } from './daemon.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Waits until `f` holds in the page (polling, bounded). */
export async function until(page: Page, what: string, f: () => unknown, timeout = 15_000): Promise<void> {
  try {
    await page.waitForFunction(f, undefined, { timeout, polling: 50 });
  } catch (err) {
    throw new Error(`timed out waiting for ${what}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** A headless Chromium, closed after the test. */
export async function headlessChromium(t: { after(fn: () => unknown): void }): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.after(() => browser.close());
  return browser;
}

/** Logs a fresh page in through a one-time code (at `viewport`) and, given `sessionId`, opens that session in it. */
export async function openInspector(
  browser: Browser,
  d: Daemon,
  sessionId?: string,
  viewport = { width: 1600, height: 1200 },
): Promise<{ page: Page; errors: string[] }> {
  const login = (await d.api('POST', '/v1/login-codes')).json as { url: string };
  const page = await (await browser.newContext({ viewport })).newPage();
  const errors: string[] = [];
  // Script errors only: a refused request (a deleted session's 404) is a console error too.
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(login.url);
  await until(page, 'the page started', () => document.body.dataset.ready === 'true');
  if (sessionId) await showSession(page, sessionId);
  return { page, errors };
}

/** Clicks the session's row in the list and waits for its charts. */
export async function showSession(page: Page, sessionId: string): Promise<void> {
  await page.waitForSelector(`#sessions tr[data-session="${sessionId}"]`, { timeout: 15_000 });
  await page.click(`#sessions tr[data-session="${sessionId}"]`);
  await until(page, 'the charts', () => document.querySelectorAll('.chart svg .node').length > 20);
}
