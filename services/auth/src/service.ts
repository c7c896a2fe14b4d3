/**
 * Wires the auth service: PostgreSQL (schema auth), NATS, the records client, the gRPC
 * server and the ops server. Used by main.ts and, in-process, by tests.
 */
import {
  connectNats,
  createGrpcClient,
  createLogger,
  GrpcServer,
  IntervalLoop,
  Metrics,
  openOrm,
  pingDb,
  pingNats,
  Readiness,
  RecordsClient,
  SecretCipher,
  startOpsServer,
  withResources,
  type Logger,
  type RunningService,
  ormPoolSample,
} from '@reelbase/lib-platform';
import { authv1, healthv1 } from '@reelbase/proto';
import type { AuthConfig } from './config.js';
import { ApiKeyService } from './domain/api-key.service.js';
import { Authenticator } from './domain/authenticator.js';
import { LoginService } from './domain/login.service.js';
import { LoginThrottle, THROTTLE_WINDOW_MS } from './domain/login.throttle.js';
import { LoginTokenIssuer } from './domain/login-token.issuer.js';
import { PasswordHasher } from './domain/password.hasher.js';
import { RegistrationService } from './domain/registration.service.js';
import { SIGNING_KEY_REFRESH_MS, SigningKeyRing } from './domain/signing-key.ring.js';
import { SigningKeyRotation } from './domain/signing-key.rotation.js';
import { CLAIM_SETTLE_AFTER_MS, UserAccountService } from './domain/user-account.service.js';
import { AUTH_SERVICE_NAME, authHandlers } from './grpc/auth.handler.js';
import { followRotations, NatsRevocationPublisher } from './nats/revocation.publisher.js';
import { RecordsUserDirectory } from './records/records.user-directory.js';
import { ApiKeyRepository } from './store/api-key.repository.js';
import { AUTH_ENTITIES, AUTH_SCHEMA } from './store/auth.entities.js';
import { CredentialRepository } from './store/credential.repository.js';
import { AUTH_MIGRATIONS } from './store/migrations.js';
import { LoginFailureRepository } from './store/login-failure.repository.js';
import { SessionRevocationRepository } from './store/session-revocation.repository.js';
import { SigningKeyRepository } from './store/signing-key.repository.js';

/** A running auth service. */
export interface RunningAuth extends RunningService {
  grpcPort: number;
}

/** Starts auth; rejects (after closing what it opened) when a dependency is unreachable. */
export function startAuth(config: AuthConfig, logger: Logger = createLogger('auth', config.LOG_LEVEL)): Promise<RunningAuth> {
  return withResources(
    logger,
    async (resources) => {
      const metrics = new Metrics('auth');
      const orm = await openOrm({
        clientUrl: config.DATABASE_URL,
        schema: AUTH_SCHEMA,
        entities: AUTH_ENTITIES,
        migrations: AUTH_MIGRATIONS,
        logger,
      });
      resources.defer('postgres', () => orm.close());
      const nc = await connectNats(config.NATS_URL, 'auth', logger);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      const records = new RecordsClient({ address: config.RECORDS_ADDR, internalAuthSecret: config.INTERNAL_AUTH_SECRET, metrics });
      resources.defer('records client', () => records.close());
      const users = new RecordsUserDirectory(records);
      const recordsHealth = createGrpcClient(healthv1.HealthClient, healthv1.HealthService, {
        name: 'records',
        address: config.RECORDS_ADDR,
        internalAuthSecret: config.INTERNAL_AUTH_SECRET,
        deadlineMs: 1000,
      });
      resources.defer('records health client', () => recordsHealth.close());

      const hasher = new PasswordHasher(config.PASSWORD_SCRYPT_COST);
      await hasher.warm();
      const signingKeys = new SigningKeyRepository(orm, new SecretCipher(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS ?? []));
      // Rows written before keys were sealed, or sealed with an earlier SECRETS_KEY.
      const sealed = await signingKeys.sealStored();
      if (sealed > 0) logger.info({ sealed }, 'signing keys encrypted with the current SECRETS_KEY');
      const ring = new SigningKeyRing(signingKeys, Date.now, config.JWT_TTL_SECONDS);
      await ring.init();
      resources.defer('signing key follower', followRotations(nc, config.NATS_PREFIX, ring, logger));
      resources.startLoop(
        'signing key reload',
        new IntervalLoop(
          SIGNING_KEY_REFRESH_MS,
          () => ring.refresh(),
          (err) => logger.warn({ err }, 'signing key reload failed'),
        ),
      );
      const tokens = new LoginTokenIssuer(ring, config.JWT_ISSUER, config.JWT_TTL_SECONDS);
      const credentials = new CredentialRepository(orm);
      const apiKeyStore = new ApiKeyRepository(orm);
      const failures = new LoginFailureRepository(orm);
      const throttle = new LoginThrottle(failures, config.LOGIN_MAX_FAILURES);

      const accounts = new UserAccountService({ store: credentials, users, hasher, throttle, logger });
      const sessions = new SessionRevocationRepository(orm);
      const revocations = new NatsRevocationPublisher(nc, config.NATS_PREFIX, logger);
      const handlers = authHandlers({
        registration: new RegistrationService({ credentials, users, hasher, tokens, logger }),
        login: new LoginService({ credentials, users, hasher, tokens, throttle, logger }),
        authenticator: new Authenticator({ apiKeys: apiKeyStore, sessions, tokens, users, cacheSeconds: config.PRINCIPAL_CACHE_SECONDS, logger }),
        apiKeys: new ApiKeyService({ store: apiKeyStore, sessions, users, notifier: revocations, logger, maxPerUser: config.API_KEYS_PER_USER }),
        rotation: new SigningKeyRotation(ring, revocations, logger),
        accounts,
      });
      const grpc = new GrpcServer({ logger, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET }).add<authv1.AuthServiceServer>(
        AUTH_SERVICE_NAME,
        authv1.AuthServiceService,
        handlers,
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      const readiness = new Readiness()
        .add('postgres', () => pingDb(orm))
        .add('nats', () => pingNats(nc))
        .add('records', async () => {
          const res = await recordsHealth.call.check({ service: '' }, { requestId: 'readyz' });
          if (res.status !== healthv1.HealthCheckResponse_ServingStatus.SERVING) throw new Error('records is not serving');
        });
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
      resources.defer('ops', () => ops.close());

      // Failures older than the window never count again; sweep them so the table stays small.
      resources.startLoop(
        'login failure sweeper',
        new IntervalLoop(
          THROTTLE_WINDOW_MS,
          () => failures.sweep(new Date(Date.now() - THROTTLE_WINDOW_MS)),
          (err) => logger.warn({ err }, 'login failure sweep failed'),
        ),
      );

      // Login address claims left by a write that died half-way are finished from what the record says.
      resources.startLoop(
        'login address claim sweeper',
        new IntervalLoop(
          CLAIM_SETTLE_AFTER_MS / 2,
          () => accounts.resolveStale(),
          (err) => logger.warn({ err }, 'login address claim sweep failed'),
          {
            immediate: true,
          },
        ),
      );

      return { grpcPort, httpPort: ops.port, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
