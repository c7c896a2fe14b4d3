/**
 * The schema rules through SchemaService with in-memory ports: seeding, codes, conflicts
 * (duplicate_code, builtin, code_in_use with usage), the snapshot handed to records before
 * the answer, events, and renames with their journal (including a crash before the cascade).
 */
import { AppError, createLogger, newId, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Commit, JournalEntry, RecordsPort, SchemaFaults, SchemaStore } from './ports.js';
import { BUILTIN_STATUSES, BUILTIN_TYPES, builtinStatusType } from './builtins.js';
import { SchemaService, type SchemaRequest } from './schema.service.js';
import { emptyDoc, FIELD_TYPES, type SchemaDoc, type SchemaUsage } from './schema.types.js';

class MemoryStore implements SchemaStore {
  doc: SchemaDoc = emptyDoc();
  /** The next commit fails after its beforeCommit ran (the database lost at COMMIT). */
  failNextCommit = false;
  events: StreamEvent[] = [];
  journal: (JournalEntry & { done: boolean; rewritten?: number })[] = [];

  async load() {
    return structuredClone(this.doc);
  }
  async version() {
    return this.doc.version;
  }
  async commit<R>(change: (doc: SchemaDoc) => Commit<R> | null, beforeCommit?: (out: Commit<R>) => Promise<void>) {
    const out = change(structuredClone(this.doc));
    if (!out) return null;
    out.doc.version = this.doc.version + 1;
    if (beforeCommit) await beforeCommit(out);
    if (this.failNextCommit) {
      this.failNextCommit = false;
      throw new Error('connection lost at commit');
    }
    this.doc = structuredClone(out.doc);
    this.events.push(...out.events);
    if (out.journal) this.journal.push({ ...out.journal, done: false });
    return out;
  }
  async pendingRenames() {
    return this.journal.filter((j) => !j.done);
  }
  async finishRename(id: string, rewritten: number, event: StreamEvent) {
    const j = this.journal.find((x) => x.id === id)!;
    if (j.done) return false;
    j.done = true;
    j.rewritten = rewritten;
    this.events.push(event);
    return true;
  }
}

class FakeRecords implements RecordsPort {
  applied: { version: number; snapshot: Record<string, unknown> }[] = [];
  renames: JournalEntry[] = [];
  usage: SchemaUsage = { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {} };
  overrides: Record<string, Record<string, unknown> | null> = {};
  /** Records holding each code, as the cascade would rewrite them. */
  rewrites = 0;

  /** A code records finds in use under its lock (a write that landed after the usage count). */
  usedUnderLock?: string;
  guarded: number[] = [];

  async applySchema(version: number, snapshotJson: string, opts: { refuseRemovedInUse?: boolean } = {}) {
    if (opts.refuseRemovedInUse) {
      this.guarded.push(version);
      if (this.usedUnderLock) throw AppError.conflict('code_in_use', `status ${this.usedUnderLock} is still used by 1 record`, { usage: 1 });
    }
    if (this.applied.some((a) => a.version >= version)) return;
    this.applied.push({ version, snapshot: JSON.parse(snapshotJson) });
  }
  async applyRename(entry: JournalEntry) {
    this.renames.push(entry);
    return this.rewrites;
  }
  async countUsage() {
    return structuredClone(this.usage);
  }
  async projectOverrides(id: string) {
    if (!(id in this.overrides)) throw AppError.notFound(`project ${id} does not exist`);
    return this.overrides[id]!;
  }
}

class Faults implements SchemaFaults {
  crash = false;
  afterJournal() {
    if (this.crash) throw new Error('crashed after journal');
  }
}

const ADMIN: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const ARTIST: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };

const req = (body: unknown = {}, path: Partial<Omit<SchemaRequest, 'body'>> = {}): SchemaRequest => ({
  body: JSON.stringify(body),
  code: '',
  fieldCode: '',
  entityCode: '',
  ...path,
});

async function rejects(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

let store: MemoryStore;
let records: FakeRecords;
let faults: Faults;
let service: SchemaService;

beforeEach(async () => {
  store = new MemoryStore();
  records = new FakeRecords();
  faults = new Faults();
  service = new SchemaService({ store, records, faults, logger: createLogger('schema-spec', 'silent') });
  await service.sync();
});

describe('seeding', () => {
  it('adds every built-in type and field once; a second sync changes nothing', async () => {
    const doc = await store.load();
    expect(doc.entity_types.map((t) => t.code)).toEqual(BUILTIN_TYPES.map((t) => t.code));
    expect(doc.entity_types.find((t) => t.code === 'Shot')!.fields.map((f) => f.code)).toEqual(['code', 'description', 'sequence', 'cut_in', 'cut_out']);
    expect(doc.entity_types.find((t) => t.code === 'Project')!.project_scoped).toBe(false);
    expect(doc.version).toBe(1);
    const events = store.events.length;
    expect(events).toBe(BUILTIN_TYPES.length + BUILTIN_STATUSES.length);
    await service.sync();
    expect((await store.load()).version).toBe(1);
    expect(store.events.length).toBe(events);
    // records got the seeded snapshot once
    expect(records.applied.map((a) => a.version)).toEqual([1]);
  });

  it('adds a built-in field missing from an older store without touching the rest', async () => {
    store.doc.entity_types.find((t) => t.code === 'Shot')!.fields.pop();
    // The next start (a release that added a built-in field).
    service = new SchemaService({ store, records, faults, logger: createLogger('schema-spec', 'silent') });
    await service.sync();
    const doc = await store.load();
    expect(doc.version).toBe(2);
    expect(doc.entity_types.find((t) => t.code === 'Shot')!.fields.at(-1)!.code).toBe('cut_out');
    expect(store.events.at(-1)).toMatchObject({ entity_type: 'Schema.Field', action: 'create', changes: { entity_type: 'Shot', code: 'cut_out' } });
  });
});

describe('entity types', () => {
  it('creates a custom type, hands records the snapshot before answering, and logs one event', async () => {
    const out = await service.change('createEntityType', ADMIN, req({ code: 'Camera', name: 'Camera', project_scoped: false }));
    expect(out).toMatchObject({ code: 'Camera', builtin: false, project_scoped: false, fields: [] });
    const last = records.applied.at(-1)!;
    expect(last.version).toBe(2);
    expect((last.snapshot.entity_types as { code: string }[]).some((t) => t.code === 'Camera')).toBe(true);
    expect(store.events.at(-1)).toMatchObject({ entity_type: 'Schema.EntityType', action: 'create', project_id: null, actor: ADMIN.principal!.userId });
  });

  it('refuses duplicates (409 duplicate_code), bad codes (422) and non-Admins (403)', async () => {
    expect((await rejects(service.change('createEntityType', ADMIN, req({ code: 'Shot', name: 'x' })))).code).toBe('duplicate_code');
    const bad = await rejects(service.change('createEntityType', ADMIN, req({ code: 'camera', name: 'x', extra: 1 })));
    expect(bad.kind).toBe('invalid');
    expect(bad.problems.map((p) => p.loc.join('.'))).toEqual(expect.arrayContaining(['body.code', 'body.extra']));
    expect((await rejects(service.change('createEntityType', ARTIST, req({ code: 'Camera', name: 'x' })))).kind).toBe('forbidden');
  });

  it('built-in types cannot be deleted or renamed (409 builtin)', async () => {
    expect((await rejects(service.change('deleteEntityType', ADMIN, req({}, { entityCode: 'Shot' })))).code).toBe('builtin');
    expect((await rejects(service.change('renameEntityType', ADMIN, req({ name: 'Plate' }, { entityCode: 'Shot' })))).code).toBe('builtin');
    expect((await rejects(service.change('renameEntityTypeCode', ADMIN, req({ new_code: 'Plate' }, { code: 'Shot' })))).code).toBe('builtin');
  });

  it('a type still used by records cannot be deleted (409 code_in_use with usage); an unused one can', async () => {
    await service.change('createEntityType', ADMIN, req({ code: 'Camera', name: 'Camera' }));
    records.usage.entity_types.Camera = 3;
    const err = await rejects(service.change('deleteEntityType', ADMIN, req({}, { entityCode: 'Camera' })));
    expect(err.code).toBe('code_in_use');
    expect(err.extra).toEqual({ usage: 3 });
    records.usage.entity_types.Camera = 0;
    await service.change('deleteEntityType', ADMIN, req({}, { entityCode: 'Camera' }));
    expect((await store.load()).entity_types.some((t) => t.code === 'Camera')).toBe(false);
    expect((await rejects(service.change('deleteEntityType', ADMIN, req({}, { entityCode: 'Camera' })))).kind).toBe('not_found');
  });
});

describe('fields', () => {
  it('a custom type takes one field of every type', async () => {
    await service.change('createEntityType', ADMIN, req({ code: 'Camera', name: 'Camera' }));
    for (const type of FIELD_TYPES) {
      const body: Record<string, unknown> = { code: `f_${type}`, name: type, type };
      if (type === 'enum' || type === 'multi_enum')
        body.options = [
          { code: 'a', label: 'A' },
          { code: 'b', label: 'B' },
        ];
      if (type === 'link' || type === 'multi_link') body.link_types = ['Shot'];
      if (type === 'integer') Object.assign(body, { required: true, default: 24 });
      await service.change('createField', ADMIN, req(body, { entityCode: 'Camera' }));
    }
    const snap = records.applied.at(-1)!.snapshot as {
      entity_types: { code: string; fields: { code: string; type: string; default: unknown; required: boolean }[] }[];
    };
    const camera = snap.entity_types.find((t) => t.code === 'Camera')!;
    expect(camera.fields.map((f) => f.type)).toEqual([...FIELD_TYPES]);
    expect(camera.fields.find((f) => f.code === 'f_integer')).toMatchObject({ required: true, default: 24 });
  });

  it('refuses a record column as a field code, options on a non-enum, unknown link types and a default of the wrong type', async () => {
    const err = await rejects(service.change('createField', ADMIN, req({ code: 'status', name: 'S', type: 'text' }, { entityCode: 'Shot' })));
    expect(err.problems.map((p) => p.loc.join('.'))).toEqual(['body.code']);
    const many = await rejects(
      service.change(
        'createField',
        ADMIN,
        req({ code: 'lens', name: 'L', type: 'integer', options: [{ code: 'a', label: 'A' }], default: 'x' }, { entityCode: 'Shot' }),
      ),
    );
    expect(many.problems.map((p) => p.loc.join('.')).sort()).toEqual(['body.default', 'body.options']);
    const link = await rejects(
      service.change('createField', ADMIN, req({ code: 'cam', name: 'C', type: 'link', link_types: ['Nope'] }, { entityCode: 'Shot' })),
    );
    expect(link.problems.map((p) => p.loc.join('.'))).toEqual(['body.link_types.0']);
    expect((await rejects(service.change('createField', ADMIN, req({ code: 'cut_in', name: 'C', type: 'integer' }, { entityCode: 'Shot' })))).code).toBe(
      'duplicate_code',
    );
    expect((await rejects(service.change('createField', ADMIN, req({ code: 'x', name: 'C', type: 'integer' }, { entityCode: 'Nope' })))).kind).toBe(
      'not_found',
    );
  });

  it('built-in fields cannot be deleted; a used custom field cannot; dropping a used option is 409', async () => {
    expect((await rejects(service.change('deleteField', ADMIN, req({}, { entityCode: 'Shot', fieldCode: 'cut_in' })))).code).toBe('builtin');
    await service.change(
      'createField',
      ADMIN,
      req(
        {
          code: 'lens',
          name: 'Lens',
          type: 'enum',
          options: [
            { code: 'a', label: 'A' },
            { code: 'b', label: 'B' },
          ],
        },
        { entityCode: 'Shot' },
      ),
    );
    records.usage.fields['Shot.lens'] = 2;
    records.usage.options = { 'Shot.lens.a': 2 };
    expect((await rejects(service.change('deleteField', ADMIN, req({}, { entityCode: 'Shot', fieldCode: 'lens' })))).extra).toEqual({ usage: 2 });
    const dropA = await rejects(service.change('updateField', ADMIN, req({ options: [{ code: 'b', label: 'B' }] }, { entityCode: 'Shot', fieldCode: 'lens' })));
    expect(dropA.code).toBe('code_in_use');
    const out = (await service.change('updateField', ADMIN, req({ options: [{ code: 'a', label: 'Alpha' }] }, { entityCode: 'Shot', fieldCode: 'lens' }))) as {
      options: unknown;
    };
    expect(out.options).toEqual([{ code: 'a', label: 'Alpha', color: null, builtin: false }]);
    // User roles are the platform's own: not removable
    const role = await rejects(
      service.change('updateField', ADMIN, req({ options: [{ code: 'Admin', label: 'Admin' }] }, { entityCode: 'User', fieldCode: 'role' })),
    );
    expect(role.code).toBe('builtin');
  });
});

describe('statuses, steps, priorities', () => {
  it('status delete with entity_code narrows the scope; a scope left empty deletes it', async () => {
    await service.change('createStatus', ADMIN, req({ code: 'ip', name: 'In progress', state: 'in_progress' }));
    const narrowed = (await service.change('deleteStatus', ADMIN, req({}, { code: 'ip', entityCode: 'Shot' }))) as { entity_types: string[] };
    const others = BUILTIN_TYPES.map((t) => t.code).filter((c) => c !== 'Shot');
    expect(narrowed.entity_types).toEqual(others);
    await service.change('createStatus', ADMIN, req({ code: 'wtg', name: 'Waiting', state: 'not_started', entity_types: ['Shot'] }));
    expect(await service.change('deleteStatus', ADMIN, req({}, { code: 'wtg', entityCode: 'Shot' }))).toEqual({ code: 'wtg', deleted: true });
    expect((await rejects(service.change('deleteStatus', ADMIN, req({}, { code: 'ip', entityCode: 'Shot' })))).kind).toBe('not_found');
    records.usage.statuses.ip = 5;
    expect((await rejects(service.change('deleteStatus', ADMIN, req({}, { code: 'ip' })))).extra).toEqual({ usage: 5 });
  });

  it('a delete hands records its snapshot before it commits; refused there (a write landed after the count), nothing changes', async () => {
    await service.change('createStatus', ADMIN, req({ code: 'race', name: 'Race', state: 'in_progress' }));
    const before = structuredClone(store.doc);
    const applied = records.applied.length;
    records.usedUnderLock = 'race';
    const err = await rejects(service.change('deleteStatus', ADMIN, req({}, { code: 'race' })));
    expect(err).toMatchObject({ code: 'code_in_use', extra: { usage: 1 } });
    expect(records.guarded).toEqual([before.version + 1]);
    expect(store.doc).toEqual(before);
    expect(records.applied).toHaveLength(applied);
    records.usedUnderLock = undefined;
    expect(await service.change('deleteStatus', ADMIN, req({}, { code: 'race' }))).toEqual({ code: 'race', deleted: true });
    expect(records.guarded).toEqual([before.version + 1, before.version + 1]);
    expect(records.applied.at(-1)!.version).toBe(before.version + 1);
    expect(store.doc.statuses.map((s) => s.code)).not.toContain('race');
    // Changes that remove nothing commit first and are applied after, as before.
    await service.change('createStep', ADMIN, req({ code: 'fx', name: 'FX' }));
    expect(records.guarded).toHaveLength(2);
  });

  it('a delete records took but that failed to commit is followed by the definitions at a newer version', async () => {
    await service.change('createStatus', ADMIN, req({ code: 'lost', name: 'Lost', state: 'blocked' }));
    const v = store.doc.version;
    store.failNextCommit = true;
    await expect(service.change('deleteStatus', ADMIN, req({}, { code: 'lost' }))).rejects.toThrow('connection lost at commit');
    // records took v + 1 (without the status); the store moved past it with the status kept.
    expect(records.guarded).toEqual([v + 1]);
    expect(store.doc.version).toBe(v + 2);
    const last = records.applied.at(-1)!;
    expect(last.version).toBe(v + 2);
    expect((last.snapshot.statuses as { code: string }[]).map((s) => s.code)).toContain('lost');
  });

  it('StepReorder must be a permutation of the existing codes', async () => {
    for (const code of ['layout', 'anim', 'comp']) await service.change('createStep', ADMIN, req({ code, name: code }));
    for (const codes of [
      ['comp', 'anim'],
      ['comp', 'anim', 'anim'],
      ['comp', 'anim', 'lighting'],
      ['comp', 'anim', 'layout', 'fx'],
    ]) {
      const err = await rejects(service.change('reorderSteps', ADMIN, req({ codes })));
      expect(err.kind).toBe('invalid');
      // A repeated code is named by its place (['body', 'codes', 2]), the body schema being the gateway's.
      expect(err.problems[0]!.loc.slice(0, 2)).toEqual(['body', 'codes']);
    }
    await service.change('reorderSteps', ADMIN, req({ codes: ['comp', 'layout', 'anim'] }));
    expect((await store.load()).steps.map((s) => s.code)).toEqual(['comp', 'layout', 'anim']);
  });

  it('priorities are kept by rank; a used one cannot be deleted', async () => {
    await service.change('createPriority', ADMIN, req({ code: 'high', name: 'High', rank: 1 }));
    await service.change('createPriority', ADMIN, req({ code: 'low', name: 'Low', rank: 3 }));
    await service.change('createPriority', ADMIN, req({ code: 'mid', name: 'Mid', rank: 2 }));
    expect((await store.load()).priorities.map((p) => p.code)).toEqual(['high', 'mid', 'low']);
    records.usage.priorities.low = 1;
    expect((await rejects(service.change('deletePriority', ADMIN, req({}, { code: 'low' })))).code).toBe('code_in_use');
  });

  it('transitions name statuses of the type; [] removes them', async () => {
    await service.change('createStatus', ADMIN, req({ code: 'wtg', name: 'W', state: 'not_started' }));
    await service.change('createStatus', ADMIN, req({ code: 'apr', name: 'A', state: 'done', entity_types: ['Asset'] }));
    const bad = await rejects(service.change('setTransitions', ADMIN, req({ entity_type: 'Shot', transitions: [{ from: 'wtg', to: ['apr', 'nope'] }] })));
    expect(bad.problems.map((p) => p.loc.join('.'))).toEqual(['body.transitions.0.to.0', 'body.transitions.0.to.1']);
    await service.change('setTransitions', ADMIN, req({ entity_type: 'Asset', transitions: [{ from: 'wtg', to: ['apr'], roles: ['Supervisor'] }] }));
    expect(records.applied.at(-1)!.snapshot.transitions).toEqual({ Asset: [{ from: 'wtg', to: ['apr'], roles: ['Supervisor'] }] });
    await service.change('setTransitions', ADMIN, req({ entity_type: 'Asset', transitions: [] }));
    expect(records.applied.at(-1)!.snapshot.transitions).toEqual({});
  });
});

describe('renames', () => {
  async function setup() {
    await service.change('createStatus', ADMIN, req({ code: 'ip', name: 'IP', state: 'in_progress' }));
    await service.change('createStatus', ADMIN, req({ code: 'fin', name: 'Final', state: 'done' }));
    await service.change('createStep', ADMIN, req({ code: 'comp', name: 'Comp' }));
    await service.change('createField', ADMIN, req({ code: 'lens', name: 'Lens', type: 'enum', options: [{ code: 'a', label: 'A' }] }, { entityCode: 'Shot' }));
    await service.change('createWorkflow', ADMIN, req({ code: 'wf', entity_type: 'Shot', field: 'lens', schemas: [{ option: 'a', steps: ['comp'] }] }));
    await service.change('setTransitions', ADMIN, req({ entity_type: 'Shot', transitions: [{ from: 'ip', to: ['fin'] }] }));
    await service.change(
      'setTaskTemplates',
      ADMIN,
      req({ templates: [{ code: 'std', name: 'Std', entity_type: 'Shot', tasks: [{ name: 'Comp', step: 'comp' }] }] }),
    );
  }

  it('a status rename cascades in records, rewrites transitions, answers the count and logs one event', async () => {
    await setup();
    records.rewrites = 7;
    const out = await service.change('renameStatus', ADMIN, req({ new_code: 'wip' }, { code: 'ip' }));
    expect(out).toMatchObject({ kind: 'status', old_code: 'ip', new_code: 'wip', rewritten: 7 });
    expect(records.renames.at(-1)).toMatchObject({ kind: 'status', from: 'ip', to: 'wip' });
    const doc = await store.load();
    expect(doc.transitions.Shot).toEqual([{ from: 'wip', to: ['fin'], roles: [] }]);
    // records had the renamed definitions before the cascade ran
    expect((records.applied.at(-1)!.snapshot.statuses as { code: string }[]).map((s) => s.code).filter((c) => !builtinStatusType(c))).toEqual(['wip', 'fin']);
    expect(store.events.at(-1)).toMatchObject({
      entity_type: 'Schema.Status',
      action: 'update',
      changes: { rename: { old_code: 'ip', new_code: 'wip', rewritten: 7 } },
    });
    expect(store.journal.every((j) => j.done)).toBe(true);
    expect((await rejects(service.change('renameStatus', ADMIN, req({ new_code: 'fin' }, { code: 'wip' })))).code).toBe('duplicate_code');
  });

  it('step, option and entity-type renames rewrite workflows, templates and links', async () => {
    await setup();
    await service.change('renameStep', ADMIN, req({ new_code: 'compositing' }, { code: 'comp' }));
    await service.change('renameOption', ADMIN, req({ from: 'a', to: 'anamorphic' }, { entityCode: 'Shot', fieldCode: 'lens' }));
    await service.change('createEntityType', ADMIN, req({ code: 'Cam', name: 'Camera' }));
    await service.change('createField', ADMIN, req({ code: 'shot', name: 'Shot', type: 'link', link_types: ['Cam'] }, { entityCode: 'Shot' }));
    await service.change(
      'setTaskTemplates',
      ADMIN,
      req({ templates: [{ code: 'cam', name: 'Cam', entity_type: 'Cam', tasks: [{ name: 'C', step: 'compositing' }] }] }),
    );
    await service.change('renameEntityTypeCode', ADMIN, req({ new_code: 'Camera' }, { code: 'Cam' }));
    const doc = await store.load();
    expect(doc.workflows[0]!.schemas).toEqual([{ option: 'anamorphic', steps: ['compositing'] }]);
    expect(doc.task_templates).toEqual([
      { code: 'cam', name: 'Cam', entity_type: 'Camera', tasks: [{ name: 'C', step: 'compositing', estimate_minutes: null }] },
    ]);
    expect(doc.entity_types.find((t) => t.code === 'Shot')!.fields.find((f) => f.code === 'shot')!.link_types).toEqual(['Camera']);
    expect(records.renames.map((r) => [r.kind, r.entityType, r.field, r.from, r.to])).toEqual([
      ['step', '', '', 'comp', 'compositing'],
      ['option', 'Shot', 'lens', 'a', 'anamorphic'],
      ['entity_type', 'Cam', '', 'Cam', 'Camera'],
    ]);
    expect((await rejects(service.change('renameOption', ADMIN, req({ from: 'Admin', to: 'Boss' }, { entityCode: 'User', fieldCode: 'role' })))).code).toBe(
      'builtin',
    );
  });

  it('an unfinished earlier rename is cascaded before a later one', async () => {
    await setup();
    faults.crash = true;
    await expect(service.change('renameStatus', ADMIN, req({ new_code: 'wip' }, { code: 'ip' }))).rejects.toThrow('crashed after journal');
    faults.crash = false;
    await service.change('renameStatus', ADMIN, req({ new_code: 'active' }, { code: 'wip' }));
    expect(records.renames.map((r) => `${r.from}>${r.to}`)).toEqual(['ip>wip', 'wip>active']);
    expect(await store.pendingRenames()).toEqual([]);
  });

  it('a crash between the journal and the cascade is completed by the next sync, once', async () => {
    await setup();
    faults.crash = true;
    await expect(service.change('renamePriority', ADMIN, req({ new_code: 'x' }, { code: 'nope' }))).rejects.toThrow(/does not exist/);
    await service.change('createPriority', ADMIN, req({ code: 'hi', name: 'Hi', rank: 1 }));
    await expect(service.change('renamePriority', ADMIN, req({ new_code: 'urgent' }, { code: 'hi' }))).rejects.toThrow('crashed after journal');
    expect(records.renames).toHaveLength(0);
    expect(await store.pendingRenames()).toHaveLength(1);
    faults.crash = false;
    records.rewrites = 4;
    const restarted = new SchemaService({ store, records, faults, logger: createLogger('schema-spec', 'silent') });
    await restarted.sync();
    expect(records.renames).toHaveLength(1);
    expect(await store.pendingRenames()).toHaveLength(0);
    expect(store.events.at(-1)).toMatchObject({ entity_type: 'Schema.Priority', changes: { rename: { old_code: 'hi', new_code: 'urgent', rewritten: 4 } } });
    await restarted.sync();
    expect(records.renames).toHaveLength(1);
  });
});

describe('catalog reads', () => {
  it('applications: the whole catalog, or the project and step lists; a missing project is 404, a bad id 422', async () => {
    await service.change(
      'setApplications',
      ADMIN,
      req({
        applications: [
          { code: 'maya', label: 'Maya' },
          { code: 'nuke', label: 'Nuke' },
          { code: 'houdini', label: 'Houdini' },
        ],
      }),
    );
    const codes = (v: unknown) => (v as { applications: { code: string }[] }).applications.map((a) => a.code);
    expect(codes(await service.getApplications(undefined, undefined))).toEqual(['maya', 'nuke', 'houdini']);
    const p = newId();
    records.overrides[p] = { applications: ['nuke', 'maya'], applicationsByStep: { comp: ['nuke'], fx: [] } };
    expect(codes(await service.getApplications(p, undefined))).toEqual(['maya', 'nuke']);
    expect(codes(await service.getApplications(p, 'comp'))).toEqual(['nuke']);
    expect(codes(await service.getApplications(p, 'fx'))).toEqual([]);
    expect(codes(await service.getApplications(p, 'anim'))).toEqual(['maya', 'nuke']);
    expect((await rejects(service.getApplications(newId(), undefined))).kind).toBe('not_found');
    expect((await rejects(service.getApplications('nope', undefined))).problems[0]!.loc).toEqual(['query', 'project_id']);
  });

  it('tools: built-in defaults until set; active tools need a project', async () => {
    const tools = (await service.getTools()) as { tools: { tool: string }[] };
    expect(tools.tools.map((t) => t.tool)).toEqual(expect.arrayContaining(['mtoa', 'htoa', 'redshift', 'renderman', 'vray', 'yeti', 'mgear']));
    const p = newId();
    records.overrides[p] = { tools: ['mtoa/5.4.5', 'yeti/4.2.11', 'mtoa/0.0.0'] };
    const active = (await service.getActiveTools(p, undefined)) as { tools: { tool: string; version: string }[] };
    expect(active.tools.map((t) => `${t.tool}/${t.version}`)).toEqual(['mtoa/5.4.5', 'yeti/4.2.11']);
    expect((await rejects(service.getActiveTools(undefined, undefined))).problems[0]!.loc).toEqual(['query', 'project_id']);
    await service.change('setTools', ADMIN, req({ tools: [{ tool: 'golaem', label: 'Golaem', variants: [{ version: '9.1' }] }] }));
    expect(((await service.getActiveTools(p, undefined)) as { tools: unknown[] }).tools).toEqual([]);
  });
});
