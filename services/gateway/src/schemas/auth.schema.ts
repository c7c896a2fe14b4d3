/**
 * Auth routes' schemas (docs/api-notes.md, Authentication).
 */
import { z } from 'zod';
import { Role, Uuid } from './common.schema.js';
import { RecordOut } from './record.schema.js';

// Shape only: auth decides whether the address is acceptable.
const Email = z
  .string()
  .max(320)
  .regex(/^[^@\s]+@[^@\s]+$/);

export const LoginBody = z.strictObject({ email: Email, password: z.string().min(1).max(1024) }).meta({ id: 'LoginBody' });

export const LoginOut = z
  .object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int().describe('Seconds.') })
  .meta({ id: 'LoginResponse' });

export const RegisterBody = z
  .strictObject({
    email: Email,
    password: z.string().min(8).max(1024),
    name: z.string().min(1).max(255),
    role: Role.optional().describe('Honoured only when an Admin registers another user.'),
  })
  .meta({ id: 'RegisterBody' });

export const RegisterOut = z
  .object({
    user: RecordOut,
    access_token: z.string().nullable().describe('Set for the bootstrap registration of the first user; null otherwise.'),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().nullable(),
  })
  .meta({ id: 'RegisterResponse' });

const ExpiresAt = z.iso
  .datetime({ offset: true })
  .describe('When the key stops working (RFC 3339 with a time zone); must be in the future (422 otherwise). Absent: until revoked.');

/** An agent key's pools (docs/api-notes.md, "Authentication"): 1 to 50 distinct names of 1 to 64 characters. */
const AgentPools = z
  .array(z.string().min(1).max(64))
  .min(1)
  .max(50)
  .superRefine((pools, ctx) => {
    const seen = new Set<string>();
    pools.forEach((pool, i) => {
      if (seen.has(pool)) ctx.addIssue({ code: 'custom', path: [i], message: `pool ${pool} is listed twice` });
      seen.add(pool);
    });
  })
  .describe('With `"scope": "agent"` only (422 otherwise): the farm pools the key may claim from. Absent: any pool.');

const KeyScope = z
  .literal('agent')
  .describe(
    "`agent`: the key calls only the farm and sitesync agent routes (claims, chunk heartbeat, complete and fail, a job's read, " +
      "a state's report); every other route answers it 403 `forbidden`, and the WebSocket closes 1008. Absent or null: a normal key.",
  );

export const ApiKeyCreate = z
  .strictObject({ name: z.string().min(1).max(255), expires_at: ExpiresAt.optional(), scope: KeyScope.nullable().optional(), pools: AgentPools.optional() })
  .superRefine((body, ctx) => {
    if (body.pools !== undefined && body.scope !== 'agent')
      ctx.addIssue({ code: 'custom', path: ['pools'], message: 'pools are given only with "scope": "agent"' });
  })
  .meta({ id: 'ApiKeyCreate' });

/** What a key may reach, as listed: an agent key's scope and pools, null for a normal key. */
const keyAccess = {
  scope: z.literal('agent').nullable().describe('`agent` for an agent key (only the farm and sitesync agent routes); null: a normal key.'),
  pools: z.array(z.string()).nullable().describe("An agent key's farm pools; null: any pool."),
};

export const ApiKeyIssued = z
  .object({
    id: Uuid,
    name: z.string(),
    token: z.string().describe('svc_…; shown once, stored only as a hash.'),
    created_at: z.string(),
    expires_at: z.string().nullable().describe('When the key stops working; null: until revoked.'),
    ...keyAccess,
  })
  .meta({ id: 'ApiKeyIssued' });

export const ApiKeyOut = z
  .object({
    id: Uuid,
    user_id: Uuid.describe('Whose key it is.'),
    name: z.string(),
    prefix: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    expires_at: z.string().nullable().describe('When the key stops working (an expired key answers 401 and stays listed until revoked); null: until revoked.'),
    ...keyAccess,
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyList = z.object({ items: z.array(ApiKeyOut) }).meta({ id: 'ApiKeyList' });

export const ApiKeyListQuery = z.strictObject({
  user_id: Uuid.optional().describe("Whose keys: the caller's by default; another user's for Admins only (403 otherwise)."),
});

export const ApiKeyPath = z.strictObject({ id: Uuid });

export const ApiKeyRevoked = z.object({ id: Uuid, revoked: z.literal(true) }).meta({ id: 'ApiKeyRevoked' });

export const SigningKeyRotate = z
  .strictObject({
    retire_previous: z
      .boolean()
      .default(false)
      .describe(
        'Emergency rotation: every older key stops verifying at once, so every login token is refused (401) and everybody logs in again. API keys are unaffected.',
      ),
  })
  .meta({ id: 'SigningKeyRotate' });

export const SigningKeyRotated = z
  .object({
    kid: z.string().meta({ description: 'Key id of the new signing key.' }),
    retired: z
      .number()
      .int()
      .describe('Older keys retired: at once with `retire_previous`, otherwise scheduled for when the longest token they signed has expired.'),
  })
  .meta({ id: 'SigningKeyRotated' });

export const SessionsRevoked = z
  .object({
    user_id: Uuid,
    api_keys_revoked: z.number().int().describe('API keys of the user revoked now.'),
    tokens_revoked_before: z.string().describe('Login tokens of the user issued at or before this time are refused (401) from now on.'),
  })
  .meta({ id: 'SessionsRevoked' });

const Password = z.string().min(8).max(1024);

export const PasswordChange = z
  .strictObject({
    old_password: z.string().min(1).max(1024).describe('The current password; a wrong one is 403.'),
    new_password: Password.describe('At least 8 characters, as at registration.'),
  })
  .meta({ id: 'PasswordChange' });

export const PasswordSet = z.strictObject({ password: Password.describe('At least 8 characters, as at registration.') }).meta({ id: 'PasswordSet' });

export const UserPath = z.strictObject({ id: Uuid });

export const PasswordChanged = z
  .object({ user_id: Uuid, password_set: z.literal(true) })
  .meta({ id: 'PasswordChanged', description: 'The password is set; login tokens and API keys issued before stay valid.' });
