/**
 * The guest review page (docs/review.md). Reads the shared playlist from GET /shared/{token},
 * plays each version's proxy, lists its notes and posts new ones to POST /shared/{token}/notes.
 *
 * Every text that comes from the server (names, comments, codes, branding) is set with
 * textContent or as a property, never parsed as HTML; the page runs under a CSP without inline
 * script or style, so colours are applied through the CSSOM.
 */

/** Frames per second assumed for stepping: versions carry no frame rate yet. */
const FPS = 24;
const PASSWORD_HEADER = 'x-share-password';
const SESSION_HEADER = 'x-share-session';
/** How long before its media keys expire the page fetches new ones. */
const MEDIA_REFRESH_EARLY_MS = 5 * 60_000;
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
/** Media keys as the media store issues them (no scheme, no `..`): anything else is not loaded. */
const MEDIA_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

interface Note {
  id: string;
  created_at: string;
  data: { content?: unknown; verdict?: unknown; guest_name?: unknown; subject?: unknown; author?: unknown };
}

interface SharedVersion {
  id: string;
  code: string;
  status: string | null;
  review_kind: string | null;
  review_media_key: string | null;
  thumbnail_media_key: string | null;
  notes: Note[];
}

interface Shared {
  playlist: { id: string; name: string };
  versions: SharedVersion[];
  can_comment: boolean;
  expires_at: string | null;
  media_expires_at?: string;
  branding: { studio_name: string | null; logo_media_key: string | null; primary_color: string | null; accent_color: string | null };
}

interface ApiError {
  detail?: unknown;
  code?: string;
}

const byId = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el as T;
};

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean)[1] ?? '');
const apiBase = `/shared/${encodeURIComponent(token)}`;
/** The password as typed (memory only), and the guest session a correct one was answered with. */
let password: string | undefined;
let session: string | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
/** The video the keyboard drives: the one last played, clicked or focused. */
let activeVideo: HTMLVideoElement | undefined;

const statusEl = byId<HTMLParagraphElement>('status');
const setStatus = (text: string) => {
  statusEl.textContent = text;
};

function mediaUrl(key: string | null): string | undefined {
  if (!key || !MEDIA_KEY.test(key) || key.includes('..')) return undefined;
  return `/media/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** The session when there is one (no password verification), else the password. */
function headers(extra: Record<string, string> = {}): Record<string, string> {
  if (session !== undefined) return { ...extra, [SESSION_HEADER]: session };
  return password === undefined ? extra : { ...extra, [PASSWORD_HEADER]: password };
}

/**
 * Sends a guest request; a session that has run out is dropped and the request sent once more
 * with the password (which answers a new session).
 */
async function guestFetch(url: string, init: RequestInit = {}, extra: Record<string, string> = {}): Promise<Response> {
  const send = () => fetch(url, { ...init, headers: headers(extra), credentials: 'omit' });
  let res = await send();
  if (res.status === 401 && session !== undefined) {
    session = undefined;
    res = await send();
  }
  session = res.headers.get(SESSION_HEADER) ?? session;
  return res;
}

/** A readable sentence from an error answer (422 lists each problem). */
function describeError(status: number, body: ApiError, retryAfter: string | null): string {
  if (status === 429) return `Too many requests on this link; try again in ${retryAfter ?? 'a few'} seconds.`;
  if (typeof body.detail === 'string') return body.detail;
  if (Array.isArray(body.detail)) {
    return body.detail.map((p: { loc?: unknown[]; msg?: string }) => `${(p.loc ?? []).slice(1).join('.') || 'request'}: ${p.msg ?? 'invalid'}`).join('; ');
  }
  return `The server answered ${status}.`;
}

function applyBranding(b: Shared['branding']): void {
  const root = document.documentElement.style;
  if (b.primary_color && COLOR.test(b.primary_color)) root.setProperty('--brand-primary', b.primary_color);
  if (b.accent_color && COLOR.test(b.accent_color)) root.setProperty('--brand-accent', b.accent_color);
  const studio = byId<HTMLParagraphElement>('studio');
  studio.textContent = b.studio_name ?? '';
  const logo = byId<HTMLImageElement>('logo');
  const src = mediaUrl(b.logo_media_key);
  if (src) {
    logo.src = src;
    logo.alt = b.studio_name ?? 'Studio logo';
    logo.hidden = false;
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function renderNote(note: Note): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'note';
  li.dataset.noteId = note.id;
  const meta = document.createElement('div');
  meta.className = 'note-meta';
  const author = document.createElement('span');
  author.className = 'note-author';
  author.textContent = text(note.data.guest_name) || 'Studio';
  meta.append(author);
  const verdict = text(note.data.verdict);
  if (verdict === 'approve' || verdict === 'needs-changes') {
    const badge = document.createElement('span');
    badge.className = `badge verdict-${verdict}`;
    badge.textContent = verdict === 'approve' ? 'Approved' : 'Needs changes';
    meta.append(badge);
  }
  const when = document.createElement('time');
  when.dateTime = note.created_at;
  const date = new Date(note.created_at);
  when.textContent = Number.isNaN(date.getTime()) ? '' : date.toLocaleString();
  meta.append(when);
  const body = document.createElement('p');
  body.className = 'note-body';
  body.textContent = text(note.data.content) || text(note.data.subject);
  li.append(meta, body);
  return li;
}

/** The frame shown at the video's current time. */
const frameOf = (video: HTMLVideoElement) => Math.floor(video.currentTime * FPS + 1e-6);

/** Moves one frame: the time is set to the middle of the target frame so the decoder shows exactly it. */
function stepFrame(video: HTMLVideoElement, delta: number): void {
  video.pause();
  const last = Number.isFinite(video.duration) ? Math.max(0, Math.ceil(video.duration * FPS) - 1) : Infinity;
  const target = Math.min(last, Math.max(0, frameOf(video) + delta));
  video.currentTime = (target + 0.5) / FPS;
}

function togglePlay(video: HTMLVideoElement): void {
  if (video.paused) void video.play().catch(() => undefined);
  else video.pause();
}

function renderMedia(section: HTMLElement, v: SharedVersion): void {
  const holder = section.querySelector<HTMLDivElement>('.media')!;
  const src = mediaUrl(v.review_media_key);
  const poster = mediaUrl(v.thumbnail_media_key);
  if (src && v.review_kind === 'image') {
    const img = document.createElement('img');
    img.src = src;
    img.alt = v.code;
    holder.append(img);
    return;
  }
  if (!src) {
    if (poster) {
      const img = document.createElement('img');
      img.src = poster;
      img.alt = v.code;
      holder.append(img);
    }
    const empty = document.createElement('p');
    empty.className = 'empty';
    empty.textContent = 'No playable review for this version yet.';
    holder.append(empty);
    return;
  }
  const video = document.createElement('video');
  video.controls = true;
  video.preload = 'metadata';
  video.playsInline = true;
  video.tabIndex = 0;
  if (poster) video.poster = poster;
  video.src = src;
  // A key that stopped opening (expired, or the link was revoked): ask for the playlist again.
  video.addEventListener('error', () => void refreshMedia());
  holder.append(video);

  const transport = section.querySelector<HTMLDivElement>('.transport')!;
  transport.hidden = false;
  const play = transport.querySelector<HTMLButtonElement>('.play')!;
  const frame = transport.querySelector<HTMLSpanElement>('.frame')!;
  const show = () => {
    frame.textContent = `frame ${frameOf(video) + 1} · ${video.currentTime.toFixed(3)} s (${FPS} fps)`;
    play.textContent = video.paused ? 'Play' : 'Pause';
  };
  const activate = () => {
    activeVideo = video;
  };
  for (const ev of ['timeupdate', 'seeked', 'play', 'pause', 'loadedmetadata']) video.addEventListener(ev, show);
  for (const ev of ['play', 'focus', 'pointerdown']) video.addEventListener(ev, activate);
  play.addEventListener('click', () => {
    activate();
    togglePlay(video);
  });
  transport.querySelector('.back')!.addEventListener('click', () => {
    activate();
    stepFrame(video, -1);
  });
  transport.querySelector('.forward')!.addEventListener('click', () => {
    activate();
    stepFrame(video, 1);
  });
  activeVideo ??= video;
  show();
}

function renderVersion(v: SharedVersion, canComment: boolean): HTMLElement {
  const template = byId<HTMLTemplateElement>('version-template');
  const section = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
  section.dataset.versionId = v.id;
  section.querySelector('.code')!.textContent = v.code || 'Untitled version';
  section.querySelector('.status-badge')!.textContent = v.status ?? '';
  renderMedia(section, v);

  const list = section.querySelector<HTMLOListElement>('.notes')!;
  const none = section.querySelector<HTMLParagraphElement>('.no-notes')!;
  for (const n of v.notes) list.append(renderNote(n));
  none.hidden = v.notes.length > 0;

  const form = section.querySelector<HTMLFormElement>('.note-form')!;
  if (canComment) {
    form.hidden = false;
    const nameInput = form.querySelector<HTMLInputElement>('input[name="guest_name"]')!;
    nameInput.value = sessionStorage.getItem('reelbase.guest_name') ?? '';
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void postNote(form, v.id, list, none);
    });
  }
  return section;
}

async function postNote(form: HTMLFormElement, versionId: string, list: HTMLOListElement, none: HTMLElement): Promise<void> {
  const error = form.querySelector<HTMLSpanElement>('.error')!;
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const fields = new FormData(form);
  const guestName = String(fields.get('guest_name') ?? '').trim();
  const comment = String(fields.get('comment') ?? '');
  const verdict = String(fields.get('verdict') ?? '');
  const body: Record<string, string> = { version_id: versionId, guest_name: guestName, comment };
  if (verdict) body.verdict = verdict;
  error.hidden = true;
  button.disabled = true;
  try {
    const res = await guestFetch(`${apiBase}/notes`, { method: 'POST', body: JSON.stringify(body) }, { 'content-type': 'application/json' });
    const answer = (await res.json().catch(() => ({}))) as Note & ApiError;
    if (!res.ok) {
      error.textContent = describeError(res.status, answer, res.headers.get('retry-after'));
      error.hidden = false;
      return;
    }
    sessionStorage.setItem('reelbase.guest_name', guestName);
    list.append(renderNote(answer));
    none.hidden = true;
    form.querySelector<HTMLTextAreaElement>('textarea[name="comment"]')!.value = '';
    form.querySelector<HTMLSelectElement>('select[name="verdict"]')!.value = '';
  } catch {
    error.textContent = 'The note could not be sent; check your connection and try again.';
    error.hidden = false;
  } finally {
    button.disabled = false;
  }
}

function render(shared: Shared): void {
  applyBranding(shared.branding);
  document.title = `${shared.playlist.name} · Review`;
  byId('playlist').textContent = shared.playlist.name;
  const expiry = byId<HTMLParagraphElement>('expiry');
  if (shared.expires_at) {
    expiry.textContent = `This link works until ${new Date(shared.expires_at).toLocaleString()}.`;
    expiry.hidden = false;
  }
  const versions = byId<HTMLDivElement>('versions');
  versions.replaceChildren(...shared.versions.map((v) => renderVersion(v, shared.can_comment)));
  byId('keys').hidden = !shared.versions.some((v) => v.review_media_key && v.review_kind !== 'image');
  setStatus(shared.versions.length === 0 ? 'This playlist has no versions yet.' : '');
}

async function load(): Promise<void> {
  const form = byId<HTMLFormElement>('password-form');
  const passwordError = byId<HTMLParagraphElement>('password-error');
  let res: Response;
  try {
    res = await guestFetch(apiBase);
  } catch {
    setStatus('The review could not be loaded; check your connection and reload the page.');
    return;
  }
  const body = (await res.json().catch(() => ({}))) as Shared & ApiError;
  if (res.status === 401 && body.code === 'password_required') {
    setStatus('');
    form.hidden = false;
    passwordError.textContent = password === undefined ? '' : 'That password is not right.';
    passwordError.hidden = password === undefined;
    byId<HTMLInputElement>('password').focus();
    return;
  }
  if (res.status === 404) {
    form.hidden = true;
    setStatus('This review link does not exist, was revoked or has expired.');
    return;
  }
  if (!res.ok) {
    setStatus(describeError(res.status, body, res.headers.get('retry-after')));
    return;
  }
  form.hidden = true;
  render(body);
  scheduleRefresh(body);
}

/** Fetches new media keys shortly before these expire. */
function scheduleRefresh(shared: Shared): void {
  clearTimeout(refreshTimer);
  const at = Date.parse(shared.media_expires_at ?? '');
  if (Number.isNaN(at)) return;
  refreshTimer = setTimeout(() => void refreshMedia(), Math.max(10_000, at - Date.now() - MEDIA_REFRESH_EARLY_MS));
}

let refreshing: Promise<void> | undefined;
/**
 * Reads the playlist again and gives each version's video, poster and image their new keys, a
 * playing video going on from where it was. A link that is gone says so.
 */
function refreshMedia(): Promise<void> {
  refreshing ??= (async () => {
    try {
      const res = await guestFetch(apiBase);
      if (res.status === 404) {
        setStatus('This review link was revoked or has expired.');
        return;
      }
      if (!res.ok) return;
      const shared = (await res.json()) as Shared;
      for (const v of shared.versions) {
        const section = document.querySelector<HTMLElement>(`section[data-version-id="${CSS.escape(v.id)}"]`);
        const src = mediaUrl(v.review_media_key);
        const poster = mediaUrl(v.thumbnail_media_key);
        const video = section?.querySelector<HTMLVideoElement>('.media video');
        if (video && src) {
          const time = video.currentTime;
          const playing = !video.paused;
          if (poster) video.poster = poster;
          video.src = src;
          video.addEventListener(
            'loadedmetadata',
            () => {
              video.currentTime = time;
              if (playing) void video.play().catch(() => undefined);
            },
            { once: true },
          );
        }
        const img = section?.querySelector<HTMLImageElement>('.media img');
        if (img) img.src = (v.review_kind === 'image' ? src : poster) ?? img.src;
      }
      scheduleRefresh(shared);
    } catch {
      // Offline for now: the next error or timer tries again.
    } finally {
      setTimeout(() => (refreshing = undefined), 10_000);
    }
  })();
  return refreshing;
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement;
}

document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || isTyping(ev.target) || !activeVideo) return;
  const video = activeVideo;
  switch (ev.key) {
    case ' ':
    case 'k':
    case 'K':
      // The native controls toggle on Space themselves when the video has focus.
      if (ev.key === ' ' && ev.target === video) return;
      ev.preventDefault();
      togglePlay(video);
      break;
    case ',':
    case 'ArrowLeft':
      ev.preventDefault();
      stepFrame(video, -1);
      break;
    case '.':
    case 'ArrowRight':
      ev.preventDefault();
      stepFrame(video, 1);
      break;
    default:
  }
});

byId<HTMLFormElement>('password-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  password = byId<HTMLInputElement>('password').value;
  void load();
});

void load();
