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

export const ApiKeyCreate = z.strictObject({ name: z.string().min(1).max(255) }).meta({ id: 'ApiKeyCreate' });

export const ApiKeyIssued = z
  .object({ id: Uuid, name: z.string(), token: z.string().describe('svc_…; shown once, stored only as a hash.'), created_at: z.string() })
  .meta({ id: 'ApiKeyIssued' });

export const ApiKeyOut = z
  .object({ id: Uuid, name: z.string(), prefix: z.string(), created_at: z.string(), last_used_at: z.string().nullable() })
  .meta({ id: 'ApiKey' });

export const ApiKeyList = z.object({ items: z.array(ApiKeyOut) }).meta({ id: 'ApiKeyList' });

export const ApiKeyPath = z.strictObject({ id: Uuid });

export const ApiKeyRevoked = z.object({ id: Uuid, revoked: z.literal(true) }).meta({ id: 'ApiKeyRevoked' });

export const SigningKeyRotated = z
  .object({ kid: z.string().meta({ description: 'Key id of the new signing key; older keys keep verifying.' }) })
  .meta({ id: 'SigningKeyRotated' });

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
