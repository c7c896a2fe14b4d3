/**
 * What the scheduler's integration specs share: a test database migrated by two replicas (two
 * pools, one database), a clock the test moves, and records' farm, the users directory and the
 * notifier stood in (they record what they were asked, and fail as the test says).
 */
import { createLogger, natsNames, newId, openOrm, SecretCipher, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { configDigest } from '../src/kernel/domain/config.events.js';
import { SchedulerLoop } from '../src/scheduler/loop/scheduler.loop.js';
import type { ScheduleAuthor, ScheduleDelivery } from '../src/scheduler/domain/scheduler.ports.js';
import type { SchedulerLimits } from '../src/scheduler/domain/scheduler.rules.js';
import { SchedulerService } from '../src/scheduler/domain/scheduler.service.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from '../src/migrations.js';
import { SchedulerRepository } from '../src/scheduler/store/scheduler.repository.js';

export const ADMIN = newId();
export const ADMIN2 = newId();
export const P = newId();
export const admin: CallContext = { requestId: 'int', principal: { userId: ADMIN, role: 'Admin', authKind: 'token' } };
export const admin2: CallContext = { requestId: 'int', principal: { userId: ADMIN2, role: 'Admin', authKind: 'token' } };
export const artist: CallContext = { requestId: 'int', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };

export const farmTarget = { kind: 'farm_job', job: { project_id: P, name: 'dailies', kind: 'playlist' } };

/**
 * The database, the two replicas and the stand-ins of one spec file, with its hooks: the
 * database and the replicas made before all tests, dropped after them; the schedules, the
 * stand-ins and the clock reset before each test.
 */
export function schedulerWorld() {
  let db: TestDatabase;
  const orms: MikroORM[] = [];
  const replicas: SchedulerService[] = [];
  const jobs: { job: Record<string, unknown>; ctx: CallContext }[] = [];
  const deliveries = new Map<string, ScheduleDelivery>();
  /** The users directory as the scheduler reads it; a user missing here is retired. */
  const users = new Map<string, ScheduleAuthor>();

  async function sql<R>(text: string, params: unknown[] = []): Promise<R[]> {
    const res = await orms[0]!.em
      .getConnection()
      .getKnex()
      .raw<{ rows: R[] }>(text, params as never);
    return res.rows;
  }

  async function replica(limits: Partial<SchedulerLimits> = {}): Promise<SchedulerService> {
    const orm = await openOrm({
      clientUrl: db.url,
      schema: SCHEMA_SCHEMA,
      entities: [],
      migrations: SCHEMA_MIGRATIONS,
      logger: createLogger('schema', 'silent'),
    });
    orms.push(orm);
    return new SchedulerService({
      store: new SchedulerRepository(orm.em.getConnection().getKnex(), natsNames(''), new SecretCipher(TEST_SECRETS_KEY)),
      farm: {
        createJob: async (job, ctx) => {
          // A round trip's worth of time, so replicas overlap while a run is open.
          await new Promise((r) => setTimeout(r, 5));
          if (world.failFarm) throw new Error('records is unavailable');
          jobs.push({ job, ctx });
          return newId();
        },
      },
      deliveries: {
        enqueue: async (d) => {
          // The notifier refuses a target it cannot parse, naming it.
          if (d.url.includes('refused')) throw new Error(`the notifier refused ${d.url}`);
          deliveries.set(d.deliveryId, d);
          return d.deliveryId;
        },
      },
      authors: {
        find: async (userId) => {
          if (world.directoryDown) throw new Error('records is unavailable');
          return users.get(userId) ?? null;
        },
      },
      digest: configDigest(Buffer.alloc(32, 9)),
      limits,
      clock: { now: () => world.now },
    });
  }

  const setClock = (iso: string) => {
    world.now = new Date(iso);
  };

  /** Every replica ticks at once, `times` times. */
  async function tickAll(times = 3): Promise<void> {
    for (let i = 0; i < times; i += 1) {
      await Promise.all(
        replicas.map(async (r) =>
          new SchedulerLoop(
            1000,
            () => r.runDue(),
            (err) => {
              throw err;
            },
          ).tick(),
        ),
      );
    }
  }

  async function create(body: Record<string, unknown>): Promise<any> {
    return replicas[0]!.create(JSON.stringify(body), admin);
  }

  const runsOf = async (id: string) => (await replicas[0]!.runs(id, { limit: 500 }, admin)).items;
  const outboxEvents = async (type: string) =>
    (await sql<{ payload: StreamEvent }>(`select payload from schema.outbox where payload->>'entity_type' = ? order by seq`, [type])).map((r) => r.payload);

  const world = {
    /** The time every replica reads. */
    now: new Date('2026-06-01T12:00:30.000Z'),
    failFarm: false,
    directoryDown: false,
    orms,
    replicas,
    jobs,
    deliveries,
    users,
    sql,
    replica,
    setClock,
    tickAll,
    create,
    runsOf,
    outboxEvents,
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    replicas.push(await replica(), await replica());
  });

  afterAll(async () => {
    for (const orm of orms) await orm.close(true);
    await db?.drop();
  });

  beforeEach(async () => {
    await sql('delete from schema.schedule');
    jobs.length = 0;
    deliveries.clear();
    world.failFarm = false;
    world.directoryDown = false;
    users.clear();
    users.set(ADMIN, { role: 'Admin', canSignIn: true });
    users.set(ADMIN2, { role: 'Admin', canSignIn: true });
    setClock('2026-06-01T12:00:30.000Z');
  });

  return world;
}
