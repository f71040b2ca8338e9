import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';

/** Debian's chromium (scripts/dev installs it). */
export const CHROMIUM = process.env.SWT_CHROMIUM ?? '/usr/bin/chromium';

/** Where tests leave what a person may want to look at (screenshots); gitignored. */
export async function artifactsDir(): Promise<string> {
  const dir = resolve(process.cwd(), 'test-artifacts');
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Opens `url` in headless Chromium with a fresh profile and nothing that phones home (sending
 * `headers` with every request), runs `fn` on the page, and returns what it returns plus every
 * URL the page requested.
 */
export async function withPage<T>(url: string, fn: (page: Page) => Promise<T>, opts: { headers?: Record<string, string> } = {}): Promise<{ value: T; requested: string[] }> {
  const profile = await mkdtemp(join(tmpdir(), 'swt-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  const requested: string[] = [];
  try {
    if (opts.headers) await context.setExtraHTTPHeaders(opts.headers);
    const page = await context.newPage();
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(url, { waitUntil: 'load' });
    return { value: await fn(page), requested };
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}
