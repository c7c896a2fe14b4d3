/**
 * The gateway's live feed on the real NATS (a fresh prefix): with no WebSocket client it takes
 * the User rows its auth cache follows and the Project rows its project access map follows, and
 * no other; once a client asks, every row; after the last client left and the linger passed, the
 * User and Project rows again only.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createLogger, encodeContractEvent, natsNames, type ContractEvent } from '@reelbase/lib-platform';
import { uniquePrefix } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayBus, type GatewayBus } from '../src/live/gateway.bus.js';
import { startNatsFeed, type LiveFeed } from '../src/live/nats.feed.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const names = natsNames(uniquePrefix('gwfeed'));

let nc: NatsConnection;
let pub: NatsConnection;
let bus: GatewayBus;
let feed: LiveFeed;
const seen: string[] = [];
let id = 0;

function row(entityType: string): ContractEvent {
  return {
    id: ++id,
    entity_type: entityType,
    entity_id: '0190c6d2-0000-7000-8000-000000000001',
    project_id: null,
    action: 'update',
    actor: null,
    changes: {},
    created_at: new Date().toISOString(),
  } as unknown as ContractEvent;
}

/** Announces one row of each type, then waits until the feed's connection has had every message. */
async function announce(...types: string[]): Promise<void> {
  for (const t of types) pub.publish(names.liveEvent(t), encodeContractEvent(row(t)));
  await pub.flush();
  await nc.flush();
}

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  pub = await connect({ servers: NATS_URL });
  bus = createGatewayBus(createLogger('feed-test', 'silent'));
  bus.subscribe('event', (item) => seen.push(item.row.entity_type));
  feed = startNatsFeed(nc, names, bus, createLogger('feed-test', 'silent'), { lingerMs: 100 });
  await nc.flush();
});

afterAll(async () => {
  feed?.stop();
  await nc?.drain();
  await pub?.drain();
});

describe('live feed', () => {
  it('takes only User and Project rows while no client follows, every row once one does, and those only again after the linger', async () => {
    await announce('Shot', 'User', 'Project', 'Schema.Status');
    expect(seen.splice(0)).toEqual(['User', 'Project']);

    await feed.follow();
    await announce('Shot', 'User', 'Project', 'Schema.Status');
    // Each row once: the User and Project subscriptions are quiet while every row comes.
    expect(seen.splice(0)).toEqual(['Shot', 'User', 'Project', 'Schema.Status']);

    feed.idle();
    await announce('Task');
    expect(seen.splice(0)).toEqual(['Task']); // lingering
    await new Promise((r) => setTimeout(r, 250));
    await announce('Shot', 'User', 'Project');
    expect(seen.splice(0)).toEqual(['User', 'Project']);
  });

  it('keeps every row when a client asks again within the linger', async () => {
    await feed.follow();
    feed.idle();
    await new Promise((r) => setTimeout(r, 50));
    await feed.follow();
    await new Promise((r) => setTimeout(r, 150));
    await announce('Shot');
    expect(seen.splice(0)).toEqual(['Shot']);
    feed.idle();
  });
});
