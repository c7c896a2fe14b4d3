/**
 * What the client's calls share beyond the transport (http.transport.ts): content types, paths
 * and query strings, answer bodies and an abortable sleep.
 */
export const JSON_TYPE = 'application/json';
/** Content types by file extension, for uploads. */
export const CONTENT_TYPES: Record<string, string> = {
  '.mov': 'video/quicktime',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mkv': 'video/x-matroska',
  '.webm': 'video/webm',
  '.avi': 'video/x-msvideo',
  '.mxf': 'video/mxf',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.exr': 'image/x-exr',
  '.dpx': 'image/x-dpx',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** A JSON body parsed, any other text as is, undefined when empty. */
export function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `path` with its `{name}` parameters filled from `params` (URL-encoded). */
export function fillPath(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = params?.[name];
    if (v === undefined || v === null) throw new TypeError(`${path}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(v));
  });
}

/** `path` with the defined values of `query` appended. */
export function withQuery(path: string, query: Record<string, unknown> | undefined): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.append(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

/** One URL-encoded path segment. */
export const seg = (s: string) => encodeURIComponent(s);
