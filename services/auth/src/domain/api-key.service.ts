/**
 * API keys of the calling user: issue (shown once), list, revoke. A revocation is announced
 * on NATS so every gateway drops its cached answer at once.
 */
import { AppError, isUuid, newId, type CallContext, type Logger } from '@reelbase/lib-platform';
import { generateApiKey } from './api-key.token.js';
import { isAdmin, requireUser } from './auth.rules.js';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string;
}

interface StoredKey {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt?: Date | null;
  revokedAt?: Date | null;
}

export interface ApiKeyStore {
  insert(row: { id: string; userId: string; name: string; prefix: string; keyHash: string }): Promise<StoredKey>;
  findById(id: string): Promise<StoredKey | null>;
  listActive(userId: string): Promise<StoredKey[]>;
  revoke(id: string): Promise<boolean>;
}

/** Announces revocations to every gateway. */
export interface RevocationNotifier {
  apiKeyRevoked(event: { api_key_id: string; user_id: string }): Promise<void>;
}

export const MAX_KEY_NAME_LENGTH = 200;

function view(k: StoredKey): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    createdAt: new Date(k.createdAt).toISOString(),
    lastUsedAt: k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : undefined,
  };
}

export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly notifier: RevocationNotifier,
    private readonly logger: Logger,
  ) {}

  async issue(rawName: string, ctx: CallContext): Promise<{ key: ApiKeyView; token: string }> {
    const caller = requireUser(ctx);
    const name = rawName.trim();
    if (!name) throw AppError.invalid([{ loc: ['name'], msg: 'Field required', type: 'missing' }]);
    if (name.length > MAX_KEY_NAME_LENGTH) {
      throw AppError.invalid([{ loc: ['name'], msg: `String should have at most ${MAX_KEY_NAME_LENGTH} characters`, type: 'string_too_long' }]);
    }
    const generated = generateApiKey();
    const row = await this.store.insert({ id: newId(), userId: caller.userId, name, prefix: generated.prefix, keyHash: generated.hash });
    this.logger.info({ api_key_id: row.id, user_id: caller.userId, request_id: ctx.requestId }, 'API key issued');
    return { key: view(row), token: generated.token };
  }

  async list(ctx: CallContext): Promise<ApiKeyView[]> {
    const caller = requireUser(ctx);
    return (await this.store.listActive(caller.userId)).map(view);
  }

  /** Revokes the caller's key (an Admin may revoke anyone's); any other id is not found. */
  async revoke(id: string, ctx: CallContext): Promise<void> {
    const caller = requireUser(ctx);
    const notFound = () => AppError.notFound('API key not found');
    if (!isUuid(id)) throw notFound();
    const key = await this.store.findById(id);
    if (!key || key.revokedAt || (key.userId !== caller.userId && !isAdmin(caller))) throw notFound();
    if (!(await this.store.revoke(id))) throw notFound();
    this.logger.info({ api_key_id: id, user_id: key.userId, by: caller.userId, request_id: ctx.requestId }, 'API key revoked');
    await this.notifier.apiKeyRevoked({ api_key_id: id, user_id: key.userId });
  }
}
