/**
 * Fixed secrets for tests that start services in-process. Never used by `npm start`
 * (a random INTERNAL_AUTH_SECRET per run) or a deployment (a Kubernetes Secret).
 */

/** INTERNAL_AUTH_SECRET of in-process services and the clients that call them in tests. */
export const TEST_INTERNAL_AUTH_SECRET = 'reelbase-tests-internal-auth-secret-0123456789';

/** SECRETS_KEY of in-process auth, notifier and schema in tests (32 bytes, base64). */
export const TEST_SECRETS_KEY = Buffer.from('reelbase-tests-secrets-key-32-by').toString('base64');
