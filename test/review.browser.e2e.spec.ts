/// <reference lib="dom" />
/**
 * The review page in headless Chromium (Debian's chromium driven by playwright-core; installed by
 * test/support/chromium.ts when missing): a guest opens a share link, sees the playlist with the
 * studio's branding, plays a version's proxy (made by the media service from an uploaded render) with the
 * keyboard, steps frame by frame, posts a note with a verdict and sees it listed, gets the password prompt on
 * a protected link, and sees hostile names and comments as text with no script run. Screenshots
 * at desktop and phone width go to test/artifacts/ (not committed).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureFfmpeg, REPO_ROOT } from '@reelbase/lib-testkit';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { launchChromium } from './support/chromium.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';

const ARTIFACTS = join(REPO_ROOT, 'test', 'artifacts');
const PAYLOADS = {
  name: '<img src=x onerror="window.__pwned=1;alert(1)">',
  comment: '<script>window.__pwned=1;alert(1)</script><b>bold?</b>',
};

describe('the review page (headless Chromium)', () => {
  let e: E2EStack;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let admin: Session;
  let coordinator: Session;
  let artist: Session;
  let projectId: string;
  let v1: any;
  let v2: any;
  let playlist: any;
  let reviewable: any;
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const link = (r: any) => ({ type: r.entity_type, id: r.id });

  /** A fresh context and page that record dialogs, page errors and (in the page) CSP violations. */
  async function openPage(width: number, height: number): Promise<{ page: Page; context: BrowserContext; dialogs: string[]; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.addInitScript(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener('securitypolicyviolation', (ev) => w.__violations.push(`${ev.violatedDirective} ${ev.blockedURI}`));
    });
    return { page, context, dialogs, errors };
  }

  const violationsOf = (page: Page) => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ({ browser, close: closeBrowser } = await launchChromium());
    e = await startE2EStack('review-browser');
    admin = await bootstrapAdmin(e.api);
    coordinator = await createUser(admin.api, 'Coordinator', 'cora@studio.test');
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    projectId = (await create(admin.api, 'Project', { data: { name: 'Browser', code: 'browser' } })).id;
    v1 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh010_comp_v001' } });
    v2 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh020_comp_v002' } });
    playlist = await create(coordinator.api, 'Playlist', { project_id: projectId, data: { name: 'Dailies Tuesday', versions: [link(v1), link(v2)] } });
    await create(coordinator.api, 'Note', { project_id: projectId, data: { content: 'Studio note first', links: [link(v1)] } });

    // A 3-second 24 fps render for v1, converted to a proxy by the media service.
    const ff = ensureFfmpeg();
    const src = join(e.logDir, 'render.mov');
    const made = spawnSync(
      ff.ffmpeg,
      ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=24:duration=3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', src],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
    const up = await fetch(`${e.stack.url}/versions/${v1.id}/reviewable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${artist.token}`, 'content-type': 'video/quicktime', 'x-file-name': 'render.mov' },
      body: new Uint8Array(readFileSync(src)),
      signal: AbortSignal.timeout(60_000),
    });
    expect(up.status, await up.clone().text()).toBe(200);
    reviewable = await eventually(
      async () => {
        const r = expectStatus(await artist.api.get(`/versions/${v1.id}/reviewable`), 200);
        if (r.status === 'failed') throw new Error(`transcode failed: ${r.transcode_error}`);
        return r.status === 'done' ? r : undefined;
      },
      120_000,
      'the proxy of v1',
    );
    expectStatus(
      await admin.api.call('PUT', '/branding', { body: { studio_name: 'Blue Pencil VFX', primary_color: '#aa2200', accent_color: '#00aa55' } }),
      200,
    );
  }, 300_000);
  afterAll(async () => {
    await closeBrowser?.();
    await e?.teardown();
  });

  it('opens a link, shows branding and notes, posts a note with a verdict and lists it; screenshots at desktop and phone width', async () => {
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, {}), 200);
    const { page, context, dialogs, errors } = await openPage(1280, 900);
    try {
      const res = await page.goto(made.url, { waitUntil: 'load' });
      expect(res?.status()).toBe(200);
      await page.locator('section.version').first().waitFor();
      expect(await page.locator('#playlist').textContent()).toBe('Dailies Tuesday');
      expect(await page.locator('#studio').textContent()).toBe('Blue Pencil VFX');
      expect(await page.locator('section.version .code').allTextContents()).toEqual(['sh010_comp_v001', 'sh020_comp_v002']);
      // Branding colours reach the style sheet through the CSSOM (no inline style allowed).
      const colour = await page.evaluate(() => getComputedStyle(document.querySelector('.masthead')!).borderBottomColor);
      expect(colour).toBe('rgb(170, 34, 0)');
      const first = page.locator(`section.version[data-version-id="${v1.id}"]`);
      expect(await first.locator('.note-body').allTextContents()).toEqual(['Studio note first']);

      await first.locator('input[name="guest_name"]').fill('Client Carla');
      await first.locator('textarea[name="comment"]').fill('Approved, lovely edge work');
      await first.locator('select[name="verdict"]').selectOption('approve');
      await first.locator('button[type="submit"]').click();
      await first.locator('.note').nth(1).waitFor();
      expect(await first.locator('.note-body').allTextContents()).toEqual(['Studio note first', 'Approved, lovely edge work']);
      expect(await first.locator('.note').nth(1).locator('.note-author').textContent()).toBe('Client Carla');
      expect(await first.locator('.note').nth(1).locator('.badge').textContent()).toBe('Approved');
      // The studio sees it as a Note of the version.
      const notes = expectStatus(await artist.api.get(`/entities/Version/${v1.id}/notes`), 200).items as any[];
      expect(notes.at(-1).data).toMatchObject({ guest_name: 'Client Carla', verdict: 'approve', content: 'Approved, lovely edge work' });
      // After a reload the note is still there, oldest first.
      await page.reload({ waitUntil: 'load' });
      await first.locator('.note').nth(1).waitFor();
      expect(await first.locator('.note-body').allTextContents()).toEqual(['Studio note first', 'Approved, lovely edge work']);

      await page.screenshot({ path: join(ARTIFACTS, 'review-desktop.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      // Phone width: nothing wider than the screen.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(ARTIFACTS, 'review-phone.png'), fullPage: true });
      expect(await violationsOf(page)).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('plays the proxy with the thumbnail as poster; Space/K play and pause, . and , step one frame', async () => {
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, { can_comment: false }), 200);
    const { page, context, errors } = await openPage(1280, 900);
    try {
      await page.goto(made.url, { waitUntil: 'load' });
      const video = page.locator(`section.version[data-version-id="${v1.id}"] video`);
      await video.waitFor();
      // The page plays the link-bound guest keys, never the real ones.
      const src = (await video.getAttribute('src'))!;
      expect(src).toMatch(/^\/media\/sh\/[A-Za-z0-9_-]{86}\/proxy\.mp4$/);
      expect(src).not.toContain(reviewable.review_media_key.split('/')[1]);
      expect(await video.getAttribute('poster')).toMatch(/^\/media\/sh\/[A-Za-z0-9_-]{86}\/thumb\.jpg$/);
      // v2 has nothing to play yet.
      expect(await page.locator(`section.version[data-version-id="${v2.id}"] .empty`).textContent()).toContain('No playable review');
      expect(await page.locator('.note-form').count()).toBe(2);
      expect(await page.locator('.note-form:not([hidden])').count()).toBe(0);
      await page.waitForFunction((id) => (document.querySelector(`section[data-version-id="${id}"] video`) as HTMLVideoElement).readyState >= 1, v1.id);
      const state = () =>
        page.evaluate((id) => {
          const v = document.querySelector(`section[data-version-id="${id}"] video`) as HTMLVideoElement;
          return { t: v.currentTime, paused: v.paused };
        }, v1.id);

      // K plays: the time advances.
      await page.keyboard.press('k');
      await page.waitForFunction((id) => (document.querySelector(`section[data-version-id="${id}"] video`) as HTMLVideoElement).currentTime > 0.5, v1.id, {
        timeout: 15_000,
      });
      // Space pauses.
      await page.keyboard.press(' ');
      await page.waitForFunction((id) => (document.querySelector(`section[data-version-id="${id}"] video`) as HTMLVideoElement).paused, v1.id);
      const paused = await state();
      expect(paused.paused).toBe(true);

      // One frame forward, twice, then one back: exactly one 24 fps frame each.
      const frame = (t: number) => Math.floor(t * 24 + 1e-6);
      const start = frame(paused.t);
      const step = async (key: string, expected: number) => {
        await page.keyboard.press(key);
        await page.waitForFunction(
          ([id, want]) => Math.floor((document.querySelector(`section[data-version-id="${id}"] video`) as HTMLVideoElement).currentTime * 24 + 1e-6) === want,
          [v1.id, expected] as const,
        );
        const now = await state();
        expect(now.paused).toBe(true);
        expect(frame(now.t)).toBe(expected);
      };
      await step('.', start + 1);
      await step('ArrowRight', start + 2);
      await step(',', start + 1);
      // The readout follows once the seek has finished (frames are counted from 1 there).
      await page.waitForFunction(([id, want]) => document.querySelector(`section[data-version-id="${id}"] .frame`)?.textContent?.startsWith(`frame ${want} `), [
        v1.id,
        start + 2,
      ] as const);
      await page.screenshot({ path: join(ARTIFACTS, 'review-video.png') });
      expect(await violationsOf(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('asks for the password of a protected link and opens it with the right one', async () => {
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, { password: 'open sesame' }), 200);
    const { page, context } = await openPage(1024, 768);
    try {
      await page.goto(made.url, { waitUntil: 'load' });
      await page.locator('#password-form').waitFor({ state: 'visible' });
      expect(await page.locator('section.version').count()).toBe(0);
      await page.locator('#password').fill('wrong');
      await page.locator('#password-form button[type="submit"]').click();
      await page.locator('#password-error').waitFor({ state: 'visible' });
      expect(await page.locator('#password-error').textContent()).toBe('That password is not right.');
      await page.screenshot({ path: join(ARTIFACTS, 'review-password.png') });
      await page.locator('#password').fill('open sesame');
      await page.locator('#password-form button[type="submit"]').click();
      await page.locator('section.version').first().waitFor();
      expect(await page.locator('#password-form').isHidden()).toBe(true);
      // Notes post with the password too.
      const second = page.locator(`section.version[data-version-id="${v2.id}"]`);
      await second.locator('input[name="guest_name"]').fill('Pat');
      await second.locator('textarea[name="comment"]').fill('Sky needs work');
      await second.locator('select[name="verdict"]').selectOption('needs-changes');
      await second.locator('button[type="submit"]').click();
      await second.locator('.note').first().waitFor();
      expect(await second.locator('.note .badge').textContent()).toBe('Needs changes');
    } finally {
      await context.close();
    }
  });

  it('an unknown or revoked link says so', async () => {
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, {}), 200);
    expectStatus(await coordinator.api.delete(`/share/${made.token}`), 200);
    const { page, context } = await openPage(1024, 768);
    try {
      await page.goto(made.url, { waitUntil: 'load' });
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.includes('revoked'));
      expect(await page.locator('section.version').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('renders <script> and <img onerror> payloads in names and comments as text; no script runs, no dialog opens', async () => {
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, {}), 200);
    // One hostile note through the API, one through the page's own form.
    expectStatus(
      await e.api
        .as(null)
        .post(`/shared/${made.token}/notes`, { version_id: v2.id, guest_name: PAYLOADS.name, comment: PAYLOADS.comment, verdict: 'needs-changes' }),
      200,
    );
    const { page, context, dialogs, errors } = await openPage(1280, 900);
    try {
      await page.goto(made.url, { waitUntil: 'load' });
      const second = page.locator(`section.version[data-version-id="${v2.id}"]`);
      await second.locator('.note').last().waitFor();
      await second.locator('input[name="guest_name"]').fill(PAYLOADS.name);
      await second.locator('textarea[name="comment"]').fill(PAYLOADS.comment);
      const before = await second.locator('.note').count();
      await second.locator('button[type="submit"]').click();
      await second.locator('.note').nth(before).waitFor();
      await page.waitForTimeout(300);

      const hostile = second.locator('.note').filter({ hasText: PAYLOADS.comment });
      expect(await hostile.count()).toBe(2);
      for (const i of [0, 1]) {
        expect(await hostile.nth(i).locator('.note-author').textContent()).toBe(PAYLOADS.name);
        expect(await hostile.nth(i).locator('.note-body').textContent()).toBe(PAYLOADS.comment);
      }
      // Nothing was parsed as markup: no element came from the payloads.
      expect(await page.locator('.notes img, .notes script, .notes b').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
      expect(await violationsOf(page)).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'review-hostile.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});
