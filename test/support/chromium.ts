// Debian's Chromium through playwright-core, for the page tests (the docs, the payment page). A test
// moves one tab from page to page where it can: a new tab is a new renderer process, and starting one
// (with axe-core compiled again in it) cost several times the page's own work.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  // No skipping: CI installs Chromium, and a machine without it must fail loudly.
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium is missing at ${executablePath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Has every page that `context` opens from now on load axe-core before its own scripts, through the
 * DevTools protocol (which the page's Content-Security-Policy does not govern, so the page's own policy
 * stays on). Sent to the browser once, not once a page: the engine is half a megabyte.
 */
export async function loadAxe(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: axeSource });
}

/** axe-core's violations on the page as it is now; the page's context must have had loadAxe. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe?: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    if (!axe) throw new Error('axe-core is not loaded: call loadAxe(context) before opening the page');
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((n) => ({ target: n.target })) }));
  });
}
