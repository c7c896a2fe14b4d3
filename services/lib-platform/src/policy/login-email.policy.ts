/**
 * A User's `data.email` is its login address (docs/architecture.md, "Auth decisions"): auth keeps the
 * login with the record, and records checks a User written by a sync import against the same rule
 * (docs/api-notes.md, "Sync"). Addresses are compared and stored trimmed and lower-cased, so two that
 * differ only in case are one login.
 */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Emails are compared and stored lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Whether `email` (already normalised) is an address a login may use. */
export function isLoginEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

/** Why a taken address is refused (409 `duplicate_code` from auth; a 422 of the import's item in records). */
export const EMAIL_TAKEN = 'a user with this email already exists (the email is the login code)';
