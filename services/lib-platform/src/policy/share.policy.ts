/**
 * The bounds of share links and guest notes (docs/review.md; docs/api-notes.md, "Share links"),
 * written once: the gateway validates and documents the share routes with them, and records
 * checks what it is given against the same.
 */

/** What a guest may answer a version with. */
export const VERDICTS = ['approve', 'needs-changes'] as const;
/** Longest guest name and comment accepted. */
export const GUEST_NAME_MAX = 100;
export const COMMENT_MAX = 10_000;
export const SHARE_PASSWORD_MAX = 1024;
/** Characters of the token kept beside the digest so a list can tell links apart (36 of 256 bits). */
export const TOKEN_PREFIX_CHARS = 6;
/**
 * Password verifications (a 16 MiB scrypt each) one link may have running at once in a records
 * process; a guess beyond them is refused with 429 before it costs anything.
 */
export const MAX_VERIFYING_PER_LINK = 2;
