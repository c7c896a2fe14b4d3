/**
 * ListEvents leaves out the events of the projects the gateway names as hidden for its caller
 * (docs/api-notes.md, "Restricted projects"), in SQL, before the limit and the byte budget count:
 * newest first and with `after=`, alone or with `project_id=` (a hidden one answers nothing), and
 * pages cut by the budget still continue from their last id. Events of no project always pass.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '@reelbase/lib-platform';
import { eventsWorld, makeEvent, waitForLastId, type EventsClient, type EventsWorld } from './helpers.js';

const BUDGET = 50_000;
const OPEN = randomUUID();
const SECRET = randomUUID();
const OTHER = randomUUID();

let world: EventsWorld;
let client: EventsClient;
/** project of each log id (1-based), as published. */
const projectOf: Array<string | null> = [null];

beforeAll(async () => {
  world = await eventsWorld('evh', { EVENTS_PAGE_MAX_BYTES: String(BUDGET) });
  client = world.client;
  // 30 events cycling open, secret, other, studio-wide; the secret ones are large, so a page that
  // counted them would be cut by the budget.
  const cycle = [OPEN, SECRET, OTHER, null];
  for (let i = 1; i <= 30; i++) {
    const project = cycle[(i - 1) % cycle.length]!;
    projectOf.push(project);
    const changes = project === SECRET ? { n: i, blob: 'x'.repeat(20_000) } : { n: i };
    await world.pub.publish(makeEvent({ project_id: project, entity_type: project === null ? 'User' : 'Shot', changes }));
  }
  await waitForLastId(client, 30);
});

afterAll(async () => {
  await world?.close();
});

const ids = (page: { items: { id: number }[] }) => page.items.map((e) => e.id);
const visible = (hidden: string[]) =>
  projectOf
    .map((p, id) => ({ p, id }))
    .filter(({ p, id }) => id > 0 && (p === null || !hidden.includes(p)))
    .map(({ id }) => id);

describe('ListEvents hidden_project_ids', () => {
  it('leaves the hidden projects out of a replay with after=, before the limit counts', async () => {
    const page = await client.list({ limit: 10, after: 0, hiddenProjectIds: [SECRET] });
    expect(ids(page)).toEqual(visible([SECRET]).slice(0, 10));
    expect(page.items.some((e) => e.projectId === SECRET)).toBe(false);
    expect(page.truncated).toBe(false);
    // The log's end is the log's, not the filtered page's (a socket's start is read with it).
    expect(page.lastId).toBe(30);
    // Without the filter the same read holds the secret project's events, cut by the budget.
    const unfiltered = await client.list({ limit: 10, after: 0 });
    expect(unfiltered.items.some((e) => e.projectId === SECRET)).toBe(true);
  });

  it('pages on from the last id with no gap among what remains', async () => {
    const seen: number[] = [];
    let after = 0;
    for (let pages = 0; pages < 20; pages++) {
      const page = await client.list({ limit: 4, after, hiddenProjectIds: [SECRET, OTHER] });
      seen.push(...ids(page));
      if (page.items.length < 4 && !page.truncated) break;
      after = page.items.at(-1)!.id;
    }
    expect(seen).toEqual(visible([SECRET, OTHER]));
  });

  it('leaves them out newest first too, and before= continues it', async () => {
    const first = await client.list({ limit: 5, hiddenProjectIds: [SECRET] });
    const expected = visible([SECRET]).reverse();
    expect(ids(first)).toEqual(expected.slice(0, 5));
    const next = await client.list({ limit: 5, before: first.items.at(-1)!.id, hiddenProjectIds: [SECRET] });
    expect(ids(next)).toEqual(expected.slice(5, 10));
  });

  it('answers nothing for project_id= of a hidden project, and the project itself when it is not hidden', async () => {
    const hidden = await client.list({ limit: 100, after: 0, projectId: SECRET, hiddenProjectIds: [SECRET] });
    expect(hidden.items).toEqual([]);
    expect(hidden.truncated).toBe(false);
    const open = await client.list({ limit: 100, after: 0, projectId: OPEN, hiddenProjectIds: [SECRET] });
    expect(ids(open)).toEqual(projectOf.flatMap((p, id) => (p === OPEN ? [id] : [])));
  });

  it('keeps studio-wide events (no project) whatever is hidden', async () => {
    const page = await client.list({ limit: 100, after: 0, entityType: 'User', hiddenProjectIds: [OPEN, SECRET, OTHER] });
    expect(ids(page)).toEqual(projectOf.flatMap((p, id) => (id > 0 && p === null ? [id] : [])));
  });

  it('accepts any spelling of an id and refuses one that is no UUID', async () => {
    const page = await client.list({ limit: 100, after: 0, hiddenProjectIds: [SECRET.toUpperCase()] });
    expect(page.items.some((e) => e.projectId === SECRET)).toBe(false);
    const err = await client.list({ limit: 1, hiddenProjectIds: ['nope'] }).catch((e: unknown) => e);
    expect(isAppError(err) && err.kind).toBe('invalid');
  });
});
