/**
 * What auth's integration specs share: the contexts calls are made with, a call expected to
 * fail, and the environment of an auth service on a test database beside a records stand-in.
 */
import { createGrpcClient, createLogger, type AppError, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY } from '@reelbase/lib-testkit';
import { authv1 } from '@reelbase/proto';
import type { AuthConfig } from '../src/config.js';
import { startAuth, type RunningAuth } from '../src/service.js';

/** A call without a principal (register, login). */
export const anon: CallContext = { requestId: 'test' };

/** A call as the principal auth resolved. */
export const asPrincipal = (p: authv1.Principal): CallContext => ({
  requestId: 'test',
  principal: { userId: p.userId, role: p.role as 'Admin', authKind: p.authKind as 'token', apiKeyId: p.apiKeyId },
});

/** The error a call fails with (the test fails when it succeeds). */
export const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as AppError,
  );

/** The settings of an auth service on `databaseUrl`, its streams under `natsPrefix`, records at `recordsPort`. */
export function authTestEnv(databaseUrl: string, natsPrefix: string, recordsPort: number): Record<string, string> {
  return {
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    DATABASE_URL: databaseUrl,
    NATS_PREFIX: natsPrefix,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    RECORDS_ADDR: `127.0.0.1:${recordsPort}`,
    PASSWORD_SCRYPT_COST: '1024',
    LOG_LEVEL: 'silent',
  };
}

/** One running auth service and a signed client of it. */
export interface AuthReplica {
  auth: RunningAuth;
  client: GrpcClient<authv1.AuthServiceClient>;
}

/** Starts an auth service with `config` (silent) and a client of it; stop with `client.close()` then `auth.stop()`. */
export async function startAuthReplica(config: AuthConfig): Promise<AuthReplica> {
  const auth = await startAuth(config, createLogger('auth-test', 'silent'));
  const client = createGrpcClient(authv1.AuthServiceClient, authv1.AuthServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'auth',
    address: `127.0.0.1:${auth.grpcPort}`,
  });
  return { auth, client };
}
