// Debian's Chromium through playwright-core, launched as the docs test launches it, for page tests.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

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
 * axe-core's violations on the page as it is now. The engine is evaluated through the DevTools
 * protocol, which the page's Content-Security-Policy does not govern, so the page's own policy stays on.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((n) => ({ target: n.target })) }));
  });
}
