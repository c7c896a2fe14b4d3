/**
 * A create with `task_template` (docs/api-notes.md): the record and one Task per task of the
 * template, each with its event, in one transaction that reads the schema version first.
 */
import { AppError, clipEcho, newId, type EventAction, type InProcessBus, type Principal, type Problem } from '@reelbase/lib-platform';
import { createChanges } from '../../kernel/domain/record.changes.js';
import { actorOf } from '../../kernel/domain/record.event.js';
import { toView, type IdempotencyClaim, type OutboxEvent, type RecordsBusTopics, type RecordValues } from '../../kernel/domain/record.ports.js';
import { projectMissing, projectNotFound, requiresProject } from '../../kernel/domain/record.rules.js';
import type { CreateInput, DataObject, RecordView } from '../../kernel/domain/record.types.js';
import { checkTimeLogCreate } from '../../kernel/domain/timelog.rules.js';
import { withAuthor } from '../../kernel/domain/review.rules.js';
import type { SchemaCache } from '../../kernel/domain/schema.snapshot.js';
import { checkCreate, type LinkRef } from '../../kernel/domain/schema.validator.js';
import { checkProject, foreignVersions, linkNotFound } from './record.checks.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';
import type { RecordStore } from './core.ports.js';

/** What a template create needs of the record service. */
export interface TemplateWriter {
  store: RecordStore;
  schemas: SchemaCache;
  event(record: RecordView, action: EventAction, principal: Principal, changes: DataObject): OutboxEvent;
  bus: InProcessBus<RecordsBusTopics>;
}

/**
 * A create with `task_template`: the record and one Task per task of the template, each with
 * its event, in one transaction that reads the schema version first.
 */
export async function createWithTemplate(w: TemplateWriter, input: CreateInput, given: DataObject, base: Problem[], principal: Principal): Promise<RecordView> {
  const projectId = input.projectId ?? null;
  const createdBy = actorOf(principal);
  const reader = membershipOf(principal);
  const outcome = await w.store.transaction(async (tx) => {
    const schema = await w.schemas.at(await tx.schemaVersion(), () => tx.loadSchema());
    const problems = [...base];
    let data = given;
    let links: LinkRef[] = [];
    if (schema.version === 0) {
      if (projectId === null && requiresProject(input.entityType)) problems.push(projectMissing(input.entityType));
    } else {
      const checked = checkCreate(schema, { entityType: input.entityType, projectId, status: input.status, data: given });
      problems.push(...checked.problems);
      ({ data, links } = checked);
    }
    const template = schema.taskTemplates.get(input.taskTemplate!);
    if (!template || template.entity_type !== input.entityType) {
      problems.push({ loc: ['task_template'], msg: `no task template '${clipEcho(input.taskTemplate!)}' for ${input.entityType}`, type: 'task_template' });
    }
    problems.push(...(await tx.deadLinks(links, reader)).map(linkNotFound));
    if (input.entityType === 'Playlist') problems.push(...(await foreignVersions(tx, projectId, data, reader)));
    if (problems.length) throw AppError.invalid(problems);
    // Whether the writer may read the project (the inserts check that it is live).
    if (reader !== null && projectId !== null) await checkProject(tx, projectId, reader);
    if (input.entityType === 'TimeLog') checkTimeLogCreate(principal, data);
    data = withAuthor(principal, input.entityType, data, schema);

    const events: OutboxEvent[] = [];
    // The record's statement stores the claimed key's answer (the record) too; its tasks' do not.
    const insert = async (entityType: string, values: RecordValues, id: string, key?: IdempotencyClaim): Promise<RecordView> => {
      const draft: RecordView = { id, entityType, createdBy, createdAt: '', updatedAt: '', ...values };
      const event = w.event(draft, 'create', principal, createChanges(draft));
      const row = await tx.insertWithEvent({ id, entityType, createdBy, ...values }, event, key);
      if (!row) throw AppError.invalid([projectNotFound(projectId!)]);
      events.push({ ...event, payload: { ...event.payload, occurred_at: row.updatedAt } });
      return toView(row);
    };
    const values = { projectId, status: input.status ?? null, active: input.active ?? true, thumbnailId: input.thumbnailId ?? null };
    const record = await insert(input.entityType, { ...values, data }, input.id ?? newId(), input.idempotency);
    for (const [i, task] of template!.tasks.entries()) {
      const taskData: DataObject = { name: task.name, step: task.step, entity: { type: record.entityType, id: record.id } };
      if (task.estimate_minutes !== undefined && task.estimate_minutes !== null) taskData.estimate_minutes = task.estimate_minutes;
      let checkedTask = { data: taskData, problems: [] as Problem[] };
      if (schema.version > 0) checkedTask = checkCreate(schema, { entityType: 'Task', projectId, status: null, data: taskData });
      if (checkedTask.problems.length) {
        throw AppError.invalid(
          checkedTask.problems.map((p) => ({ ...p, loc: ['task_template', 'tasks', i, ...p.loc.slice(1)], msg: `template task '${task.name}': ${p.msg}` })),
        );
      }
      await insert('Task', { projectId, status: null, active: true, thumbnailId: null, data: checkedTask.data }, newId());
    }
    return { record, events };
  });
  for (const event of outcome.events) w.bus.emit('committed', event.payload);
  return outcome.record;
}
