/**
 * The review page's files (services/gateway/review-page: index.html and review.css as written,
 * review.js compiled by tsc into dist/review-page), read once on first use. The page carries no
 * inline script or style, so this policy forbids both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { AppError } from '@reelbase/lib-platform';

/** The Content-Security-Policy of the page and its files. */
export const REVIEW_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface ReviewAssets {
  html: string;
  files: ReadonlyMap<string, { body: string; contentType: string }>;
}

const PAGE_DIR = new URL('../../review-page/', import.meta.url);
/** review.js beside this module's output (dist/review-page), or in dist when this module runs from src (unit tests). */
const BUILT_JS = [new URL('../review-page/review.js', import.meta.url), new URL('../../dist/review-page/review.js', import.meta.url)];

function builtJs(): string {
  const found = BUILT_JS.find((u) => existsSync(u));
  return readFileSync(found ?? BUILT_JS[0]!, 'utf8');
}

let cached: ReviewAssets | undefined;

/** The page and its files; 503 when they were not built (e.g. `tsc -b` did not run). */
export function reviewAssets(): ReviewAssets {
  if (cached) return cached;
  try {
    cached = {
      html: readFileSync(new URL('index.html', PAGE_DIR), 'utf8'),
      files: new Map([
        ['review.js', { body: builtJs(), contentType: 'text/javascript; charset=utf-8' }],
        ['review.css', { body: readFileSync(new URL('review.css', PAGE_DIR), 'utf8'), contentType: 'text/css; charset=utf-8' }],
      ]),
    };
    return cached;
  } catch (err) {
    throw AppError.unavailable('the review page is not built (run tsc -b)', err);
  }
}
