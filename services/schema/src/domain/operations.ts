/**
 * The schema service's half of the operations table (SCHEMA_OPERATIONS in lib-platform names every
 * operation, its RPC, route and role): for each change, the body it takes, the path codes it
 * needs, whether it counts records' usage first and removes codes, and its editor function.
 * SchemaService.change runs any of them the same way (docs/architecture.md, "The schema service").
 */
import { AppError, type SchemaChangeName } from '@reelbase/lib-platform';
import type { z } from 'zod';
import * as B from './bodies.js';
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

/** One change: checked in this order (body, path codes, usage), then edited under the definitions lock. */
export interface ChangeOperation<Body, Codes> {
  /** The body's schema; none: the body is not read. */
  body?: z.ZodType<Body>;
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
  body?: z.ZodType;
  codes?: (r: SchemaRequest) => unknown;
  usage?: true | ((body: never) => boolean);
  removes?: true;
  edit: (doc: SchemaDoc, body: never, codes: never, usage: SchemaUsage) => Edit<unknown>;
}

const change = <Body = undefined, Codes = undefined>(op: ChangeOperation<Body, Codes>): AnyChangeOperation => op as AnyChangeOperation;

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
const whole = <Body>(body: z.ZodType<Body>, edit: (doc: SchemaDoc, body: Body) => Edit<unknown>) => change({ body, edit: (doc, b) => edit(doc, b) });
/** A change of the definition `{code}` with a body. */
const ofCode = <Body>(body: z.ZodType<Body>, edit: (doc: SchemaDoc, code: string, body: Body) => Edit<unknown>) =>
  change({ body, codes: code, edit: (doc, b, c) => edit(doc, c, b) });
/** A delete of the definition `{code}`: refused while records use it. */
const removal = (edit: (doc: SchemaDoc, code: string, usage: SchemaUsage) => Edit<unknown>) =>
  change({ codes: code, usage: true, removes: true, edit: (doc, _, c, usage) => edit(doc, c, usage) });

/** Every change of SCHEMA_OPERATIONS. */
export const SCHEMA_CHANGES: Record<SchemaChangeName, AnyChangeOperation> = {
  createEntityType: whole(B.EntityTypeBody, E.createEntityType),
  renameEntityType: change({ body: B.RenameBody, codes: entityType, edit: (doc, body, c) => E.renameEntityType(doc, c, body) }),
  deleteEntityType: change({ codes: entityType, usage: true, removes: true, edit: (doc, _, c, usage) => E.deleteEntityType(doc, c, usage) }),
  renameEntityTypeCode: change({
    body: B.CodeRenameBody,
    codes: (r) => requireCode(r.code || r.entityCode, 'code'),
    edit: (doc, body, c) => E.renameEntityTypeCode(doc, c, body),
  }),
  createField: change({
    body: B.FieldBody,
    codes: (r) => requireCode(r.entityCode, 'entity_code'),
    edit: (doc, body, type) => E.createField(doc, type, body),
  }),
  updateField: change({
    body: B.FieldPatch,
    codes: field,
    usage: (body) => body.options !== undefined,
    removes: true,
    edit: (doc, body, c, usage) => E.updateField(doc, c.type, c.field, body, usage),
  }),
  deleteField: change({ codes: field, usage: true, removes: true, edit: (doc, _, c, usage) => E.deleteField(doc, c.type, c.field, usage) }),
  renameOption: change({ body: B.OptionRenameBody, codes: field, edit: (doc, body, c) => E.renameOption(doc, c.type, c.field, body) }),

  createStatus: whole(B.StatusBody, E.createStatus),
  updateStatus: ofCode(B.StatusPatch, E.updateStatus),
  deleteStatus: change({
    codes: (r) => ({ code: code(r), entityType: r.entityCode || undefined }),
    usage: true,
    removes: true,
    edit: (doc, _, c, usage) => E.deleteStatus(doc, c.code, c.entityType, usage),
  }),
  renameStatus: ofCode(B.CodeRenameBody, E.renameStatus),

  createStep: whole(B.StepBody, E.createStep),
  reorderSteps: whole(B.StepReorder, E.reorderSteps),
  updateStep: ofCode(B.StepPatch, E.updateStep),
  deleteStep: removal(E.deleteStep),
  renameStep: ofCode(B.CodeRenameBody, E.renameStep),

  createWorkflow: whole(B.WorkflowBody, E.createWorkflow),
  deleteWorkflow: change({ body: B.WorkflowBody.partial().required({ code: true }), edit: (doc, body) => E.deleteWorkflow(doc, body.code) }),
  setTransitions: whole(B.TransitionsBody, E.setTransitions),
  setTaskTemplates: whole(B.TaskTemplatesBody, E.setTaskTemplates),

  createPriority: whole(B.PriorityBody, E.createPriority),
  updatePriority: ofCode(B.PriorityPatch, E.updatePriority),
  deletePriority: removal(E.deletePriority),
  renamePriority: ofCode(B.CodeRenameBody, E.renamePriority),

  setBranding: whole(B.BrandingBody, E.setBranding),
  setApplications: whole(B.ApplicationsBody, E.setApplications),
  setTools: whole(B.ToolsBody, E.setTools),
};
