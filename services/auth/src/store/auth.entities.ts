/**
 * The tables of schema `auth`. Users themselves are records owned by the records service;
 * these hold only what proves who a caller is.
 */
import { EntitySchema } from '@mikro-orm/core';

/** The PostgreSQL schema auth owns. */
export const AUTH_SCHEMA = 'auth';

export interface CredentialRow {
  userId: string;
  /** Always lower-cased, so lookups and the unique index ignore case. */
  email: string;
  /** `scrypt$N$r$p$salt$hash`; null until a password is set (a User created as a record). */
  passwordHash: string | null;
  createdAt: Date;
}

export interface ApiKeyRow {
  id: string;
  userId: string;
  name: string;
  /** The first characters of the key, for display. */
  prefix: string;
  /** sha256 (hex) of the whole key; the key itself is never stored. */
  keyHash: string;
  createdAt: Date;
  lastUsedAt?: Date | null;
  revokedAt?: Date | null;
  /** When the key stops working; null: until revoked. */
  expiresAt?: Date | null;
  /** `agent`: the key calls only the farm and sitesync agent routes; null: a normal key. */
  scope?: 'agent' | null;
  /** An agent key's farm pools (a JSON list of names); null: any pool. */
  pools?: string[] | null;
}

export interface SigningKeyRow {
  kid: string;
  /** The private key sealed with SECRETS_KEY (signing-key.repository.ts). */
  privateKeySealed: string | null;
  /** Only in rows from before keys were sealed, until the first start seals them. */
  privateJwk: Record<string, unknown> | null;
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt?: Date | null;
}

export interface LoginFailureRow {
  id: string;
  email: string;
  failedAt: Date;
  /** A reservation whose password check has not finished yet. */
  pending: boolean;
}

export const CredentialEntity = new EntitySchema<CredentialRow>({
  name: 'Credential',
  tableName: 'credential',
  properties: {
    userId: { type: 'uuid', primary: true },
    email: { type: 'text', unique: true },
    passwordHash: { type: 'text', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

export const ApiKeyEntity = new EntitySchema<ApiKeyRow>({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: { type: 'uuid', primary: true },
    userId: { type: 'uuid' },
    name: { type: 'text' },
    prefix: { type: 'text' },
    keyHash: { type: 'text', unique: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    lastUsedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    revokedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    expiresAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    scope: { type: 'text', nullable: true },
    pools: { type: 'json', columnType: 'jsonb', nullable: true },
  },
});

export const SigningKeyEntity = new EntitySchema<SigningKeyRow>({
  name: 'SigningKey',
  tableName: 'signing_key',
  properties: {
    kid: { type: 'text', primary: true },
    privateKeySealed: { type: 'text', nullable: true },
    privateJwk: { type: 'json', columnType: 'jsonb', nullable: true },
    publicJwk: { type: 'json', columnType: 'jsonb' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    retiredAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});

export const LoginFailureEntity = new EntitySchema<LoginFailureRow>({
  name: 'LoginFailure',
  tableName: 'login_failure',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    email: { type: 'text' },
    failedAt: { type: 'Date', columnType: 'timestamptz' },
    pending: { type: 'boolean', default: false },
  },
});

/** Every entity of the schema, for openOrm. */
export const AUTH_ENTITIES = [CredentialEntity, ApiKeyEntity, SigningKeyEntity, LoginFailureEntity];
