/**
 * Debian's Chromium for the browser tests, driven by playwright-core over its DevTools protocol.
 * When /usr/bin/chromium is missing and the tests run as root it is installed with apt-get
 * (the same way the stack installs its other Debian tools); otherwise the error says what to run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Installs Debian's chromium package when the binary is missing (root only); throws a clear error otherwise. */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${CHROMIUM_PATH} is missing and these tests are not running as root: install it with ` +
        '`apt-get update && apt-get install -y --no-install-recommends chromium` (or set CHROMIUM_PATH)',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another installer (ffmpeg for the stack) may hold apt's locks: wait for them instead of failing.
  const wait = ['-o', 'DPkg::Lock::Timeout=600'];
  execFileSync('apt-get', [...wait, 'update'], { stdio: 'inherit', env, timeout: 900_000 });
  execFileSync('apt-get', [...wait, 'install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env, timeout: 900_000 });
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing`);
  return CHROMIUM_PATH;
}

/**
 * A headless Chromium. playwright-core gives each launch a fresh `--user-data-dir` of its own in
 * the temporary directory and removes it on close (it refuses one passed in `args`).
 */
export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const executablePath = ensureChromium();
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    timeout: 60_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // Lets the test video play without a user gesture.
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
    },
  };
}
