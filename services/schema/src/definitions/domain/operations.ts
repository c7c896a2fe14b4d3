/**
 * The schema service's half of the operations table (SCHEMA_OPERATIONS in lib-platform names every
 * operation, its RPC, route, role and body): for each change, the path codes it needs, whether it
 * counts records' usage first and removes codes, and its editor function, typed by the table's body.
 * SchemaService.change runs any of them the same way (docs/architecture.md, "The schema service").
 */
import { AppError, SCHEMA_OPERATIONS, type SchemaChangeName } from '@reelbase/lib-platform';
import type { z } from 'zod';
import * as E from './schema.editor.js';
import type { Edit } from './schema.editor.js';
import type { SchemaDoc, SchemaUsage } from './schema.types.js';

/** What a route addresses: the path codes and the body. */
export interface SchemaRequest {
  body: string;
  /** `{code}` of the path. */
  code: string;
  /** `{field_code}` of the field routes. */
  fieldCode: string;
  /** `{entity_code}` of the path, or the `entity_code` query parameter of a status delete. */
  entityCode: string;
}

/** The parsed body of change `K` (`undefined` when it takes none). */
type BodyOf<K extends SchemaChangeName> = (typeof SCHEMA_OPERATIONS)[K]['body'] extends z.ZodType<infer T> ? T : undefined;

/**
 * One change: its body (the table's) checked first, then its path codes and usage, then edited under
 * the definitions lock.
 */
export interface ChangeOperation<Body, Codes> {
  /** The path codes it needs (a missing one is a 422). */
  codes?: (r: SchemaRequest) => Codes;
  /** Counts records' usage before the change (always, or when the body asks for it). */
  usage?: true | ((body: Body) => boolean);
  /** The change may remove codes records use (records re-counts them under its write lock). */
  removes?: true;
  edit: (doc: SchemaDoc, body: Body, codes: Codes, usage: SchemaUsage) => Edit<unknown>;
}

/** A change with its types erased, as SchemaService.change runs it. */
export interface AnyChangeOperation {
  codes?: (r: SchemaRequest) => unknown;
  usage?: true | ((body: never) => boolean);
  removes?: true;
  edit: (doc: SchemaDoc, body: never, codes: never, usage: SchemaUsage) => Edit<unknown>;
}

const change = <Body = undefined, Codes = undefined>(op: ChangeOperation<Body, Codes>): ChangeOperation<Body, Codes> => op;

function requireCode(value: string, name: string): string {
  if (!value) throw AppError.invalid([{ loc: ['path', name], msg: 'Field required', type: 'missing' }]);
  return value;
}

/** `{entity_code}` (or `{code}`) of an entity type route. */
const entityType = (r: SchemaRequest) => requireCode(r.entityCode || r.code, 'entity_code');
/** `{code}` of a definition route. */
const code = (r: SchemaRequest) => requireCode(r.code, 'code');
/** `{entity_code}` and `{field_code}` of a field route. */
const field = (r: SchemaRequest) => ({ type: requireCode(r.entityCode, 'entity_code'), field: requireCode(r.fieldCode || r.code, 'field_code') });

/** A change of the whole body (no path codes). */
const whole = <Body>(edit: (doc: SchemaDoc, body: Body) => Edit<unknown>) => change<Body>({ edit: (doc, b) => edit(doc, b) });
/** A change of the definition `{code}` with a body. */
const ofCode = <Body>(edit: (doc: SchemaDoc, code: string, body: Body) => Edit<unknown>) =>
  change<Body, string>({ codes: code, edit: (doc, b, c) => edit(doc, c, b) });
/** A delete of the definition `{code}`: refused while records use it. */
const removal = (edit: (doc: SchemaDoc, code: string, usage: SchemaUsage) => Edit<unknown>) =>
  change({ codes: code, usage: true, removes: true, edit: (doc, _, c, usage) => edit(doc, c, usage) });

/** Every change of SCHEMA_OPERATIONS. */
const CHANGES: { [K in SchemaChangeName]: ChangeOperation<BodyOf<K>, any> } = {
  createEntityType: whole(E.createEntityType),
  renameEntityType: change({ codes: entityType, edit: (doc, body, c) => E.renameEntityType(doc, c, body) }),
  deleteEntityType: change({ codes: entityType, usage: true, removes: true, edit: (doc, _, c, usage) => E.deleteEntityType(doc, c, usage) }),
  renameEntityTypeCode: change({
    codes: (r) => requireCode(r.code || r.entityCode, 'code'),
    edit: (doc, body, c) => E.renameEntityTypeCode(doc, c, body),
  }),
  createField: change({
    codes: (r) => requireCode(r.entityCode, 'entity_code'),
    edit: (doc, body, type) => E.createField(doc, type, body),
  }),
  updateField: change({
    codes: field,
    usage: (body) => body.options !== undefined,
    removes: true,
    edit: (doc, body, c, usage) => E.updateField(doc, c.type, c.field, body, usage),
  }),
  deleteField: change({ codes: field, usage: true, removes: true, edit: (doc, _, c, usage) => E.deleteField(doc, c.type, c.field, usage) }),
  renameOption: change({ codes: field, edit: (doc, body, c) => E.renameOption(doc, c.type, c.field, body) }),

  createStatus: whole(E.createStatus),
  updateStatus: ofCode(E.updateStatus),
  deleteStatus: change({
    codes: (r) => ({ code: code(r), entityType: r.entityCode || undefined }),
    usage: true,
    removes: true,
    edit: (doc, _, c, usage) => E.deleteStatus(doc, c.code, c.entityType, usage),
  }),
  renameStatus: ofCode(E.renameStatus),

  createStep: whole(E.createStep),
  reorderSteps: whole(E.reorderSteps),
  updateStep: ofCode(E.updateStep),
  deleteStep: removal(E.deleteStep),
  renameStep: ofCode(E.renameStep),

  createWorkflow: whole(E.createWorkflow),
  deleteWorkflow: change({ edit: (doc, body) => E.deleteWorkflow(doc, body.code) }),
  setTransitions: whole(E.setTransitions),
  setTaskTemplates: whole(E.setTaskTemplates),

  createPriority: whole(E.createPriority),
  updatePriority: ofCode(E.updatePriority),
  deletePriority: removal(E.deletePriority),
  renamePriority: ofCode(E.renamePriority),

  setBranding: whole(E.setBranding),
  setApplications: whole(E.setApplications),
  setTools: whole(E.setTools),
};

/** Every change of SCHEMA_OPERATIONS with its types erased, as SchemaService.change runs it. */
export const SCHEMA_CHANGES: Record<SchemaChangeName, AnyChangeOperation> = CHANGES as Record<SchemaChangeName, AnyChangeOperation>;
